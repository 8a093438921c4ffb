"""Truth for hover_thrust_schedule (straight-through surrogate): the twin's surrogate gradient is
d(tracking)/d(level) at level = quantize(u) (float64 central differences of the twin's tracking term in
the continuous thrust level), times the straight-through factor 1, plus the exact gradient of the effort
term 2 * EFFORT / T * u. The objective column is the twin's printed loss (quantised forward)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "hover_thrust_schedule", "train.py")
T, DT, G, DRAG, LEVEL, EFFORT = 30, 0.1, 1.0, 0.3, 0.25, 0.01
REF = np.array([float(np.float32((1.0 - np.exp(-0.8 * t * DT)) * 1.5)) for t in range(1, T + 1)])


def q(u):
    return np.floor(u / LEVEL + 0.5) * LEVEL


def tracking(levels):
    z = vz = 0.0
    out = 0.0
    for t in range(T):
        a = levels[t] - G - DRAG * vz
        vz = vz + DT * a
        z = z + DT * vz
        out += (z - REF[t]) ** 2 / T
    return out


def f(params):
    u = params[0]
    return tracking(q(u)) + EFFORT / T * np.sum(u ** 2)


def surrogate(params):
    u = params[0]
    g_track = common.fd_gradient(lambda p: tracking(p[0]), [q(u)])[0]
    return [g_track + 2.0 * EFFORT / T * u]


if __name__ == "__main__":
    common.install(optim=True)
    common.run_script(SCRIPT)
    ev = common.EVENTS
    its = [(k + 1, ev[k]["params"], ev[k]["grad"]) for k in (0, 1, 9, len(ev) - 1)]
    common.compare("hover_thrust_schedule", its, f, grad_true=surrogate,
                   note=f"{len(ev)} Adam steps recorded; truth = straight-through surrogate gradient")
    print("# plain FD of the quantised objective at iteration 1 (what FD sees), first 6:",
          np.array2string(common.fd_gradient(f, [np.asarray(ev[0]['params'][0])])[0][:6], precision=6),
          " smooth term alone:", np.array2string((2 * EFFORT / T * ev[0]['params'][0])[:6], precision=6))
