"""Truth for pendulum_damping_fit: float64 twin of its printed loss (misfit + log prior)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "pendulum_damping_fit", "train.py")
N, STEPS, DT, GL, PW = 6, 50, 0.02, 9.81 / 0.75, 1.0e-3
theta0 = np.linspace(0.3, 0.8, N).astype(np.float32).astype(np.float64)
c_true = np.array([0.35, 0.5, 0.8, 0.6, 1.1, 0.45])


def observations():
    th, om, obs = theta0.copy(), np.zeros(N), []
    for _ in range(STEPS):
        om = om + DT * (-GL * np.sin(th) - c_true * om)
        th = th + DT * om
        obs.append(th.astype(np.float32).astype(np.float64))
    return obs


OBS = observations()


def f(params):
    log_c = params[0]
    c = np.exp(log_c)
    th, om, loss = theta0.copy(), np.zeros(N), 0.0
    for t in range(STEPS):
        om = om + DT * (-GL * np.sin(th) - c * om)
        th = th + DT * om
        loss += np.sum((th - OBS[t]) ** 2) / (STEPS * N)
    return loss + PW * np.sum((log_c - np.log(0.5)) ** 2)


if __name__ == "__main__":
    common.install(update_kernels={"gradient_step": (0, [1])})
    common.run_script(SCRIPT)
    ev = common.EVENTS
    its = [(k + 1, ev[k]["params"], ev[k]["grad"]) for k in (0, 1, 9, len(ev) - 1)]
    common.compare("pendulum_damping_fit", its, f, note=f"{len(ev)} updates recorded")
