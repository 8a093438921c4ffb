"""Release: does the gradient change with the Warp release while the program does not?

Two kinds of evidence, both parent-side (they read the measurement document
or start more workers; nothing here runs in the worker):

* **Release differential** (:func:`differential`): when the gradient is
  wrong on the release under test, the same variant is measured again with
  a cheap probe list in the per-release environment of another release
  (:func:`defects4warp.envs.ensure_env`, or this interpreter for the installed
  release; the newest of :data:`defects4warp.envs.ENGINE_RELEASES` by default). If
  the objective's finite differences agree across the two releases while
  autodiff changes, Warp changed the adjoint; every supported release in
  between (:data:`defects4warp.envs.RELEASES`, 1.0.2 to 1.19.0) is a candidate
  of the bisection for the first one with the other release's behaviour (the
  first that computes the other release's gradient when that one agrees with
  finite differences, else the first that differs from the release under
  test), and the evidence table's ``release_changes`` names the classes its changelog entries
  fix. A first release is named only when no supported release lies between
  it and the last one with the old behaviour. Only when the other release
  agrees with finite differences is the change evidence of Warp's own adjoint
  defect: a program wrong on both releases is a taping bug whose wrong
  gradient changes with Warp's taping behaviour (1.13.0, 1.17.0, 1.19.0 change
  it by design), even when a release in between happens to compute it right
  (harbour-buoy-ballast-drift's reassigned vector component is right on
  1.4.2-1.6.2 only). When the bisection could not pin the first release (a
  measurement failed, or ``bisect=False``), the evidence is shared among the
  changelog entries of the releases the bracket leaves open.
* **Builtins measured defective** (:func:`builtin_findings`): a launched
  kernel that calls a builtin the conformance suite (:mod:`defects4warp.builtins`,
  ``docs/builtins.md``) measured ``wrong`` or ``zero`` on the running release
  is direct evidence of ``warp_adjoint_bug``, with the measured numbers, unless every
  kernel that reaches it agrees with finite differences in isolation (the per-launch
  check): then it is reported, not counted.

The first release of each change to adjoints and its changelog entry are the
evidence table's ``release_changes`` (:attr:`defects4warp.evidence_table.EvidenceTable.release_changes`;
source: the Warp changelog entries restated in ``docs/taxonomy.md`` ("Release
facts") and ``shared/reports/public-reports.md`` (P6, P7, P10-P13, P16-P19,
P21-P24), each measured in this corpus' cases where a case cites it); which
classes a program whose gradient changes at that release most likely has, and
how much, are the table's rows ``release_first_change:<release>`` (and
``...:no_copies`` where a copy adjoint can explain the change, as for
1.15.0/1.17.0, or 1.13.0 when a copy's destination is stored into before 1.17,
and the traced call made no copy; ``release_changed`` for a release without an
entry).
"""

from __future__ import annotations

import re
import sys

import numpy as np
from packaging.version import InvalidVersion, Version

from ..evidence_table import load_table
from ..probes import DIFFERENTIAL_PROBES as DIFFERENTIAL_PROBE_NAMES, AssessContext, Assessment, assessor

#: The evidence id a measured defect of a builtin or access pattern is cited under (default
#: ``builtin_adjoint_defect``); the evidence table says which class each supports (``y[i].x *= ...``
#: is the taxonomy's ``inplace_math``, not a defect of Warp's adjoint).
BUILTIN_EVIDENCE = {"[component_mul]": "builtin_component_mul_defect"}

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


@assessor("release", cites=("release_changed", "release_first_change:*"))
def assess_release(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """The release differential's assessment (:func:`assess_differential` of ``ctx.differential``,
    with the copies the trace of ``doc`` counted, under ``ctx.table``)."""
    ctx = ctx or AssessContext()
    copies = ((doc.get("trace") or {}).get("summary") or {}).get("copies")
    return assess_differential(ctx.differential, copies=copies, table=ctx.table)


def assess_differential(diff: dict | None, *, copies: int | None = None, table=None) -> Assessment:
    """Evidence from :func:`differential`'s result: a sentence and, when autodiff changes
    between the releases while finite differences do not, the structured evidence
    ``release_first_change:<release>`` (``release_changed`` for a release without a
    changelog entry in the table's ``release_changes``).

    When the other release's autodiff disagrees with finite differences too, the change is
    not evidence that Warp fixed an adjoint of its own: ``release_first_change:<release>``
    is cited only when its table row gives ``warp_adjoint_bug`` no weight (a changelog entry
    about taping behaviour, e.g. 1.13.0).

    When no first release was pinned (a measurement of the bisection failed, or it did not
    bisect), the evidence is shared among the releases the bracket leaves open: each release R after its first end
    up to its second contributes ``1/n`` of its id's weights (``release_first_change:R`` or
    ``release_changed``), so that an unmeasured bracket holding 1.18.0 credits 1.18.0's
    classes instead of reading the change as Warp's own defect.

    Parameters
    ----------
    diff : dict or None
    copies : int, optional
        The number of ``wp.copy``/``wp.clone`` calls the trace saw in the gradient call;
        when it is 0 and the evidence table has a row ``release_first_change:<release>:no_copies``
        (a changelog entry also about copy adjoints, which cannot explain the change then),
        that id is cited instead.
    table : defects4warp.evidence_table.EvidenceTable, optional
        The table whose rows are looked up (default: the engine's).
    """
    a = Assessment()
    if not diff:
        return a
    c = diff["compared"].get(diff["other"]) or {}
    if "error" in c:
        a.add("release", True, f"release differential not measured on Warp {diff['other']}: {c['error']}", None)
        return a
    if not c.get("gradient_changed"):
        _add_unchanged(a, diff, c)
        return a
    if not c.get("objective_same"):
        a.add("release", True, f"the objective itself differs between Warp {diff['current']} and {diff['other']}; "
              "no release differential", c)
        return a
    first = diff.get("first_change")
    table = table or load_table()
    entry = table.release_changes.get(first, "") if first else ""
    txt = (f"autodiff changes between Warp {diff['current']} and {diff['other']} while finite differences do not "
           f"(relative change {c['relative_change']:.3g}" + ("; the other release agrees with FD" if c.get("b_agrees") else "") + ")")
    bracket = diff.get("bracket")
    if first:
        txt += f"; first release where it changes: {first}" + (f" ({entry})" if entry else "")
    elif bracket and bracket[0] != bracket[1]:
        txt += (f"; it changes between {bracket[0]} and {bracket[1]} (not every release in between could be "
                "measured)")
    # structured evidence: its class weights are the rows release_first_change:<release>[:no_copies]
    # (or release_changed for a release without a changelog entry) of harness/engines/evidence_table.yaml
    if first:
        shares = {_change_id(first, copies, table): 1.0}
    else:
        shares = _bracket_shares(bracket, copies, table)
    data = {"first_change": first, "relative_change": c.get("relative_change")}
    a.facts["first_change"] = first
    if not c.get("b_agrees"):
        # Wrong on both releases: the change is not evidence that Warp fixed an adjoint of its own
        # (taping behaviour changes with the release by design: 1.13.0 consumes written arrays'
        # adjoints, 1.17.0 accumulates copy adjoints, ...). Only a changelog entry whose classes are
        # all taping classes is still cited; a row that would credit warp_adjoint_bug is not.
        txt += (f"; autodiff disagrees with finite differences on {diff['other']} too, so the change is not "
                "evidence that Warp fixed its adjoint")
        a.add("release", False, txt, diff)
        for eid, share in shares.items():
            if eid != "release_changed" and "warp_adjoint_bug" not in table.weights(eid):
                a.cite(eid, "release", txt, data, strength=share)
        return a
    a.add("release", False, txt, diff)
    for eid, share in shares.items():
        a.cite(eid, "release", txt, data, strength=share)
    return a


def _add_unchanged(a: Assessment, diff: dict, c: dict) -> None:
    """:func:`assess_differential`'s sentence when autodiff of call 1 is the same on both releases."""
    cur, oth = diff["current"], diff["other"]
    rep = diff.get("repeated")
    if rep and not rep["same"]:
        a.add("release", False, f"autodiff of gradient() call 1 is the same on Warp {cur} and {oth}, but repeated "
              f"calls are not: gradient norms relative to call 1 are {_ratios(rep['current'])} on {cur} and "
              f"{_ratios(rep['other'])} on {oth} (what carries over from one call to the next depends on "
              "the release)", dict(c, repeated=rep))
    elif rep:
        a.add("release", True, f"autodiff is the same on Warp {cur} and {oth} over {rep['calls']} gradient() calls "
              f"(call 1 element by element; gradient norms relative to call 1: {_ratios(rep['current'])} on both)",
              dict(c, repeated=rep))
    elif diff.get("current_calls_identical"):
        a.add("release", True, f"autodiff of gradient() call 1 is the same on Warp {cur} and {oth} (repeated "
              f"calls are identical on {cur}, so only call 1 was compared)", c)
    else:
        a.add("release", True, f"autodiff of gradient() call 1 is the same on Warp {cur} and {oth} (later calls "
              "not compared)", c)


def _change_id(release: str | None, copies: int | None, table) -> str:
    """The evidence id of a change first seen on ``release``: ``release_first_change:<release>``
    (``...:no_copies`` when the traced call made no copy and the table has that row) for a
    release of the table's ``release_changes``, else ``release_changed``."""
    if release not in table.release_changes:
        return "release_changed"
    eid = f"release_first_change:{release}"
    if copies == 0 and f"{eid}:no_copies" in table.rows:
        eid += ":no_copies"
    return eid


def _bracket_shares(bracket, copies, table) -> dict:
    """Evidence id -> share (summing to 1) over the supported releases after ``bracket[0]`` up to
    ``bracket[1]`` (:data:`defects4warp.envs.RELEASES`); ``{"release_changed": 1.0}`` without a
    bracket or when none of them lies inside it."""
    from ..envs import RELEASES

    if not bracket or _v(bracket[0]) is None or _v(bracket[1]) is None:
        return {"release_changed": 1.0}
    lo, hi = sorted((_v(bracket[0]), _v(bracket[1])))
    inside = [r for r in RELEASES if lo < _v(r) <= hi]
    if not inside:
        return {"release_changed": 1.0}
    shares = {}
    for r in inside:
        eid = _change_id(r, copies, table)
        shares[eid] = shares.get(eid, 0.0) + 1.0 / len(inside)
    return shares


def _ratios(xs) -> str:
    return ", ".join(f"{x:.4g}" for x in xs)


#: Parameter annotations of a value type (vectors, matrices, quaternions, transforms): Warp passes
#: them by value, so writing a component of such a parameter is a write to a local.
_VALUE_ANNOTATION = re.compile(r"\b(vec|mat|quat|transform|spatial_)\w*")
#: ``dtype=`` of an array annotation, and the element types Warp builds in (scalars, vec2-4,
#: matrices up to 4x4, quaternions, transforms, spatial types): any other is a user-defined type.
_ARRAY_DTYPE = re.compile(r"dtype\s*=\s*([\w.]+)")
_BUILTIN_DTYPE = re.compile(r"^(wp\.)?(float(16|32|64)?|u?int(8|16|32|64)?|bool|vec[234][hfdbsilu]?[bsil]?|"
                            r"mat(22|33|44|23|32|34|43)[hfd]?|quat[hfd]?|transform[hfd]?|spatial_(vector|matrix)[hfd]?)$")


def is_warp_function(node) -> bool:
    """Whether ``node`` is decorated as Warp kernel code (``@wp.kernel``, ``@wp.func``,
    ``@wp.func_grad(...)``, ``@kernel(...)``, ...): host functions are never looked up."""
    import ast

    for d in getattr(node, "decorator_list", ()):
        f = d.func if isinstance(d, ast.Call) else d
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if name in ("kernel", "func", "func_grad", "func_replay", "func_native"):
            return True
    return False


def access_patterns(node) -> set:
    """Access patterns of the conformance suite (``ACCESS`` in :mod:`defects4warp.builtins.suite`)
    that the function ``node`` uses.

    Array elements: ``[component_write]`` (``y[i].x = ...``), ``[component_add]``
    (``y[i].x += ...``), ``[component_mul]`` (``y[i].x *= ...``). Components of a local vector or
    matrix: ``[local_component_write]`` (``v[1] = ...``), ``[local_component_add]`` (``v[1] += ...``,
    ``v[1] -= ...``, ``v.x += ...``), ``[local_attribute_write]`` (``v.x = ...``; attributes ``x``,
    ``y``, ``z``, ``w`` only: other names are struct fields), ``[local_matrix_write]``
    (``m[0, 1] = ...``) and ``[local_matrix_add]`` (``m[0, 1] += ...``). A local copied by a plain
    assignment from another local (``w = u``): ``[local_alias]``; a conditional expression with a
    plain array load as a branch (``a[i] / b[i] if flag else a[i]``): ``[ternary_load]``. An in-place
    add or subtract on an array element (``a[i] += ...``): ``[element_write_add]``, and
    ``[vec9_element_add_twice]`` as well when the array's element type is not one of Warp's
    built-in scalar, vector or matrix types (a ``wp.types.vector`` of another length: Warp lowered
    those in-place ops differently before 1.5.0). A local is any name but a
    parameter annotated with another than a value type (an array, a struct) and a name bound to
    such a parameter (``a = out``); a vector or matrix parameter is passed by value, so it counts.
    """
    import ast

    params = set()
    custom = set()  # array parameters whose element type is not a Warp built-in type
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = node.args
        for x in a.posonlyargs + a.args + a.kwonlyargs:
            ann = ast.unparse(x.annotation) if x.annotation is not None else ""
            if "array" in ann or not _VALUE_ANNOTATION.search(ann):
                params.add(x.arg)
            m = _ARRAY_DTYPE.search(ann)
            if "array" in ann and m and not _BUILTIN_DTYPE.match(m.group(1)):
                custom.add(x.arg)
    # names bound to a parameter (or to such a name) are views of it, not locals
    grew = True
    while grew:
        grew = False
        for n in ast.walk(node):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in params:
                for t in n.targets:
                    if isinstance(t, ast.Name) and t.id not in params:
                        params.add(t.id)
                        grew = True
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.IfExp) and any(isinstance(b, ast.Subscript) and isinstance(b.value, ast.Name)
                                            and b.value.id in params for b in (n.body, n.orelse)):
            out.add("[ternary_load]")
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id not in params \
                and any(isinstance(t, ast.Name) for t in n.targets):
            out.add("[local_alias]")
        if isinstance(n, ast.AugAssign) and isinstance(n.op, (ast.Add, ast.Sub)) and isinstance(n.target, ast.Subscript) \
                and isinstance(n.target.value, ast.Name) and n.target.value.id in params:
            out.add("[element_write_add]")
            if n.target.value.id in custom:
                out.add("[vec9_element_add_twice]")
        tgts = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
        write = isinstance(n, ast.Assign)
        add = isinstance(n, ast.AugAssign) and isinstance(n.op, (ast.Add, ast.Sub))
        for t in tgts:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Subscript):
                if write:
                    out.add("[component_write]")
                elif add and isinstance(n.op, ast.Add):
                    out.add("[component_add]")
                elif isinstance(n.op, ast.Mult):
                    out.add("[component_mul]")
            elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id not in params \
                    and t.attr in ("x", "y", "z", "w"):
                if write:
                    out.add("[local_attribute_write]")
                elif add:
                    out.add("[local_component_add]")
            elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id not in params:
                matrix = isinstance(t.slice, ast.Tuple) and len(t.slice.elts) == 2
                if write:
                    out.add("[local_matrix_write]" if matrix else "[local_component_write]")
                elif add:
                    out.add("[local_matrix_add]" if matrix else "[local_component_add]")
    return out


def _describe(cells: list) -> str:
    parts = []
    for c in cells[:3]:
        if c["state"] == "zero":
            parts.append(f"{c['id']} zero" + (" (declared not differentiable)" if c.get("differentiable") is False
                                              else ""))
        else:
            parts.append(f"{c['id']} wrong (relative error {c['rel_err']:.3g})" if c.get("rel_err") is not None
                         else f"{c['id']} non-zero where finite differences are 0")
    more = f" and {len(cells) - 3} more" if len(cells) > 3 else ""
    return "; ".join(parts) + more


def agreeing_kernels(records: list) -> set:
    """Names of the kernels the per-launch check found to agree with finite differences in
    isolation (``ok`` True in :mod:`defects4warp.probes.launches`' records), under their Warp key
    (``make__locals__inner`` for a kernel defined in a function) and their plain name (``inner``),
    the two forms :func:`kernel_names` holds. A name that a kernel not found to agree also has (a
    failing or unchecked kernel, one of the same name in another file) is left out."""
    def plain(k):
        return str(k).split("__")[-1]

    ok = {r["kernel"] for r in records if r.get("ok") is True and r.get("kernel")}
    other = {r["kernel"] for r in records if r.get("ok") is not True and r.get("kernel")}
    return (ok | {plain(k) for k in ok}) - other - {plain(k) for k in other}


def builtin_findings(path, kernels: list, warp_version: str | None, *, device: str = "cpu", lookup=None,
                     agreeing=()) -> Assessment:
    """Builtins called by a launched kernel (or a ``@wp.func`` it calls, transitively, within the variant's
    files) that the conformance suite measured ``wrong`` or ``zero`` on this release.

    A function reached only from kernels that agree with finite differences in isolation
    (``agreeing``, the per-launch check's passing kernels) is reported but not counted
    (``data["counted"]`` False): its defective builtin does not move that kernel's adjoint (e.g. a
    local vector component written from constants, on a release where such writes have no adjoint).

    Parameters
    ----------
    path : path-like
        The variant folder.
    kernels : list[str]
        Names of the kernels launched during gradient() (from the trace).
    agreeing : iterable of str
        Kernels the per-launch check (:mod:`defects4warp.probes.launches`) found to agree with
        finite differences in isolation (default none).
    warp_version : str
    device : str
        Device of the run (committed data is CPU; other devices fall back to it).
    lookup : callable, optional
        ``lookup(release, device, names) -> list[dict]``; default :func:`defects4warp.builtins.lookup`
        (the committed results in harness/data/builtins).

    Returns
    -------
    Assessment
        One ``release`` finding per (function, builtin) with the measured overloads and numbers;
        its ``data["evidence"]`` is the id the engine cites it under (:data:`BUILTIN_EVIDENCE`,
        default ``builtin_adjoint_defect``; the evidence table's rows give the classes).
    """
    a = Assessment()
    if _v(warp_version) is None or not kernels:
        return a
    if lookup is None:
        from ..builtins import load, lookup

        doc = load(str(warp_version), device) or load(str(warp_version), "cpu")
        totals = {}
        for c in (doc or {}).get("cells", {}).values():
            totals[c["builtin"]] = totals.get(c["builtin"], 0) + 1
    else:
        totals = None
    from ..probes.source import called_names, function_defs, ran_functions

    defs = function_defs(path)
    live = ran_functions(path, set(kernels) - set(agreeing), defs)
    for name in sorted(ran_functions(path, set(kernels), defs)):
        fname, node = defs[name] if name in defs else (None, None)
        if node is None:
            continue
        names = called_names(node) | (access_patterns(node) if is_warp_function(node) else set())
        cells = lookup(str(warp_version), device, names)
        by = {}
        for c in cells:
            by.setdefault(c["builtin"], []).append(c)
        for b, cs in sorted(by.items()):
            n = (totals or {}).get(b, len(cs))
            what = f"wp.{b}" if not b.startswith("[") else f"the access pattern {b}"
            on = (f"Warp {warp_version}" if not cs[0].get("bracket") else
                  f"Warp {cs[0]['bracket'][0]} and {cs[0]['bracket'][1]}, the measured releases around {warp_version}")
            counted = name in live
            a.add("release", False, f"{fname}:{node.lineno}: kernel code {name} uses {what}, whose adjoint the "
                  f"builtins conformance suite measured defective on {on} ({len(cs)} of {n} "
                  f"overloads: {_describe(cs)}; docs/builtins.md)"
                  + ("" if counted else "; every kernel that reaches it agrees with finite differences in "
                     "isolation, so it is not counted"),
                  {"builtin": b, "function": name, "overloads": [c["id"] for c in cs], "counted": counted,
                   "evidence": BUILTIN_EVIDENCE.get(b, "builtin_adjoint_defect")})
    return a


def kernel_names(doc: dict) -> list:
    """Names of the kernels launched during call 1 (trace, else the per-launch record)."""
    from ..probes.source import launched_kernels

    names = launched_kernels(doc) or {k["kernel"] for k in (doc.get("launches") or {}).get("kernels", [])}
    return sorted(n for n in names if n)


@assessor("builtins", cites=("builtin_adjoint_defect", *BUILTIN_EVIDENCE.values()), probe="release")
def assess_builtins(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """The builtins' assessment: :func:`builtin_findings` of the kernels ``doc`` launched (none
    without ``ctx.path``), those the per-launch check found agreeing (``ctx.assessed["launches"]``)
    not counted, and per evidence id (``builtin_adjoint_defect``, :data:`BUILTIN_EVIDENCE`) one
    structured evidence naming the counted builtins, of strength their number."""
    ctx = ctx or AssessContext()
    if ctx.path is None:
        return Assessment()
    agreeing = agreeing_kernels(ctx.facts("launches").get("kernels") or [])
    a = builtin_findings(ctx.path, kernel_names(doc), ctx.warp_version, agreeing=agreeing)
    per_id = {}
    for e in a.evidence:
        if not e["clean"] and (e.get("data") or {}).get("counted", True):
            eid = (e.get("data") or {}).get("evidence", "builtin_adjoint_defect")
            per_id.setdefault(eid, []).append((e.get("data") or {}).get("builtin"))
    for eid, names in sorted(per_id.items()):
        a.cite(eid, "release", "", names, strength=float(len(names)))
    return a
