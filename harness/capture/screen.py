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
``ABS_FLOOR * |f(x)|`` (float32 rounding of the loss); a relative disagreement under that floor is "unresolved"
(``floor``: near a minimum the differences shrink with the gradient, the loss does not), read like an agreement
at iteration 1 only. Thresholds are set for float32 programs: with
``STEP_REL = 1e-2`` the truncation error of a central difference on a smooth loss is ``O(1e-4)`` relative
and rounding ``eps32 / 1e-2 ~ 1e-5``, both far under 3 %.

At a later iteration the check is made along :data:`LATER_DIRECTIONS` random directions, each as above (a
further direction whose two differences do not agree is not read: where ``g.s`` nearly cancels, the
truncation error is large beside it), and the iteration disagrees when one of them does. One direction sees an error ``e`` of the
gradient only through ``e.s / g.s``, a ratio that is small for a sizeable share of directions: a cached
gradient 6 % off at iteration 2 of a held-out script (2026-12-05) read 0.004 along seed 0's direction and
0.045 and 0.16 along the next two.
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
#: Most later iterations checked in all (each costs one capture, a gradient and 1 + 4 LATER_DIRECTIONS objective
#: evaluations).
MAX_LATER = 6
#: Random directions of the check at a later iteration.
LATER_DIRECTIONS = 3


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


def _difference(problem, x0: dict, step: dict, frac: float) -> float:
    """``(f(x0 + frac step) - f(x0 - frac step)) / 2`` of ``problem``'s objective (params left at the last point)."""
    vals = []
    for sgn in (1.0, -1.0):
        for k, v in x0.items():
            problem.params[k].assign((np.asarray(v, dtype=np.float64) + sgn * frac * step[k]).astype(v.dtype))
        vals.append(float(problem.objective()))
    return (vals[0] - vals[1]) / 2.0


def _smooth(full: float, half: float, f0: float) -> bool:
    """The differences at the step and at half of it (both as for the half step) agree: within
    :data:`SMOOTH_RTOL`, or within the loss's rounding floor."""
    return abs(full - half) <= SMOOTH_RTOL * max(abs(full), abs(half), 1e-300) or abs(full - half) <= ABS_FLOOR * abs(f0)


def _disagrees(d: float, dot: float, f0: float) -> bool:
    """The difference ``d`` and the gradient's ``dot`` along the same step disagree (module docstring)."""
    return abs(d - dot) > MISMATCH_RTOL * max(abs(d), abs(dot)) and abs(d - dot) > ABS_FLOOR * abs(f0)


def check_iteration(problem, seed: int = 0, *, directions: int = 1) -> dict:
    """The central-difference check of ``problem`` (a :class:`~defects4warp.capture.core.CapturedProblem`)
    at its params along ``directions`` random directions (module docstring; default one). Params are left as
    they were.

    Returns
    -------
    dict
        ``{"iteration", "objective", "difference", "gradient_dot", "rel", "status"}`` of the first direction,
        with status ``"agrees"`` | ``"disagrees"`` | ``"unresolved"`` (not smooth or not finite at the step's
        scale; or, with ``"floor": True`` and a ``"why"``, a relative disagreement within the loss's rounding
        floor); with several directions also ``"directions"``, ``"rels"`` (one per direction) and ``"read"``
        (the directions whose two differences agree, the first always), ``rel`` the largest of those read and
        the status ``"disagrees"`` when one of them does.
    """
    x0 = {k: np.array(a.numpy(), copy=True) for k, a in problem.params.items()}
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(max(1, int(directions))):
        step = {}
        for k, v in x0.items():
            v64 = np.asarray(v, dtype=np.float64)
            scale = np.abs(v64) + 0.1 * (float(np.max(np.abs(v64))) if v64.size else 0.0) + 1e-3
            step[k] = STEP_REL * scale * rng.choice([-1.0, 1.0], size=v64.shape)
        steps.append(step)
    try:
        f0 = float(problem.objective())
        g = problem.gradient()
        fulls, halves = [], []
        for st in steps:
            fulls.append(_difference(problem, x0, st, 1.0) / 2.0)  # as the difference for the half step
            halves.append(_difference(problem, x0, st, 0.5))
            if not _smooth(fulls[0], halves[0], f0):
                break  # the further directions only where the first resolved
    finally:
        for k, v in x0.items():
            problem.params[k].assign(v)
    dots = [0.5 * sum(float(np.sum(np.asarray(g[k], dtype=np.float64) * st[k])) for k in st if k in g)
            for st in steps[:len(halves)]]
    d1, d2, dot = fulls[0], halves[0], dots[0]
    out = {"iteration": problem.iteration, "objective": f0, "difference": d2, "gradient_dot": dot}
    if not all(math.isfinite(v) for v in (f0, *fulls, *halves, *dots)):
        out.update(rel=None, status="unresolved")
        return out
    smooth = _smooth(d1, d2, f0)
    rels = [abs(d - t) / max(abs(d), abs(t)) if max(abs(d), abs(t)) > 0 else 0.0 for d, t in zip(halves, dots)]
    # a further direction along which the two steps differ (truncation where g.s nearly cancels) is not read
    kept = [i for i in range(len(halves)) if i == 0 or _smooth(fulls[i], halves[i], f0)]
    read = [(halves[i], dots[i]) for i in kept]
    out["rel"] = rels[0]
    if directions > 1:
        out.update(directions=len(halves), rels=rels, read=len(read), rel=max(rels[i] for i in kept))
    if not smooth:
        out["status"] = "unresolved"
    elif any(_disagrees(d, t, f0) for d, t in read):
        out["status"] = "disagrees"
    elif any(abs(d - t) > MISMATCH_RTOL * max(abs(d), abs(t)) for d, t in read):
        # a relative disagreement the loss's rounding could make: not read either way (near a minimum the
        # differences shrink with the gradient while the loss does not)
        out.update(status="unresolved", floor=True,
                   why=f"a difference within {ABS_FLOOR:g} of the loss, its float32 rounding floor")
    else:
        out["status"] = "agrees"
    return out


def _clear(row: dict) -> bool:
    """The first iteration's check shows no disagreement: it agrees, or its differences are within the loss's
    rounding floor (``floor``); a later iteration that disagrees is then the problem to diagnose."""
    return row["status"] == "agrees" or bool(row.get("floor"))


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
        row = check_iteration(later, directions=LATER_DIRECTIONS)
        rows.append(row)
        if chosen is first and _clear(rows[0]) and row["status"] == "disagrees":
            chosen = later
    return chosen, rows
