"""Reference gradient of hydrophone-array-polarity-weights, for the oracle only
(``script.reference`` in case.yaml; never given to an engine).

Twin of hydrophone-array-polarity-weights: straight-through estimator with the clipped identity
(hardtanh) surrogate for the sign, analytic in float64, plus the weight decay's exact gradient.

From the float64 NumPy twin ``scripts/twins/hydrophone-array-polarity-weights.py``
(written from the script alone, measured against the script's update at iterations 1-4 on Warp 1.19.0 and 1.12.1, ``scripts/twins/results-*.json``)."""

import numpy as np

P, S = 8, 32
_rng = np.random.default_rng(5)
SNAPS = _rng.normal(0.0, 1.0, (S, P))
WANTED = 0.25 * SNAPS @ np.where(np.arange(P) % 3 == 0, -1.0, 1.0)


def _grad(params):
    w = params[0]
    pol = np.where(w < 0.0, -1.0, 1.0)
    r = 0.25 * SNAPS @ pol - WANTED
    g = (2.0 / S) * 0.25 * (SNAPS.T @ r) * (np.abs(w) <= 1.0) + 2e-3 * w
    return [g]


def reference_gradient(params):
    """The gradient the update should consume at ``params`` (``{"latent": float64 ndarray}``)."""
    return {"latent": _grad([params["latent"]])[0]}
