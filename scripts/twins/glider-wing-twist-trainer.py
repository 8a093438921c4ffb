"""Twin of glider-wing-twist-trainer: strip-theory lift and drag per station, squared deviation from an
elliptic share of the total lift plus drag; float64 model of a float32 script."""
import numpy as np

ENTRY = "optimise_twist.py"
ARGS = ["--iters", "4"]
HOOK = ("optim",)
N = 8
Y = np.linspace(-0.9, 0.9, N)
CHORD = (0.3 * np.sqrt(1.0 - Y * Y) + 0.1).astype(np.float32).astype(np.float64)
_ell = np.sqrt(1.0 - Y * Y)
ELL = (_ell / _ell.sum()).astype(np.float32).astype(np.float64)


def loss(params):
    a = 0.05 + params[0]
    cl = 6.28 * np.sin(a) / (1.0 + 0.3 * a * a)
    lift = CHORD * cl
    drag = CHORD * (0.01 + 0.05 * cl * cl)
    return float(np.sum((lift - 0.6 * ELL) ** 2 + drag))
