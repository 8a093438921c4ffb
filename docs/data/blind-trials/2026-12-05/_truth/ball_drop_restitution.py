"""Truth for ball_drop_restitution: twin of the printed loss (video misfit of the bouncing rollout)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "ball_drop_restitution", "train.py")
N, STEPS, DT, G = 8, 60, 0.01, 9.81
rng = np.random.default_rng(4)
h0_np = rng.uniform(0.4, 0.9, N)
v0_true = rng.uniform(-0.5, 0.5, N)
e_true = rng.uniform(0.55, 0.85, N)


def sim(h0, v0, e):
    y, v, out = h0.copy(), v0.copy(), []
    for _ in range(STEPS):
        v = v - G * DT
        y = y + DT * v
        hit = y < 0.0
        y = np.where(hit, -y, y)
        v = np.where(hit, -e * v, v)
        out.append(y.copy())
    return out


FRAMES = [fr.astype(np.float32).astype(np.float64) for fr in sim(h0_np, v0_true, e_true)]
H0 = h0_np.astype(np.float32).astype(np.float64)


def f(params):
    ys = sim(H0, params[1], params[0])
    return sum(np.sum((a - b) ** 2) for a, b in zip(ys, FRAMES)) / (STEPS * N)


if __name__ == "__main__":
    common.install(optim=True)
    common.run_script(SCRIPT)
    ev = common.EVENTS
    its = [(k + 1, ev[k]["params"], ev[k]["grad"]) for k in (0, 1, 9, len(ev) - 1)]
    common.compare("ball_drop_restitution", its, f, note=f"{len(ev)} SGD steps recorded; params [e, v0]")
