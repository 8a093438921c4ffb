"""Float64 central-difference check of the gradients consumed by the Adam step."""
import sys

sys.dont_write_bytecode = True  # keep the variant folders free of __pycache__

import numpy as np
import warp as wp
import warp.optim

from fd_trial import case_folder, fd_grad, load_variant, rel_err

HERE = case_folder("coordinate-mlp-signal-field")
ITERS = 3
ORDER = ["w1", "b1", "gain", "w2", "b2"]


def np_loss(flat, sizes, feats, y):
    parts = np.split(flat, np.cumsum(sizes)[:-1])
    w1, b1, gain, w2, b2 = parts
    hidden = b1.size
    h = np.tanh(feats @ w1.reshape(hidden, -1).T + b1)
    pred = (h * gain) @ w2 + b2[0]
    return float(np.mean((pred - y) ** 2))


records = []
_orig_step = wp.optim.Adam.step


def recording_step(self, grad):
    records.append((np.concatenate([p.numpy().astype(np.float64).ravel() for p in self.params]),
                    np.concatenate([g.numpy().astype(np.float64).ravel() for g in grad]),
                    [p.size for p in self.params]))
    return _orig_step(self, grad)


wp.optim.Adam.step = recording_step

for variant in ("buggy", "fixed"):
    records.clear()
    mod = load_variant(HERE, variant, "neural_field")
    mod.main(["--iters", str(ITERS)])
    feats, y = mod.make_data()
    for it, (p, g, sizes) in enumerate(records):
        ref = fd_grad(lambda q: np_loss(q, sizes, feats, y), p)
        gain_sl = slice(sizes[0] + sizes[1], sizes[0] + sizes[1] + sizes[2])
        print(f"{variant} iter {it + 1}: rel_err = {rel_err(g, ref):.3e}  (gain block {rel_err(g[gain_sl], ref[gain_sl]):.3e})")
