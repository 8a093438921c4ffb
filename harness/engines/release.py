"""Release differential: does the gradient change with the Warp release while the program does not?

The measuring half, parent-side (it starts more workers; nothing here runs in the worker): when the
gradient is wrong on the release under test, the same variant is measured again with a cheap probe
list (:data:`DIFFERENTIAL_PROBES`) in the per-release environment of another release
(:func:`defects4warp.envs.ensure_env`, or this interpreter for the installed release; the newest of
:data:`defects4warp.envs.ENGINE_RELEASES` by default), :func:`differential`. If the objective's
finite differences agree across the two releases while autodiff changes (:func:`changed`), Warp
changed the adjoint; every supported release in between (:data:`defects4warp.envs.RELEASES`, 1.0.2
to 1.19.0) is a candidate of the bisection for the first one with the other release's behaviour
(the first that computes the other release's gradient when that one agrees with finite
differences, else the first that differs from the release under test). A first release is named
only when no supported release lies between it and the last one with the old behaviour; otherwise
the result keeps the bracket the bisection left open.

A record whose differential was measured names this module in its ``code`` provenance
(:meth:`defects4warp.engines.reference.ReferenceEngine.measure`). What the result says, in words
and as evidence, is read from the stored record by the interpretation, which no measurement names:
:mod:`defects4warp.engines.assess.release` (the release assessment: the changelog entry of the first
release, the evidence shared over an open bracket) and :mod:`defects4warp.engines.assess.builtins`
(launched kernels calling builtins the conformance suite measured defective on the release).
"""

from __future__ import annotations

import sys

import numpy as np
from packaging.version import InvalidVersion, Version

from ..probes import DIFFERENTIAL_PROBES as DIFFERENTIAL_PROBE_NAMES

#: Probes the differential runs on the other release (cheap: one gradient call, a few FD items;
#: :func:`differential_options` asks for as many gradient calls as the measurement under test made
#: when its calls were not identical, so that repeated calls are compared too).
DIFFERENTIAL_PROBES = {"probes": list(DIFFERENTIAL_PROBE_NAMES),
                       "knobs": {"determinism": {"calls": 1}, "fd": {"coords": 5, "dirs": 2, "perturbed_dirs": 0}}}


def _norms(doc: dict) -> list:
    """gradient() norms of the determinism probe, as floats (NaN/inf stored as strings)."""
    out = []
    for n in (doc.get("determinism") or {}).get("gradient_norms") or []:
        try:
            out.append(float(n))
        except (TypeError, ValueError):
            out.append(float("nan"))
    return out


def differential_options(base_doc: dict) -> dict:
    """Worker options of the release differential for a measurement ``base_doc``:
    :data:`DIFFERENTIAL_PROBES`, with as many gradient() calls as ``base_doc``'s determinism
    probe made when those calls were not identical (growth, a first call that differs), so
    :func:`repeated_calls` can compare them; one call otherwise. The seed is ``base_doc``'s."""
    knobs = {k: dict(v) for k, v in DIFFERENTIAL_PROBES["knobs"].items()}
    det = base_doc.get("determinism") or {}
    n = len(_norms(base_doc))
    if n > 1 and det.get("calls_identical") is False:
        knobs["determinism"]["calls"] = n
    return {"probes": list(DIFFERENTIAL_PROBES["probes"]), "knobs": knobs,
            "seed": (base_doc.get("options") or {}).get("seed", 0)}


def repeated_calls(doc_a: dict, doc_b: dict) -> dict | None:
    """Compare repeated gradient() calls of two measurements of the same variant.

    The quantity compared is each call's gradient norm relative to call 1's (1, 2, 3 for
    plain accumulation into ``.grad``), to ``doc_a``'s FD relative tolerance (``fd.rtol``,
    :data:`defects4warp.measure.compare.RTOL`; 1e-4 when absent).

    Returns
    -------
    dict or None
        ``{"calls": n, "current": [ratios of doc_a], "other": [ratios of doc_b], "same": bool}``;
        None when ``doc_a``'s calls were identical (nothing to compare beyond call 1), either
        has fewer than two calls, they differ in number, or call 1's norm is 0 or not finite.
    """
    if (doc_a.get("determinism") or {}).get("calls_identical") is not False:
        return None
    na, nb = np.array(_norms(doc_a)), np.array(_norms(doc_b))
    if len(na) < 2 or len(na) != len(nb) or not all(np.isfinite(v) and v > 0 for v in (na[0], nb[0])):
        return None
    rtol = float((doc_a.get("fd") or {}).get("rtol") or 1e-4)
    ra, rb = na / na[0], nb / nb[0]
    same = bool(np.allclose(ra, rb, rtol=rtol, atol=0.0, equal_nan=True))
    return {"calls": int(len(na)), "current": ra.tolist(), "other": rb.tolist(), "same": same}


def _v(s):
    try:
        return Version(str(s))
    except InvalidVersion:
        return None


def _items(doc: dict):
    """(fd values, autodiff values) of call 1's FD items, or None."""
    fd = doc.get("fd") or {}
    calls = fd.get("calls") or []
    if not calls or not fd.get("items"):
        return None
    joint = calls[0].get("joint") or {}
    ad = joint.get("autodiff")
    if ad is None:
        return None
    f = np.array([it["fd"] for it in fd["items"]], dtype=np.float64)
    u = np.array([it["unc"] for it in fd["items"]], dtype=np.float64)
    return f, np.array([float(a) for a in ad], dtype=np.float64), u, fd["rtol"]


def changed(doc_a: dict, doc_b: dict) -> dict | None:
    """Compare two measurements of the same variant on two releases.

    Returns
    -------
    dict or None
        ``{"objective_same": bool, "gradient_changed": bool, "b_agrees": bool,
        "relative_change": float}`` (None when either lacks FD items or their
        items differ in number). ``relative_change`` is ||ad_a - ad_b|| over the larger
        of the two norms (in [0, 2]; it was over ``doc_a``'s alone, which made a change from
        a zero gradient read 1e+301).
    """
    a, b = _items(doc_a), _items(doc_b)
    if a is None or b is None or a[0].shape != b[0].shape:
        return None
    fa, ada, ua, rtol = a
    fb, adb, ub, _ = b
    scale = max(float(np.max(np.abs(fa))), 1e-300)
    same_obj = bool(np.all(np.abs(fa - fb) <= rtol * scale + ua + ub))
    with np.errstate(invalid="ignore"):
        diff = np.abs(ada - adb)
        changed_ = bool(np.any(~np.isfinite(ada) != ~np.isfinite(adb)) or np.any(diff > rtol * max(scale, float(np.nanmax(np.abs(ada))) if np.any(np.isfinite(ada)) else scale) + ua + ub))
    sig_b = ((doc_b.get("fd") or {}).get("calls") or [{}])[0].get("joint", {}).get("signature")
    den = max(float(np.linalg.norm(np.nan_to_num(ada))), float(np.linalg.norm(np.nan_to_num(adb))), 1e-300)
    rel = float(np.linalg.norm(np.nan_to_num(ada - adb)) / den)
    return {"objective_same": same_obj, "gradient_changed": changed_, "b_agrees": sig_b == "agrees", "relative_change": rel}


def differential(path, device: str, scale: str, current: str, *, other: str | None = None, bisect: bool = True,
                 timeout_s: float = 120.0, base_doc: dict | None = None, releases=None, log=None) -> dict | None:
    """Measure ``path`` on another release and, when autodiff changes, bisect for the first release that changes it.

    Parameters
    ----------
    path : path-like
        The variant folder (a neutral copy).
    device, scale : str
    current : str
        The Warp release of ``base_doc``.
    other : str, optional
        Release to compare with (default: the newest of
        :data:`defects4warp.envs.ENGINE_RELEASES` newer than ``current``; None, and no
        differential, when ``current`` is the newest).
    bisect : bool
        Bisect the releases between the two for the first change (default True).
    releases : iterable of str, optional
        The releases the bisection may measure (default :data:`defects4warp.envs.RELEASES`,
        every supported release; each is measured in its cached environment).
    timeout_s : float
        Wall-clock limit of each extra measurement.
    base_doc : dict
        The measurement on ``current`` (its FD items are compared).

    Returns
    -------
    dict or None
        ``{"current", "other", "compared": {release: changed() result},
        "first_change": release or None, "direction": "newer"|"older"}``, and, when
        autodiff changed, ``"bisected_against"`` (``other`` when it agrees with finite
        differences: a release in between has the new behaviour when its autodiff equals
        ``other``'s; else ``current``: when it differs from ``current``'s) and ``"bracket"``
        ([last release with the old behaviour, first with the new]; ``first_change`` is its
        second release only when no release of :data:`defects4warp.envs.RELEASES` lies
        between the two); None when no other release can be prepared (offline, not installed).
    """
    from ..envs import ENGINE_RELEASES, RELEASES, ReleaseEnvError, ensure_env, installed_warp_version
    from ..isolation import run_worker

    def python_for(r, log=None):
        return sys.executable if r == installed_warp_version() else str(ensure_env(r, log))


    cur = _v(current)
    if cur is None or base_doc is None:
        return None
    rel = sorted((r for r in (RELEASES if releases is None else releases) if _v(r) is not None), key=_v)
    if other is None:
        newer = [r for r in ENGINE_RELEASES if _v(r) > cur]
        other = newer[-1] if newer else None
    if other is None or _v(other) == cur:
        return None
    opts = differential_options(base_doc)
    measure = _measurer(path, python_for, run_worker, ReleaseEnvError, device=device, scale=scale, opts=opts,
                        timeout_s=timeout_s, base_doc=base_doc, log=log)
    compared = {}
    d_other = measure(other)
    c = changed(base_doc, d_other) if "error" not in d_other else None
    compared[other] = c if c is not None else {"error": d_other.get("error", "not comparable")}
    out = {"current": current, "other": other, "direction": "newer" if _v(other) > cur else "older",
           "compared": compared, "first_change": None,
           "current_calls_identical": (base_doc.get("determinism") or {}).get("calls_identical"),
           "repeated": repeated_calls(base_doc, d_other) if "error" not in d_other else None}
    if not c or not c["objective_same"] or not c["gradient_changed"]:
        return out
    return _bisect_change(out, compared, c, d_other, base_doc, measure, rel=rel, cur=cur, current=current,
                          other=other, bisect=bisect)


def _measurer(path, python_for, run_worker, env_error, *, device, scale, opts, timeout_s, base_doc, log):
    """:func:`differential`'s measurement of ``path`` on a release, cached per release (``{"error"}`` when it fails)."""
    docs = {}

    def measure(r):
        if r not in docs:
            try:
                py = python_for(r, log)
            except (env_error, OSError) as exc:
                docs[r] = {"error": str(exc)}
                return docs[r]
            # a captured script is measured as its script on the other release too (the worker
            # records the ScriptSpec it captured under "script")
            res = run_worker(path, device=device, scale=scale, options=opts, timeout_s=timeout_s, python=py,
                             script=base_doc.get("script"))
            docs[r] = res.doc or {"error": res.failure or "no result"}
        return docs[r]

    return measure


def _bisect_change(out, compared, c, d_other, base_doc, measure, *, rel, cur, current, other, bisect) -> dict:
    """:func:`differential`'s bisection between ``current`` and ``other`` for the first change, filling ``out``."""
    lo_v, hi_v = sorted([cur, _v(other)])
    # ascending; the behaviour switches once in between. ``current`` and ``other`` are the ends even when
    # they are not among ``releases``.
    seq = sorted({r for r in rel if lo_v <= _v(r) <= hi_v} | {current, other}, key=_v)
    newer = out["direction"] == "newer"
    lo, hi = 0, len(seq) - 1  # seq[lo] has the older behaviour, seq[hi] the newer one
    # Which behaviour a release in between has: when the other release agrees with finite differences,
    # whether its autodiff equals the other release's (the release that fixed the gradient is the first
    # with the agreeing behaviour, even when an earlier release changed the wrong gradient into another
    # wrong one); otherwise whether it differs from the release under test (the first change).
    to_other = bool(c.get("b_agrees"))
    out["bisected_against"] = other if to_other else current
    if bisect:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            d = measure(seq[mid])
            cm = changed(base_doc, d) if "error" not in d else None
            compared[seq[mid]] = cm if cm is not None else {"error": d.get("error", "not comparable")}
            if cm is None:
                break
            if to_other:
                co = changed(d_other, d)
                if co is None:
                    break
                is_newer = (not co["gradient_changed"]) if newer else co["gradient_changed"]
            else:
                is_newer = cm["gradient_changed"] if newer else not cm["gradient_changed"]
            if is_newer:
                hi = mid
            else:
                lo = mid
    out["first_change"] = seq[hi] if hi - lo == 1 and _adjacent(seq[lo], seq[hi]) else None
    out["bracket"] = [seq[lo], seq[hi]]
    return out


def _adjacent(a: str, b: str) -> bool:
    """Whether releases ``a`` < ``b`` have no supported release between them
    (:data:`defects4warp.envs.RELEASES`): only then is ``b`` the first release with the
    change. A bracket such as (1.0.2, 1.12.1), left open when a measurement in between failed,
    says only that the change happened somewhere in between."""
    from ..envs import RELEASES

    va, vb = _v(a), _v(b)
    return not any(va < _v(r) < vb for r in RELEASES)
