"""Truth for hailstone_drag_fall: twin of the printed loss. The twin's objective is differentiable at
v0 = 0 (|v| v is C^1), so its central differences are finite there."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "hailstone_drag_fall", "train.py")
N, STEPS, DT = 6, 50, 0.02
GV = np.array([0.0, np.float32(-9.81), 0.0], dtype=np.float64)


def sim(c, v0):
    x, v, out = np.zeros((N, 3)), v0.copy(), []
    for _ in range(STEPS):
        speed = np.linalg.norm(v, axis=1, keepdims=True)
        v = v + DT * (GV - c[:, None] * speed * v)
        x = x + DT * v
        out.append(x.copy())
    return out


C_TRUE = np.array([0.08, 0.12, 0.2, 0.15, 0.3, 0.1])
V0_TRUE = np.array([[0.3, -0.5, 0.1], [-0.2, 0.4, 0.0], [0.1, -1.0, -0.2],
                    [0.0, 0.2, 0.3], [0.4, -0.3, 0.1], [-0.1, 0.0, -0.4]])
_g = np.array([0.0, -9.81, 0.0])


def _ref(c, v0):
    x, v, out = np.zeros((N, 3)), v0.copy(), []
    for _ in range(STEPS):
        speed = np.linalg.norm(v, axis=1, keepdims=True)
        v = v + DT * (_g - c[:, None] * speed * v)
        x = x + DT * v
        out.append(x.copy())
    return out


SEEN = [s.astype(np.float32).astype(np.float64) for s in _ref(C_TRUE, V0_TRUE)]


def f(params):
    xs = sim(params[0], params[1].reshape(N, 3))
    return sum(np.sum((a - b) ** 2) for a, b in zip(xs, SEEN)) / STEPS


if __name__ == "__main__":
    common.install(assign=True)
    common.run_script(SCRIPT)
    ev = common.EVENTS
    pairs = [(ev[2 * k], ev[2 * k + 1]) for k in range(len(ev) // 2)]
    its = [(k + 1, [pairs[k][0]["params"][0], pairs[k][1]["params"][0]],
            [pairs[k][0]["grad"][0], pairs[k][1]["grad"][0]]) for k in (0, 1)]
    common.compare("hailstone_drag_fall", its, f,
                   note=f"{len(pairs)} updates recorded (c.assign, v0.assign); params [c, v0]; after update 1 the params are NaN")
