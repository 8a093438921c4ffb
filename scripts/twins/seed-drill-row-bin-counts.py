"""Twin of seed-drill-row-bin-counts: landing = release + v t + b sin(3 x); bin counts by floor (piecewise
constant) plus a smooth spacing term; central differences in float64, step 1e-6."""
import numpy as np

ENTRY = "sow.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "shift", ["release"], ["g"])
SEEDS, BINS = 8, 4


def loss(params):
    x = params[0] + 0.8 * 0.35
    land = x + 0.05 * np.sin(3.0 * x)
    b = np.clip(np.floor(land / 0.5).astype(int), 0, BINS - 1)
    counts = np.bincount(b, minlength=BINS).astype(np.float64)
    return float(np.sum((counts - SEEDS / BINS) ** 2) + 0.5 * np.sum((np.diff(land) - 0.25) ** 2))
