"""Numerical kernels of the oracle: noise estimation and step selection.

Pure NumPy and the standard library (no Warp), so they are unit-tested
without running a Warp program. The subprocess worker
(:mod:`defects4warp.oracle.worker`) calls them with closures that evaluate the
variant's ``objective()``.

Sources
-------
* Central differences, their truncation error O(h^2) and the step
  ``h ~ eps^(1/3) * max(|x|, typical x)`` that balances truncation against
  rounding: Nocedal & Wright, *Numerical Optimization*, 2nd ed., sec. 8.1
  (eq. 8.8 and the discussion after it).
* Noise of a computed function from a difference table along a line
  (ECnoise): J. J. Moré and S. M. Wild, "Estimating computational noise",
  SIAM J. Sci. Comput. 33(3), 2011, sec. 2-3: the k-th differences of m+1
  equally spaced values, ``sigma_k = sqrt(gamma_k * mean((Delta^k f)^2))``
  with ``gamma_k = (k!)^2 / (2k)!``; the estimate is accepted at the first
  order k whose neighbours sigma_{k+1}, sigma_{k+2} lie within a factor 4 and
  whose differences change sign (their Algorithm 1 uses m = 8, k <= 6).
"""

from __future__ import annotations

import math

import numpy as np

#: Orders of the ECnoise difference table (Moré & Wild 2011 use 1..6).
ECNOISE_MAX_ORDER = 6


def gamma(k: int) -> float:
    """Moré & Wild's normalising constant ``(k!)^2 / (2k)!`` for order ``k``."""
    return math.factorial(k) ** 2 / math.factorial(2 * k)


def ecnoise(fvals, *, max_order: int = ECNOISE_MAX_ORDER, agree_factor: float = 4.0) -> dict:
    """Estimate the standard deviation of the noise of equally spaced values.

    Parameters
    ----------
    fvals : array_like, shape (m + 1,), float
        ``f(x + t * delta * p)`` for ``t = -m/2 .. m/2`` along one direction
        ``p`` (Moré & Wild 2011, sec. 3; m = 8 there and by default in the
        worker).
    max_order : int, default 6
        Highest difference order tried.
    agree_factor : float, default 4.0
        An order k is accepted when ``max/min`` of sigma_k, sigma_{k+1},
        sigma_{k+2} is at most this (Moré & Wild's test).

    Returns
    -------
    dict
        ``{"sigma": float, "order": int | None, "sigmas": [float], "method": str}``.
        ``method`` is ``"ecnoise"`` (accepted at ``order``), ``"constant"``
        (all values identical: sigma 0), ``"fallback-max"`` (no order passed
        the test: the largest sigma_k of orders >= 2, a conservative bound) or
        ``"nonfinite"`` (a value is NaN/inf: sigma is inf).
    """
    f = np.asarray(fvals, dtype=np.float64)
    if not np.all(np.isfinite(f)):
        return {"sigma": math.inf, "order": None, "sigmas": [], "method": "nonfinite"}
    if np.all(f == f[0]):
        return {"sigma": 0.0, "order": None, "sigmas": [0.0] * max_order, "method": "constant"}
    sigmas, signs = [], []
    d = f.copy()
    for k in range(1, max_order + 1):
        d = np.diff(d)
        sigmas.append(math.sqrt(gamma(k) * float(np.mean(d * d))))
        signs.append(bool(np.any(d > 0) and np.any(d < 0)))
    for k in range(0, max_order - 2):
        trio = sigmas[k:k + 3]
        lo, hi = min(trio), max(trio)
        if lo > 0 and hi <= agree_factor * lo and signs[k]:
            return {"sigma": sigmas[k], "order": k + 1, "sigmas": sigmas, "method": "ecnoise"}
    return {"sigma": max(sigmas[1:]), "order": None, "sigmas": sigmas, "method": "fallback-max"}


def initial_step(x: float, scale: float, eps: float) -> float:
    """The starting central-difference step ``eps^(1/3) * max(|x|, scale)``
    (Nocedal & Wright 2nd ed., sec. 8.1)."""
    return eps ** (1.0 / 3.0) * max(abs(float(x)), float(scale))


def param_scale(values) -> float:
    """Typical magnitude of one parameter array: the mean of ``|x|``, or 1.0
    when the array is all zeros (then the step is absolute)."""
    v = np.abs(np.asarray(values, dtype=np.float64))
    m = float(v.mean()) if v.size else 0.0
    return m if m > 0 and math.isfinite(m) else 1.0


def pick_estimate(estimates: dict, noise: float) -> tuple:
    """Choose the central difference among steps where neighbours agree best.

    Parameters
    ----------
    estimates : dict[float, float]
        Effective half-step h -> central difference D(h), for steps forming a
        geometric ladder (ratio 4 in the worker).
    noise : float
        Noise bound of the objective (same units as f).

    Returns
    -------
    (value, h, disagreement) : tuple[float, float, float]
        Among adjacent pairs (h_a < h_b) the one with the smallest
        ``|D(h_a) - D(h_b)|`` wins ("re-measured at the step where the two
        estimates agree best"); ``value`` is D at the larger step of that pair
        when the pair agrees within the noise of both (less noise), else at
        the smaller step (less truncation). ``disagreement`` is
        ``|D(h_a) - D(h_b)|``, used as the truncation part of the item's
        uncertainty.
    """
    hs = sorted(h for h, v in estimates.items() if math.isfinite(v))
    if not hs:
        return math.nan, math.nan, math.inf
    if len(hs) == 1:
        return estimates[hs[0]], hs[0], math.inf
    best = None
    for a, b in zip(hs[:-1], hs[1:]):
        dis = abs(estimates[a] - estimates[b])
        if best is None or dis < best[2]:
            best = (a, b, dis)
    a, b, dis = best
    if dis <= noise / a + noise / b:
        return estimates[b], b, dis
    return estimates[a], a, dis


def unit_ulp(value: float, dtype) -> float:
    """One unit in the last place of ``value`` in ``dtype`` (``np.spacing``),
    the floor of the objective's noise."""
    return float(abs(np.spacing(np.asarray(value, dtype=dtype))))
