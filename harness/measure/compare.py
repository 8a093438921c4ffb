"""Comparing autodiff gradients with a truth, and naming the signature.

Pure NumPy: no Warp import, so every rule here is unit-tested on arrays with
known answers (tests/test_compare.py).

Tolerances
----------
An element agrees when ``|ad - truth| <= atol + rtol * |truth|`` (the test of
``numpy.isclose`` and ``wp.autograd.gradcheck``). ``rtol`` defaults to 1e-2 for
float32 programs and 1e-4 for float64 ones: central differences with the step
of :func:`defects4warp.measure.fd.step_size` have truncation error O(h^2) and
round-off O(eps/h), i.e. about eps^(2/3) relative (Nocedal & Wright, *Numerical
Optimization*, 2nd ed., section 8.1): 2.4e-5 for float32, 1.5e-11 for float64;
the defaults leave a margin of about 400x and 10^7x for ill-scaled problems.
``atol`` is ``rtol`` times the largest truth magnitude, so elements whose true
derivative is tiny compared with the rest are not judged on round-off.
"""

from __future__ import annotations

import numpy as np

RTOL = {"float32": 1e-2, "float64": 1e-4}

#: Relative tolerance for "call k equals k times call 1" and "two calls are
#: identical" (float32 accumulation of k equal terms is exact up to a few ulp).
REPEAT_RTOL = 1e-5

#: Largest fraction of disagreeing elements still called ``sparse``.
SPARSE_FRACTION = 0.25

#: Spread (max-min over median) of ad/truth ratios still called one factor.
FACTOR_SPREAD = 1e-3


def rtol_for(dtypes) -> float:
    """The relative tolerance for a program whose params have these dtypes
    (the loosest one wins)."""
    return max(RTOL.get(str(d), RTOL["float32"]) for d in dtypes)


def relative_error(ad: np.ndarray, truth: np.ndarray) -> float:
    """``||ad - truth||_2 / ||truth||_2`` (inf when ad is not finite; the
    absolute error when the truth is exactly zero)."""
    ad = np.asarray(ad, dtype=np.float64).ravel()
    truth = np.asarray(truth, dtype=np.float64).ravel()
    if not np.all(np.isfinite(ad)):
        return float("inf")
    num = float(np.linalg.norm(ad - truth))
    den = float(np.linalg.norm(truth))
    return num / den if den > 0 else num


def mismatch(ad: np.ndarray, truth: np.ndarray, rtol: float, atol: float | None = None,
             unc: np.ndarray | None = None) -> np.ndarray:
    """Boolean mask of elements that disagree (NaN/inf in ``ad`` always does).

    ``atol`` defaults to ``rtol * max|truth|``. ``unc`` (shape (n,), same
    units) is each truth element's measured uncertainty (finite-difference
    noise, :mod:`defects4warp.probes.noise`); it widens the test element-wise:
    ``|ad - truth| <= atol + rtol*|truth| + unc``.
    """
    ad = np.asarray(ad, dtype=np.float64).ravel()
    truth = np.asarray(truth, dtype=np.float64).ravel()
    if atol is None:
        scale = float(np.max(np.abs(truth))) if truth.size else 0.0
        atol = rtol * scale
    slack = atol + rtol * np.abs(truth)
    if unc is not None:
        slack = slack + np.asarray(unc, dtype=np.float64).ravel()
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(ad - truth) <= slack)
    return bad | ~np.isfinite(ad)


def unresolved(ad: np.ndarray, truth: np.ndarray, unc: np.ndarray | None) -> np.ndarray:
    """Mask of elements below resolution: ``|truth| <= unc`` and ``|ad| <= unc``
    (finite differences cannot tell them from zero, and autodiff claims no
    slope they could see). Both exactly zero is not unresolved: an objective
    that did not change at all over the step is flat there (a staircase),
    which noise does not produce. All False when ``unc`` is None."""
    truth = np.asarray(truth, dtype=np.float64).ravel()
    if unc is None:
        return np.zeros(truth.shape, dtype=bool)
    ad = np.asarray(ad, dtype=np.float64).ravel()
    unc = np.asarray(unc, dtype=np.float64).ravel()
    with np.errstate(invalid="ignore"):
        flat = (truth == 0.0) & (ad == 0.0)
        return np.isfinite(ad) & (np.abs(truth) <= unc) & (np.abs(ad) <= unc) & ~flat


def exact_factor(ad: np.ndarray, truth: np.ndarray, atol: float, unc: np.ndarray | None = None,
                 spread: float | None = None) -> float | None:
    """The constant c with ``ad == c * truth`` on every element with
    ``|truth| > atol``, or None.

    Each qualifying element's ratio may depart from the median by
    ``spread + 3 * unc_i / |truth_i|`` relative (``spread`` defaults to
    :data:`FACTOR_SPREAD`; ``unc`` to zero), so a factor of any size (2, 1/N,
    4096) is found when the finite differences are only as accurate as their
    noise allows. At least two elements must qualify (one ratio is always "a
    factor"), three when ``unc`` widens the test. Elements with a negligible
    truth must then also have a negligible ``ad``.
    """
    ad = np.asarray(ad, dtype=np.float64).ravel()
    truth = np.asarray(truth, dtype=np.float64).ravel()
    u = np.zeros_like(truth) if unc is None else np.asarray(unc, dtype=np.float64).ravel()
    big = (np.abs(truth) > atol) & (np.abs(truth) > 3.0 * u)
    need = 2 if unc is None else 3
    if big.sum() < need or not np.all(np.isfinite(ad)):
        return None
    r = ad[big] / truth[big]
    med = float(np.median(r))
    tol = (FACTOR_SPREAD if spread is None else spread) + 3.0 * u[big] / np.abs(truth[big])
    if med == 0.0 or np.any(np.abs(r - med) > tol * abs(med)):
        return None
    rest = ~big & ~(np.abs(truth) <= u)
    if np.any(np.abs(ad[rest]) > (max(atol, 1e-300) + u[rest]) * max(1.0, abs(med))):
        return None
    return med


def nice_factor(c: float, rtol: float = 1e-2) -> str:
    """``c`` written as the simple number it is closest to: an integer
    (``"4096"``), a reciprocal (``"1/8"``) or a decimal (``"0.731"``), within
    ``rtol`` relative."""
    if c == 0 or not np.isfinite(c):
        return f"{c:.4g}"
    if abs(c) >= 1:
        k = round(c)
        if k != 0 and abs(c - k) <= rtol * abs(c):
            return str(int(k))
    else:
        k = round(1.0 / c)
        if k != 0 and abs(1.0 / c - k) <= rtol * abs(1.0 / c):
            return f"1/{int(k)}" if k > 0 else f"-1/{int(-k)}"
    return f"{c:.4g}"


def growth_factors(calls: list) -> list | None:
    """If every later call is an exact multiple ``c_k`` of call 1 with
    ``1 < c_2 < c_3 < ...``, return ``[1, c_2, c_3, ...]``; else None.

    Plain accumulation into ``.grad`` gives 1, 2, 3, ...; a tape that also keeps
    re-recording its launches gives 1, 3, 6, ... Both are growth. Returns None
    when call 1 is zero or not finite.
    """
    if len(calls) < 2:
        return None
    g1 = np.asarray(calls[0], dtype=np.float64).ravel()
    if not np.all(np.isfinite(g1)) or not np.any(g1):
        return None
    scale = float(np.max(np.abs(g1)))
    norm2 = float(np.dot(g1, g1))
    factors = [1.0]
    for g in calls[1:]:
        g = np.asarray(g, dtype=np.float64).ravel()
        if not np.all(np.isfinite(g)):
            return None
        c = float(np.dot(g, g1)) / norm2
        if c <= factors[-1] * (1 + REPEAT_RTOL) or np.max(np.abs(g - c * g1)) > REPEAT_RTOL * c * scale:
            return None
        factors.append(c)
    return factors


def calls_identical(a: np.ndarray, b: np.ndarray) -> bool:
    """Two gradient calls agree to :data:`REPEAT_RTOL` (NaN in the same places counts as equal)."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        return False
    fa, fb = np.isfinite(a), np.isfinite(b)
    if not np.array_equal(fa, fb):
        return False
    if not np.any(fa):
        return True
    scale = max(float(np.max(np.abs(a[fa]))), float(np.max(np.abs(b[fb]))), 1e-300)
    return float(np.max(np.abs(a[fa] - b[fb]))) <= REPEAT_RTOL * scale


def signature(ad: np.ndarray, truth: np.ndarray, rtol: float, unc: np.ndarray | None = None) -> dict:
    """Name the way one autodiff vector ``ad`` departs from ``truth``.

    Parameters
    ----------
    ad, truth : ndarray, shape (n,)
        Autodiff and true derivatives on the same n checked elements.
    rtol : float
        Relative tolerance (see module docstring).
    unc : ndarray, shape (n,), optional
        Measured uncertainty of each truth element (same units). Elements
        below resolution (:func:`unresolved`) are left out of the judgement
        and counted in ``n_unresolved``; the rest are compared with the
        uncertainty added to the tolerance.

    Returns
    -------
    dict
        ``signature`` (one of ``agrees``, ``nan_inf``, ``zero``,
        ``exact_factor``, ``sparse``, ``subtly_wrong``, or ``unresolved``
        when no element is resolved), ``n``, ``n_mismatch``,
        ``n_unresolved``, ``relative_error`` (over resolved elements),
        ``factor`` (or None), ``zero_fraction`` (share of the mismatches where
        ad is exactly 0).
    """
    ad = np.asarray(ad, dtype=np.float64).ravel()
    truth = np.asarray(truth, dtype=np.float64).ravel()
    unres = unresolved(ad, truth, unc)
    keep = ~unres
    u = None if unc is None else np.asarray(unc, dtype=np.float64).ravel()[keep]
    ad_k, truth_k = ad[keep], truth[keep]
    scale = float(np.max(np.abs(truth_k))) if truth_k.size else 0.0
    atol = rtol * scale
    bad = mismatch(ad_k, truth_k, rtol, atol, u)
    n_bad = int(bad.sum())
    out = {
        "n": int(ad.size),
        "n_mismatch": n_bad,
        "n_unresolved": int(unres.sum()),
        "relative_error": relative_error(ad_k, truth_k) if truth_k.size else None,
        "factor": None,
        "zero_fraction": 0.0,
    }
    if not truth_k.size:
        out["signature"] = "unresolved"
        return out
    if n_bad == 0:
        out["signature"] = "agrees"
        return out
    if not np.all(np.isfinite(ad_k)):
        out["signature"] = "nan_inf"
        return out
    zeros = bad & (ad_k == 0.0)
    out["zero_fraction"] = float(zeros.sum()) / n_bad
    if zeros.sum() == n_bad:
        out["signature"] = "zero"
        return out
    f = exact_factor(ad_k, truth_k, atol, u)
    if f is not None and abs(f - 1.0) > rtol:
        out["factor"] = f
        out["signature"] = "exact_factor"
        return out
    if ad_k.size >= 4 and n_bad <= SPARSE_FRACTION * ad_k.size:
        out["signature"] = "sparse"
        return out
    out["signature"] = "subtly_wrong"
    return out


#: Precedence when several comparisons give different signatures.
PRECEDENCE = ("nan_inf", "growth", "iteration", "zero", "exact_factor", "sparse", "subtly_wrong", "agrees",
              "unresolved")


def combine(signatures) -> str:
    """The most telling of several signatures (first in :data:`PRECEDENCE`)."""
    present = set(signatures)
    for s in PRECEDENCE:
        if s in present:
            return s
    return "agrees"


def sweep_verdict(ad: float, forward: list, backward: list, central: list, unc_one: list, unc_central: list,
                  rtol: float, *, truncation_ratio: float = 1.0) -> str:
    """Judge one disagreeing item from differences at several steps.

    Parameters
    ----------
    ad : float
        Autodiff value of the item (derivative, or directional derivative).
    forward, backward : list[float]
        One-sided differences at the sweep's small steps, smallest first (at
        least two; the last is the base step).
    central : list[float]
        Central differences at the small steps and at one larger step
        (``len(forward) + 1`` values, smallest first).
    unc_one, unc_central : list[float]
        Noise of each one-sided and central difference (same units).
    rtol : float
    truncation_ratio : float
        For the round-off ``precision`` case, the central difference must move
        between the smallest and the base step at least this fraction of what
        it moves between the base and the large step. Default 1.0: a truncation
        error, O(h^2), gives 0.01 for the sweep's steps 0.1, 1, 10, and that
        plus round-off at the smallest step can reach 0.1 on a curved float32
        objective whose adjoint is 2.5 % wrong (a reviewer's counter-example,
        tests/test_compare.py), so the case needs the small steps to move at
        least as much as the large one; the navier-stokes example that
        motivated it moves 2.1 times as much.

    Returns
    -------
    str
        ``staircase`` / ``kink`` as :func:`one_sided` says (the objective has a
        jump or a kink at the point and autodiff is a valid one-sided value);
        ``kink_nearby``: at the smallest step both sides agree with each other
        and with autodiff, so the base step straddled a kink or jump near the
        point; ``precision``: the small steps are below resolution and the
        larger step agrees with autodiff (the base step was noise), or the
        central differences' distance to autodiff shrinks at every larger step
        and the largest step agrees with it: round-off the noise estimate
        underrates (a truncation error shrinks with the step, never grows; a
        float32 objective summed over a large field, where one third difference
        of ECnoise can come out several times too small, shows this);
        ``confirmed``: the differences are consistent across steps and
        disagree with autodiff (a real disagreement); ``unclear`` otherwise.
    """
    vals = [ad, *forward, *backward, *central]
    if not all(np.isfinite(vals)):
        return "unclear"
    f0, b0, u0 = forward[0], backward[0], unc_one[0]
    scale = max(abs(f0), abs(b0), abs(ad), 1e-300)
    tol = rtol * scale + 2.0 * u0
    below = abs(f0) <= 2.0 * u0 and abs(b0) <= 2.0 * u0
    if below and ad != 0.0:
        c_base, c_big = central[-2], central[-1]
        if abs(c_big - ad) <= rtol * max(abs(c_big), abs(ad)) + 2.0 * unc_central[-1]:
            return "precision"
        if abs(c_base - c_big) <= rtol * max(abs(c_base), abs(c_big)) + 2.0 * (unc_central[-2] + unc_central[-1]):
            return "confirmed"
        return "unclear"
    errs = [abs(c - ad) for c in central]
    c_big = central[-1]
    # a central difference's truncation error grows as h^2: from the base to the big step (x10) it
    # moves 100 times what it moves from the smallest to the base step; round-off does the reverse
    small_moves = abs(central[-2] - central[0]) >= truncation_ratio * abs(c_big - central[-2])
    if (ad != 0.0 and small_moves and errs[-1] <= rtol * max(abs(c_big), abs(ad)) + 2.0 * unc_central[-1]
            and all(a > b for a, b in zip(errs, errs[1:]))):
        return "precision"
    kind = one_sided(ad, forward, backward, rtol + 2.0 * u0 / scale)
    if kind in ("staircase", "kink"):
        return kind
    if kind == "smooth":
        mid = 0.5 * (f0 + b0)
        if abs(ad - mid) <= tol:
            return "kink_nearby"
        return "confirmed"
    if not (min(f0, b0) - tol <= ad <= max(f0, b0) + tol):
        return "confirmed"
    return "unclear"


def one_sided(ad: float, forward: list, backward: list, rtol: float) -> str:
    """Explain a disagreement at one coordinate from one-sided differences.

    Parameters
    ----------
    ad : float
        Autodiff derivative at the coordinate.
    forward, backward : list[float]
        One-sided differences ``(f(x+h)-f(x))/h`` and ``(f(x)-f(x-h))/h`` at
        the sweep's steps, smallest step first (at least two steps).
    rtol : float

    Returns
    -------
    str
        ``staircase``: autodiff is exactly 0 and the objective is flat on both
        sides at the smallest step, or flat on one side with a jump on the
        other (a one-sided difference growing like 1/h: at least
        :data:`JUMP_GROWTH` times larger at the smallest step than at the
        next); the base step straddled a jump of a piecewise-constant function.
        ``smooth``: both sides agree, so finite differences can be trusted.
        ``kink``: the sides differ, each stable across steps, and autodiff is
        one of them or between them (a valid one-sided derivative at a tie).
        ``unclear`` otherwise.
    """
    f0, b0 = forward[0], backward[0]
    tol = rtol * max(abs(f0), abs(b0), abs(ad), 1e-300)
    if not all(np.isfinite([ad, f0, b0])):
        return "unclear"
    flat_f, flat_b = abs(f0) <= tol, abs(b0) <= tol
    if ad == 0.0 and flat_f and flat_b:
        return "staircase"
    if abs(f0 - b0) <= tol:
        return "smooth"
    jump = lambda v: len(v) > 1 and abs(v[0]) >= JUMP_GROWTH * max(abs(v[1]), 1e-300)  # noqa: E731
    if ad == 0.0 and ((flat_f and jump(backward)) or (flat_b and jump(forward))):
        return "staircase"
    if min(f0, b0) - tol <= ad <= max(f0, b0) + tol and not jump(forward) and not jump(backward):
        return "kink"
    return "unclear"


#: Growth of a one-sided difference between two steps 10x apart that marks a
#: jump inside the smaller step (a jump J gives J/h: growth 10; a kink gives 1).
JUMP_GROWTH = 5.0


#: Growth of the gap between the one-sided differences from the smallest step to the next (10x
#: larger) above which the gap is curvature, not a kink: a kink's gap |f'(+) - f'(-)| does not
#: depend on the step, a smooth function's is f'' h (growth 10); sqrt(10) splits the two.
CURVATURE_GROWTH = 10 ** 0.5


def curvature_gap(forward: list, backward: list, *, growth: float = CURVATURE_GROWTH) -> bool:
    """Whether the one-sided differences (steps smallest first, 10x apart) part in proportion to
    the step: their gap at the second step is more than ``growth`` times the gap at the smallest,
    so the sides converge as the step shrinks (a smooth function with large curvature, as over a
    long chaotic horizon), which a kink's constant gap does not. False with fewer than two steps
    or non-finite values."""
    if len(forward) < 2 or len(backward) < 2 or not np.all(np.isfinite([*forward[:2], *backward[:2]])):
        return False
    g0, g1 = abs(forward[0] - backward[0]), abs(forward[1] - backward[1])
    return g1 > growth * max(g0, 1e-300)


def reference_disagreement(ref: float, forward: list, backward: list, central: list, rtol: float) -> str:
    """Why finite differences disagree with a trusted ``reference_gradient()``
    value ``ref`` at one coordinate (steps smallest first, 5 of them 10x apart).

    Returns
    -------
    str
        ``kink``: one-sided differences differ, ``ref`` is one of them (a
        tie; :func:`one_sided`) and their gap does not shrink with the step
        (:func:`curvature_gap`); ``precision``: some central difference at the
        base step or larger agrees with ``ref`` while the smallest does not
        (round-off/cancellation shrinking with the step: ``fd_precision``);
        ``smooth_other``: central differences agree with each other across
        steps (spread under 10 rtol) but not with ``ref``, i.e. the function
        is smooth and ``ref`` is deliberately another quantity (a surrogate);
        ``erratic``: central differences disagree with each other and with
        ``ref`` at every step (a chaotic or ill-conditioned objective).
    """
    if one_sided(ref, forward[:2], backward[:2], rtol) == "kink" and not curvature_gap(forward, backward):
        return "kink"
    c = np.asarray(central, dtype=np.float64)
    scale = max(float(np.max(np.abs(c))) if c.size else 0.0, 1e-300)
    close = np.abs(c - ref) <= 10 * rtol * max(abs(ref), 1e-300)
    mid = len(c) // 2
    if np.any(close[mid:]) and not close[0]:
        return "precision"
    spread = (float(np.max(c)) - float(np.min(c))) / scale if c.size else 0.0
    if spread <= 10 * rtol:
        return "smooth_other"
    return "erratic"
