"""The oracle's Python API: :func:`measure_variant` and :func:`compare_pair`.

Both run the variant(s) in contained subprocesses
(:func:`defects4warp.oracle.runner.run_worker`) and return JSON-able dicts. The
method, its thresholds and their sources are in docs/oracle.md.
"""

from __future__ import annotations

import math
import os
import tempfile

from .runner import run_worker

#: Pair-check default: objectives of the two variants at the same point agree
#: when ``|f_w - f_r| <= objective_rtol * |f_r| + k_sigma * (sigma_w + sigma_r)``
#: (sigma: each variant's measured noise bound).
DEFAULT_OBJECTIVE_RTOL = 1e-6

VERDICTS = ("agrees", "wrong", "unresolved", "refused", "error")


def _split(knobs: dict) -> tuple:
    knobs = dict(knobs)
    memory_limit = knobs.pop("memory_limit", "default")
    objective_rtol = knobs.pop("objective_rtol", DEFAULT_OBJECTIVE_RTOL)
    return knobs, memory_limit, objective_rtol


def _measure(path, device, scale, python, timeout_s, knobs, memory_limit, point=None, arrays=False, replay=None):
    kw = {} if memory_limit == "default" else {"memory_limit": memory_limit}
    return run_worker(path, device=device, scale=scale, python=python, timeout_s=timeout_s, knobs=knobs,
                      point=point, arrays=arrays, replay=replay, **kw)


def measure_variant(path, *, device: str = "cpu", scale: str = "small", python: str | None = None,
                    timeout_s: float = 300.0, replay: dict | None = None, **knobs) -> dict:
    """Measure one variant folder against the ground truth.

    Central finite differences cover every coordinate of every param up to
    ``max_full`` = 10^4 parameters; above that, a deterministic sample of 256
    coordinates (drawn without replacement, seed 20111) plus 8 random unit
    directions (Gaussian, normalised, same seed). Steps start at
    ``eps^(1/3) * max(|x_i|, mean |x| of the param)`` (Nocedal & Wright 2nd
    ed., sec. 8.1) and are refined where h and h/4 disagree beyond the
    noise; the noise is measured ECnoise-style (Moré & Wild 2011). See
    docs/oracle.md.

    Parameters
    ----------
    path : str or Path
        Folder holding ``problem.py`` (the Problem protocol, docs/case-format.md).
    device : str, default "cpu"
        Warp device passed to ``make_problem``.
    scale : str, default "small"
        ``small`` or ``production``.
    python : str, optional
        Interpreter to run it with (default: this one); e.g.
        ``defects4warp.envs.python_for("1.16.0")[0]`` for another Warp release.
    timeout_s : float, default 300.0
        Wall-clock limit in seconds; on expiry the verdict is ``error``.
    replay : dict, optional
        ``path`` holds a user's script: its replay record (docs/oracle.md,
        "Script variants"; ``defects4warp.capture.record.record_script`` makes
        one); the oracle replays the script (:mod:`defects4warp.oracle.replay`).
    **knobs
        Overrides of :data:`defects4warp.oracle.worker.DEFAULT_KNOBS` (e.g.
        ``max_full=64``, ``k_sigma=3.0``) and ``memory_limit`` (bytes of
        address space, default 16 GiB on CPU).

    Returns
    -------
    dict
        JSON-able measurement. Top-level keys include ``verdict`` (one of
        ``agrees``, ``wrong``, ``unresolved``, ``refused``, ``error``),
        ``signature`` (``{"kind": zero|factor|nan|growth|iteration|other|none,
        ...}``, with ``ratio`` for a factor), ``max_relative_error``,
        ``resolved``, ``unresolved``, ``noise`` (``sigma`` in units of the
        objective), ``objective``, ``fd``, ``calls``, ``warp_version``,
        ``failure`` (``stage``, ``type``, ``first_line``) for refused/error,
        and ``cost``.
    """
    knobs, memory_limit, _ = _split(knobs)
    doc, _ = _measure(path, device, scale, python, timeout_s, knobs, memory_limit, replay=replay)
    return doc


def _item_values(raw: dict):
    """(ad (calls, items), uncertainty (items,), resolution (items,)) over the FD items."""
    import numpy as np

    ad = np.asarray(raw["ad"])
    cols = [ad[:, raw["coords"]]]
    if "directions" in raw:
        cols.append(ad @ raw["directions"].T)
    return np.concatenate(cols, axis=1), np.asarray(raw["uncertainty"]), np.asarray(raw["resolution"])


def same_point(a: dict, b: dict) -> bool:
    """True when two measurements were taken at the same parameter values
    (same names, shapes and SHA-256 digests of the float64 point)."""
    pa, pb = a.get("params") or {}, b.get("params") or {}
    return bool(pa) and list(pa) == list(pb) and all(
        pa[k]["size"] == pb[k]["size"] and pa[k]["digest"] == pb[k]["digest"] for k in pa)


def pair_stats(wrong: dict, wraw: dict | None, right: dict, rraw: dict | None, *, objectives_differ=False,
               objective_rtol: float = DEFAULT_OBJECTIVE_RTOL) -> dict:
    """Compare two measurements taken at the same point (see :func:`compare_pair`).

    Returns
    -------
    dict
        ``confirmed``, ``objective_relative_difference``, ``objectives_agree``,
        ``gradients_differ``, ``differing_items``, ``ratio_median``,
        ``ratio_spread``, ``ratio_call``, ``max_relative_error``, ``reason``
        (when not confirmed).
    """
    import numpy as np

    out = {"confirmed": False, "objective_relative_difference": None, "objectives_agree": None,
           "gradients_differ": None, "differing_items": None, "ratio_median": None, "ratio_spread": None,
           "ratio_call": None, "max_relative_error": None, "objectives_differ": bool(objectives_differ)}
    reasons = []
    if right.get("verdict") != "agrees":
        reasons.append(f"the right variant's verdict is {right.get('verdict')}, not agrees"
                       + (f" ({right.get('message')})" if right.get("message") else ""))
    if wrong.get("verdict") != "wrong":
        reasons.append(f"the wrong variant's verdict is {wrong.get('verdict')}, not wrong"
                       + (f" ({wrong.get('message')})" if wrong.get("message") else ""))
    if wraw is None or rraw is None or "ad" not in wraw or "ad" not in rraw:
        out["reason"] = "; ".join(reasons or ["a variant has no measured gradient"])
        return out
    fw = float(wrong["objective"]["value"])
    fr = float(right["objective"]["value"])
    sw = float(wrong["noise"]["sigma"])
    sr = float(right["noise"]["sigma"])
    k = float(right["knobs"]["k_sigma"])
    diff = abs(fw - fr)
    out["objective_relative_difference"] = diff / abs(fr) if fr != 0 else (0.0 if diff == 0 else math.inf)
    out["objectives_agree"] = bool(diff <= objective_rtol * abs(fr) + k * (sw + sr))
    if not out["objectives_agree"] and not objectives_differ:
        reasons.append(f"objectives differ at the same point: {fw!r} vs {fr!r} (relative "
                       f"{out['objective_relative_difference']:.3g}; set objectives_differ with the reason)")
    aw, _, _ = _item_values(wraw)
    ar, u, r = _item_values(rraw)
    if aw.shape != ar.shape:
        out["reason"] = "; ".join(reasons + [f"gradient shapes differ: {aw.shape} vs {ar.shape}"])
        return out
    rtol = float(right["fd"]["rtol"])
    tol = u[None, :] + rtol * np.maximum(np.abs(aw), np.abs(ar))
    with np.errstate(invalid="ignore"):
        differs = ~(np.abs(aw - ar) <= tol)          # NaN counts as differing
    out["differing_items"] = [int(x) for x in differs.sum(axis=1)]
    out["gradients_differ"] = bool(differs.any())
    if not out["gradients_differ"]:
        reasons.append("the two gradients agree within the noise on every item and call")
    resolved = np.abs(ar[0]) > r
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.abs(aw - ar) / np.maximum(np.abs(ar), u[None, :])
    rel = np.where(np.isnan(rel), np.inf, rel)
    if resolved.any():
        out["max_relative_error"] = float(np.max(rel[:, resolved]))
    c = int(np.argmax(differs.sum(axis=1))) if differs.any() else 0
    sel = resolved & np.isfinite(aw[c])
    if sel.any():
        ratios = aw[c][sel] / ar[c][sel]
        med = float(np.median(ratios))
        out.update(ratio_median=med, ratio_spread=float(np.max(np.abs(ratios - med))), ratio_call=c + 1,
                   ratio_items=int(sel.sum()))
    out["confirmed"] = not reasons
    if reasons:
        out["reason"] = "; ".join(reasons)
    return out


def compare_pair(wrong_path, right_path, *, device: str = "cpu", scale: str = "small", python: str | None = None,
                 timeout_s: float = 300.0, objectives_differ=False, **knobs) -> dict:
    """Check a (wrong, right) pair the Defects4J way: the fix passes, the bug fails.

    ``right_path`` must agree with finite differences; ``wrong_path`` must be
    ``wrong``; measured at the same point (when the two programs start from
    different parameter values, the wrong one is measured again at the right
    one's point), their gradients must differ beyond the noise on some item
    and call, and their objectives must agree (within
    ``objective_rtol * |f| + k_sigma * (sigma_w + sigma_r)``, default
    ``objective_rtol`` 1e-6) unless ``objectives_differ`` is true (a reason
    string from case.yaml, or True).

    Parameters
    ----------
    wrong_path, right_path : str or Path
        Variant folders.
    device, scale, python, timeout_s
        As for :func:`measure_variant` (the timeout applies to each run).
    objectives_differ : bool or str, default False
        The pair's objectives differ by design (the reason).
    **knobs
        As for :func:`measure_variant`, plus ``objective_rtol``.

    Returns
    -------
    dict
        ``confirmed`` (bool), ``right`` and ``wrong`` (measurements),
        ``objective_relative_difference``, ``ratio_median`` and
        ``ratio_spread`` (per-item ratios wrong/right over the items the
        right gradient resolves, on the call that differs most; spread is
        the largest absolute deviation from the median), ``max_relative_error``
        (``|g_w - g_r| / max(|g_r|, u)`` over resolved items and calls),
        ``same_point``, ``differing_items`` per call, and ``reason`` when
        not confirmed.
    """
    knobs, memory_limit, objective_rtol = _split(knobs)
    right, rraw = _measure(right_path, device, scale, python, timeout_s, knobs, memory_limit, arrays=True)
    wrong, wraw = _measure(wrong_path, device, scale, python, timeout_s, knobs, memory_limit, arrays=True)
    return _finish_pair(wrong, wraw, right, rraw, wrong_path, device, scale, python, timeout_s, knobs, memory_limit,
                        objectives_differ, objective_rtol)


def _finish_pair(wrong, wraw, right, rraw, wrong_path, device, scale, python, timeout_s, knobs, memory_limit,
                 objectives_differ, objective_rtol, remeasure=None):
    import numpy as np

    same = same_point(wrong, right)
    remeasured = False
    if not same and rraw is not None and wrong.get("params") and right.get("params"):
        with tempfile.TemporaryDirectory(prefix="d4w-point-") as tmp:
            pf = os.path.join(tmp, "x0.npz")
            np.savez(pf, **{k: v for k, v in rraw.items() if k.startswith("x0/")})
            if remeasure is not None:
                wrong, wraw = remeasure(pf)
            else:
                wrong, wraw = _measure(wrong_path, device, scale, python, timeout_s, knobs, memory_limit,
                                       point=pf, arrays=True)
        remeasured = True
        same = same_point(wrong, right)
    stats = pair_stats(wrong, wraw, right, rraw, objectives_differ=objectives_differ, objective_rtol=objective_rtol)
    if not same and stats["confirmed"]:
        stats["confirmed"] = False
        stats["reason"] = "the two variants could not be measured at the same point"
    stats.update(right=right, wrong=wrong, same_point=same, remeasured_at_right_point=remeasured)
    return stats
