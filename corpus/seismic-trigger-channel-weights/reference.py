"""Reference gradient of seismic-trigger-channel-weights, for the oracle only
(``script.reference`` in case.yaml; never given to an engine).

Twin of seismic-trigger-channel-weights: Heaviside trigger with the fast-sigmoid surrogate derivative
1 / (1 + 5|v|)^2 (a deliberate surrogate), analytic in float64.

From the float64 NumPy twin ``scripts/twins/seismic-trigger-channel-weights.py``
(written from the script alone, measured against the script's update at iterations 1-4 on Warp 1.19.0 and 1.12.1, ``scripts/twins/results-*.json``)."""

import numpy as np

E, C = 40, 5
_rng = np.random.default_rng(17)
X = _rng.uniform(0.0, 1.0, (E, C))
LABEL = (X @ np.linspace(0.9, 0.1, C) > 0.5 * C * 0.5).astype(np.float64)


def _grad(params):
    v = X @ params[0] - 1.0
    fire = (v > 0.0).astype(np.float64)
    dv = 2.0 * (fire - LABEL) / (1.0 + 5.0 * np.abs(v)) ** 2 / E
    return [X.T @ dv]


def reference_gradient(params):
    """The gradient the update should consume at ``params`` (``{"w": float64 ndarray}``)."""
    return {"w": _grad([params["w"]])[0]}
