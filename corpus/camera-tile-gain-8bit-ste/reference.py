"""Reference gradient of camera-tile-gain-8bit-ste, for the oracle only
(``script.reference`` in case.yaml; never given to an engine).

Twin of camera-tile-gain-8bit-ste: the straight-through surrogate gradient, analytic in float64.
Forward: mean (round(255 clamp(g_t r)) / 255 - ref)^2; backward: d adc/dx := 1 (the deliberate
surrogate), clamp slope 1 inside (0, 1) (no pixel sits on a bound here).

From the float64 NumPy twin ``scripts/twins/camera-tile-gain-8bit-ste.py``
(written from the script alone, measured against the script's update at iterations 1-4 on Warp 1.19.0 and 1.12.1, ``scripts/twins/results-*.json``)."""

import numpy as np

S, T = 8, 4
_rng = np.random.default_rng(11)
RAD = _rng.uniform(0.1, 0.6, (S, S))
TOF = (np.arange(S)[:, None] // T) * (S // T) + np.arange(S)[None, :] // T
REF = np.round(np.clip(np.linspace(1.1, 1.4, 4)[TOF] * RAD, 0.0, 1.0) * 255.0) / 255.0


def _grad(params):
    g = params[0]
    x = g[TOF] * RAD
    inside = (x > 0.0) & (x < 1.0)
    q = np.round(np.clip(x, 0.0, 1.0) * 255.0) / 255.0
    per_pixel = 2.0 * (q - REF) * inside * RAD / (S * S)
    return [np.bincount(TOF.reshape(-1), per_pixel.reshape(-1), minlength=g.size)]


def reference_gradient(params):
    """The gradient the update should consume at ``params`` (``{"gain": float64 ndarray}``)."""
    return {"gain": _grad([params["gain"]])[0]}
