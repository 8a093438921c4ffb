"""Truth for spring_chain_checkpointed: twin of the printed loss (shape error after the 60-step rollout)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "spring_chain_checkpointed", "train.py")
N, STEPS, DT, DAMP = 8, 60, 0.02, 0.1
X0 = np.linspace(0.2, -0.2, N).astype(np.float32).astype(np.float64)
TARGET = (0.05 * np.sin(np.arange(N))).astype(np.float32).astype(np.float64)


def f(params):
    k = params[0]
    x, v = X0.copy(), np.zeros(N)
    for _ in range(STEPS):
        xl = np.concatenate([[0.0], x[:-1]])
        fo = -k * (x - xl) - DAMP * v
        fo[:-1] += k[1:] * (x[1:] - x[:-1])
        v = v + DT * fo
        x = x + DT * v
    return np.mean((x - TARGET) ** 2)


if __name__ == "__main__":
    common.install(optim=True)
    common.run_script(SCRIPT)
    ev = common.EVENTS
    its = [(k + 1, ev[k]["params"], ev[k]["grad"]) for k in (0, 1, 9, len(ev) - 1)]
    common.compare("spring_chain_checkpointed", its, f, note=f"{len(ev)} SGD steps recorded")
