"""Truth for ground_spring_stiffness_adjoint: twin of the printed misfit with the equilibrium solved
exactly (np.linalg.solve) instead of by 150 relaxation steps."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "ground_spring_stiffness_adjoint", "train.py")
N, C = 10, 0.5
rng = np.random.default_rng(11)
KG_TRUE = rng.uniform(1.0, 2.5, N)
LOAD = rng.uniform(0.5, 1.5, N)


def stiffness(kg):
    k = np.diag(kg + 2 * C) - C * (np.eye(N, k=1) + np.eye(N, k=-1))
    k[0, 0] -= C
    k[-1, -1] -= C
    return k


MEAS = np.linalg.solve(stiffness(KG_TRUE), LOAD)


def f(params):
    u = np.linalg.solve(stiffness(params[0]), LOAD)
    return np.mean((u - MEAS) ** 2)


if __name__ == "__main__":
    common.install(update_kernels={"stiffness_step": (0, [1])})
    common.run_script(SCRIPT)
    ev = common.EVENTS
    its = [(k + 1, ev[k]["params"], ev[k]["grad"]) for k in (0, 1, 9, len(ev) - 1)]
    common.compare("ground_spring_stiffness_adjoint", its, f, note=f"{len(ev)} outer updates recorded (stiffness_step)")
