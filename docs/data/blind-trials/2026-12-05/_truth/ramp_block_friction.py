"""Truth for ramp_block_friction: twin of the printed loss (position misfit of the sliding blocks)."""
import math, os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "ramp_block_friction", "train.py")
N, STEPS, DT, EPS, G = 6, 120, 0.01, 0.1, 9.81
A = math.radians(15.0)
GA, GN = float(np.float32(G * math.sin(A))), float(np.float32(G * math.cos(A)))
V0 = np.array([1.2, 1.5, 0.8, 1.0, 1.8, 1.3]).astype(np.float32).astype(np.float64)


def sim(mu, v0, ga, gn):
    x, v, out = np.zeros(N), v0.copy(), []
    for _ in range(STEPS):
        v = v + DT * (ga - mu * gn * np.tanh(np.clip(v / EPS, -20.0, 20.0)))
        x = x + DT * v
        out.append(x.copy())
    return out


SEEN = [s.astype(np.float32).astype(np.float64) for s in
        sim(np.array([0.35, 0.42, 0.5, 0.38, 0.6, 0.45]), np.array([1.2, 1.5, 0.8, 1.0, 1.8, 1.3]),
            G * math.sin(A), G * math.cos(A))]


def f(params):
    xs = sim(params[0], V0, GA, GN)
    return sum(np.sum((a - b) ** 2) for a, b in zip(xs, SEEN)) / (STEPS * N)


if __name__ == "__main__":
    common.install(update_kernels={"project_step": (0, [1])})
    common.run_script(SCRIPT)
    ev = common.EVENTS
    its = [(k + 1, ev[k]["params"], ev[k]["grad"]) for k in (0, 1, 9, len(ev) - 1)]
    common.compare("ramp_block_friction", its, f, note=f"{len(ev)} updates recorded (project_step)")
