"""Look along the script's own trajectory: a cheap gradient check at iteration 1 and at later iterations.

A bug can be harmless at the starting point and show once the params move (a buffer that is all zeros
at first, a stale read of values the update changed). :func:`screen_iterations` checks the captured
iteration and later ones of the script's own loop (:func:`later_iterations`: the next few, then doubling
along the loop, and one near 10 % of its length) with one central difference along a random direction
each, within a time budget, and says which of them disagree with the
gradient the script's update consumes. When the first agrees and a later one does not, the problem to
diagnose is that later iteration (:func:`defects4warp.capture.core.capture_problem` then returns its
capture); either way the capture summary lists what was checked.

The check
---------
At params ``x`` with gradient ``g`` the step is ``s_i = STEP_REL * (|x_i| + 0.1 max|x| + 1e-3) * r_i`` with
``r_i`` = +-1 (Rademacher, seed 0). The central differences ``D(s) = (f(x+s) - f(x-s)) / 2`` at ``s`` and
``s / 2`` must agree within :data:`SMOOTH_RTOL` (else the objective is not smooth enough at that scale or
too noisy: the iteration is "unresolved", never a disagreement); the iteration *disagrees* when
``|D(s/2) - g.s/2| > MISMATCH_RTOL * max(|D(s/2)|, |g.s/2|)`` and that difference is above
``ABS_FLOOR * |f(x)|`` (float32 rounding of the loss). Thresholds are set for float32 programs: with
``STEP_REL = 1e-2`` the truncation error of a central difference on a smooth loss is ``O(1e-4)`` relative
and rounding ``eps32 / 1e-2 ~ 1e-5``, both far under 3 %.
"""

from __future__ import annotations

import math
import time

import numpy as np

#: Relative step of the central difference (times ``|x_i| + 0.1 max|x| + 1e-3``).
STEP_REL = 1e-2
#: The differences at the step and at half of it agree within this relative tolerance on a resolved iteration.
SMOOTH_RTOL = 0.01
#: Relative disagreement between the difference and the gradient above which an iteration disagrees.
MISMATCH_RTOL = 0.03
#: Absolute floor of a disagreement, relative to the loss (float32 rounding of a sum).
ABS_FLOOR = 1e-5
#: Fraction of the loop's length of the later iteration checked (besides the next ones and the doubling).
LATE_FRACTION = 0.10
#: Iterations right after the first that are all checked: a bug that shows once the params moved shows at
#: the 2nd; state that alternates between two or three buffers (double-buffered params, a ring of
#: gradient buffers) shows at the 3rd or 4th, when a buffer is used for the second time.
DENSE_ITERATIONS = 3
#: Most later iterations checked in all (each costs one capture and five objective evaluations).
MAX_LATER = 6


def later_iterations(n_iterations: int | None, first: int = 1, *, dense: int = DENSE_ITERATIONS,
                     late_fraction: float = LATE_FRACTION, max_later: int = MAX_LATER) -> list:
    """The later iterations to check after ``first`` for a loop of ``n_iterations`` (None: unknown).

    The ``dense`` iterations after ``first``; the one nearest ``late_fraction`` of the loop; then doubling
    (``2 (first + dense)``, ``4 (first + dense)``, ...) while within the loop and fewer than ``max_later``
    are chosen; all within the loop (an unknown loop: the dense ones only), sorted. A periodic defect of
    period p <= dense + 1 shows within the dense ones; one that needs the params to travel shows along the
    doubling, at a cost that grows with the log of the loop's length.
    """
    if n_iterations is not None and n_iterations <= first:
        return []
    last = n_iterations if n_iterations is not None else first + dense
    out = set(range(first + 1, min(first + dense, last) + 1))
    if n_iterations is not None:
        late = int(round(late_fraction * n_iterations))
        if first < late <= n_iterations:
            out.add(late)
        k = 2 * (first + dense)
        while k <= n_iterations and len(out) < max_later:
            out.add(k)
            k *= 2
    return sorted(out)[:max_later]


def check_iteration(problem, seed: int = 0) -> dict:
    """One central-difference check of ``problem`` (a :class:`~defects4warp.capture.core.CapturedProblem`)
    at its params (module docstring). Params are left as they were.

    Returns
    -------
    dict
        ``{"iteration", "objective", "difference", "gradient_dot", "rel", "status"}`` with status
        ``"agrees"`` | ``"disagrees"`` | ``"unresolved"`` (not smooth or not finite at the step's scale).
    """
    x0 = {k: np.array(a.numpy(), copy=True) for k, a in problem.params.items()}
    rng = np.random.default_rng(seed)
    step = {}
    for k, v in x0.items():
        v64 = np.asarray(v, dtype=np.float64)
        scale = np.abs(v64) + 0.1 * (float(np.max(np.abs(v64))) if v64.size else 0.0) + 1e-3
        step[k] = STEP_REL * scale * rng.choice([-1.0, 1.0], size=v64.shape)
    try:
        f0 = float(problem.objective())
        g = problem.gradient()
        diffs = []
        for frac in (1.0, 0.5):
            vals = []
            for sgn in (1.0, -1.0):
                for k, v in x0.items():
                    problem.params[k].assign((np.asarray(v, dtype=np.float64) + sgn * frac * step[k]).astype(v.dtype))
                vals.append(float(problem.objective()))
            diffs.append((vals[0] - vals[1]) / 2.0)
    finally:
        for k, v in x0.items():
            problem.params[k].assign(v)
    dot = 0.5 * sum(float(np.sum(np.asarray(g[k], dtype=np.float64) * step[k])) for k in step if k in g)
    d1, d2 = diffs[0] / 2.0, diffs[1]  # both as the difference for the half step
    out = {"iteration": problem.iteration, "objective": f0, "difference": d2, "gradient_dot": dot}
    if not all(math.isfinite(v) for v in (f0, d1, d2, dot)):
        out.update(rel=None, status="unresolved")
        return out
    ref = max(abs(d2), abs(dot))
    out["rel"] = abs(d2 - dot) / ref if ref > 0 else 0.0
    smooth = abs(d1 - d2) <= SMOOTH_RTOL * max(abs(d1), abs(d2), 1e-300) or abs(d1 - d2) <= ABS_FLOOR * abs(f0)
    if not smooth:
        out["status"] = "unresolved"
    elif abs(d2 - dot) > MISMATCH_RTOL * ref and abs(d2 - dot) > ABS_FLOOR * abs(f0):
        out["status"] = "disagrees"
    else:
        out["status"] = "agrees"
    return out


def screen_iterations(first, capture_later, n_iterations, budget_s: float) -> tuple:
    """Check ``first`` (the capture of iteration 1) and later iterations of the script's loop.

    Parameters
    ----------
    first : CapturedProblem
    capture_later : callable
        ``capture_later(k) -> CapturedProblem`` for iteration k (a capture without screening).
    n_iterations : int or None
        Length of the script's loop in iterations, when known.
    budget_s : float
        Seconds the screening may take in all; later iterations are skipped once it is spent (said so).

    Returns
    -------
    (CapturedProblem, list of dict)
        The problem to diagnose (``first``, or the first later iteration that disagrees when ``first``
        agrees) and the checks (:func:`check_iteration` rows, plus ``{"iteration", "status": "skipped",
        "why"}`` rows).
    """
    t0 = time.perf_counter()
    rows = [check_iteration(first)]
    chosen = first
    for k in later_iterations(n_iterations, first.iteration):
        if time.perf_counter() - t0 > budget_s:
            rows.append({"iteration": k, "status": "skipped", "why": f"the screening's {budget_s:g} s were spent"})
            continue
        try:
            later = capture_later(k)
        except Exception as exc:  # noqa: BLE001 - a later iteration that cannot be captured is said, not fatal
            rows.append({"iteration": k, "status": "skipped", "why": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        row = check_iteration(later)
        rows.append(row)
        if chosen is first and rows[0]["status"] == "agrees" and row["status"] == "disagrees":
            chosen = later
    return chosen, rows
