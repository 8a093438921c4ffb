"""Release: does the gradient change with the Warp release while the program does not?

Two kinds of evidence, both parent-side (they read the measurement document
or start more workers; nothing here runs in the worker):

* **Release differential** (:func:`differential`): when the gradient is
  wrong on the release under test, the same variant is measured again with
  a cheap probe list in the per-release environment of another release
  (:func:`defects4warp.envs.ensure_env`, or this interpreter for the installed
  release; the newest of :data:`defects4warp.envs.ENGINE_RELEASES` by default: the
  supported releases from 1.12.1, whose changes the table below covers). If the objective's finite differences agree across the two
  releases while autodiff changes, Warp itself changed the adjoint; the
  releases in between are bisected for the first one where autodiff changes,
  and :data:`RELEASE_CHANGES` names the classes its changelog entries fix.
* **Builtins with documented adjoint defects** (:func:`builtin_findings`):
  a launched kernel that calls one of :data:`ADJOINT_DEFECTS` on a release the
  table names is direct evidence of ``warp_adjoint_bug``.

Sources of both tables: the Warp changelog entries restated in
``docs/taxonomy.md`` ("Release facts") and ``shared/reports/public-reports.md``
(P6, P7, P10-P13, P16-P19, P21-P24), each measured in this corpus' cases where
a case cites it.
"""

from __future__ import annotations

import sys

import numpy as np
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from . import Assessment

#: First release with a change to adjoints -> (changelog entry, classes a
#: program whose gradient changes at that release most likely has, weight).
RELEASE_CHANGES = {
    "1.13.0": ("array-store adjoints read and zero the output adjoint: backward() consumes the adjoints of "
               "written arrays (retain_grad opts out)", {"overwrite": 0.6, "double_count": 0.5, "stale_gradient_read": 0.5}),
    "1.14.0": ("adjoints of component writes to array elements and struct fields fixed; wp.curlnoise and "
               "vector wp.sign adjoints", {"warp_adjoint_bug": 1.0}),
    "1.15.0": ("wp.copy adjoint with differing source and destination offsets fixed", {"copy_adjoint": 1.0}),
    "1.16.0": ("a @wp.func shared by kernels with and without backward no longer loses its adjoint",
               {"backward_disabled": 0.6, "warp_adjoint_bug": 0.6}),
    "1.17.0": ("taped wp.copy/wp.clone/assign accumulate into the source; conditional expressions over array "
               "elements fixed", {"copy_adjoint": 1.0, "warp_adjoint_bug": 0.6}),
    "1.18.0": ("kernel-level enable_backward=True reaches called functions; array-rooted composite += fixed; "
               "composite *= refused with backward enabled", {"backward_disabled": 0.7, "warp_adjoint_bug": 0.7,
                                                              "inplace_math": 0.3}),
    "1.19.0": ("loop adjoints fixed: trip counts of strided and reversed ranges, sibling inner loops",
               {"dynamic_loop": 1.0, "warp_adjoint_bug": 0.5}),
}

#: Builtins or constructs whose adjoint Warp documents as missing or wrong
#: before a release: name -> (releases where it is wrong, changelog entry).
ADJOINT_DEFECTS = {
    "curlnoise": ("<1.14", "wp.curlnoise had no adjoint (zero) before 1.14.0 (changelog 1.14.0, GH-1012)"),
    "sign": ("<1.14", "the adjoint of vector wp.sign was that of abs before 1.14.0 (GH-1466)"),
    "closest_point_edge_edge": ("<1.14", "the distance adjoint of wp.closest_point_edge_edge lost precision for "
                                "nearly parallel edges before 1.14.0 (changelog 1.14.0, GH-1437)"),
}

#: Weight of a builtin from :data:`ADJOINT_DEFECTS` in a launched kernel on a release where it is defective.
BUILTIN_WEIGHT = 0.8
#: Weight of a release differential (autodiff changes, FD does not) spread over the first changing release's classes.
DIFFERENTIAL_WEIGHT = 1.5

#: Probes the differential runs on the other release (cheap: one gradient call, a few FD items).
DIFFERENTIAL_PROBES = {"probes": ["determinism", "noise", "fd"],
                       "knobs": {"determinism": {"calls": 1}, "fd": {"coords": 5, "dirs": 2, "perturbed_dirs": 0}}}


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
        items differ in number).
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
    rel = float(np.linalg.norm(np.nan_to_num(ada - adb)) / max(np.linalg.norm(np.nan_to_num(ada)), 1e-300))
    return {"objective_same": same_obj, "gradient_changed": changed_, "b_agrees": sig_b == "agrees", "relative_change": rel}


def differential(path, device: str, scale: str, current: str, *, other: str | None = None, bisect: bool = True,
                 timeout_s: float = 120.0, base_doc: dict | None = None, log=None) -> dict | None:
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
        :data:`defects4warp.envs.ENGINE_RELEASES` that differs from ``current``; the
        oldest when ``current`` is the newest).
    bisect : bool
        Bisect the releases between the two for the first change (default True).
    timeout_s : float
        Wall-clock limit of each extra measurement.
    base_doc : dict
        The measurement on ``current`` (its FD items are compared).

    Returns
    -------
    dict or None
        ``{"current", "other", "compared": {release: changed() result},
        "first_change": release or None, "direction": "newer"|"older"}``;
        None when no other release can be prepared (offline, not installed).
    """
    from ..envs import ENGINE_RELEASES, ReleaseEnvError, ensure_env
    from ..isolation import run_worker
    from ..runner import installed_warp_version

    def python_for(r, log=None):
        return sys.executable if r == installed_warp_version() else str(ensure_env(r, log))


    cur = _v(current)
    if cur is None or base_doc is None:
        return None
    rel = sorted((r for r in ENGINE_RELEASES if _v(r) is not None), key=_v)
    if other is None:
        newer = [r for r in rel if _v(r) > cur]
        other = newer[-1] if newer else None
    if other is None or _v(other) == cur:
        return None
    opts = {**DIFFERENTIAL_PROBES, "seed": (base_doc.get("options") or {}).get("seed", 0)}
    docs = {}

    def measure(r):
        if r not in docs:
            try:
                py = python_for(r, log)
            except (ReleaseEnvError, OSError) as exc:
                docs[r] = {"error": str(exc)}
                return docs[r]
            # a captured script is measured as its script on the other release too (the worker
            # records the ScriptSpec it captured under "script")
            res = run_worker(path, device=device, scale=scale, options=opts, timeout_s=timeout_s, python=py,
                             script=base_doc.get("script"))
            docs[r] = res.doc or {"error": res.failure or "no result"}
        return docs[r]

    compared = {}
    d_other = measure(other)
    c = changed(base_doc, d_other) if "error" not in d_other else None
    compared[other] = c if c is not None else {"error": d_other.get("error", "not comparable")}
    out = {"current": current, "other": other, "direction": "newer" if _v(other) > cur else "older",
           "compared": compared, "first_change": None}
    if not c or not c["objective_same"] or not c["gradient_changed"]:
        return out
    lo_v, hi_v = sorted([cur, _v(other)])
    # ascending; the behaviour switches once in between. ``current`` and ``other`` are the ends even when
    # they are not in ENGINE_RELEASES (an older release under test): only engine-era releases are bisected.
    seq = sorted({r for r in rel if lo_v <= _v(r) <= hi_v} | {current, other}, key=_v)
    newer = out["direction"] == "newer"
    lo, hi = 0, len(seq) - 1  # seq[lo] has the older behaviour, seq[hi] the newer one
    if bisect:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            d = measure(seq[mid])
            cm = changed(base_doc, d) if "error" not in d else None
            compared[seq[mid]] = cm if cm is not None else {"error": d.get("error", "not comparable")}
            if cm is None:
                break
            is_newer = cm["gradient_changed"] if newer else not cm["gradient_changed"]
            if is_newer:
                hi = mid
            else:
                lo = mid
    out["first_change"] = seq[hi] if hi - lo == 1 else None
    return out


def assess_differential(diff: dict | None, *, weight: float = DIFFERENTIAL_WEIGHT, copies: int | None = None) -> Assessment:
    """Evidence and class weights from :func:`differential`'s result.

    ``copies``: the number of ``wp.copy``/``wp.clone`` calls the trace saw in
    the gradient call; when it is 0, changelog entries about copy adjoints
    cannot explain the change and ``copy_adjoint`` is dropped."""
    a = Assessment()
    if not diff:
        return a
    c = diff["compared"].get(diff["other"]) or {}
    if "error" in c:
        a.add("release", True, f"release differential not measured on Warp {diff['other']}: {c['error']}", None)
        return a
    if not c.get("gradient_changed"):
        a.add("release", True, f"autodiff is the same on Warp {diff['current']} and {diff['other']}: the program's "
              "gradient does not depend on the release", c)
        return a
    if not c.get("objective_same"):
        a.add("release", True, f"the objective itself differs between Warp {diff['current']} and {diff['other']}; "
              "no release differential", c)
        return a
    first = diff.get("first_change")
    entry, classes = RELEASE_CHANGES.get(first, ("", {"warp_adjoint_bug": 1.0})) if first else ("", {"warp_adjoint_bug": 1.0})
    if copies == 0 and len(classes) > 1:
        classes = {k: v for k, v in classes.items() if k != "copy_adjoint"}
    txt = (f"autodiff changes between Warp {diff['current']} and {diff['other']} while finite differences do not "
           f"(relative change {c['relative_change']:.3g}" + ("; the other release agrees with FD" if c.get("b_agrees") else "") + ")")
    if first:
        txt += f"; first release where it changes: {first}" + (f" ({entry})" if entry else "")
    a.add("release", False, txt, diff)
    total = sum(classes.values()) or 1.0
    for k, w in classes.items():
        a.weigh(k, weight * w / total * len(classes) ** 0.5)
    # structured evidence: its class weights are the rows release_first_change:<release>[:no_copies]
    # (or release_changed when no first release was found) of harness/engines/evidence_table.yaml
    eid = f"release_first_change:{first}" if first in RELEASE_CHANGES else "release_changed"
    if first in RELEASE_CHANGES and copies == 0 and "copy_adjoint" in RELEASE_CHANGES[first][1] \
            and len(RELEASE_CHANGES[first][1]) > 1:
        eid += ":no_copies"
    a.cite(eid, "release", txt, {"first_change": first, "relative_change": c.get("relative_change")})
    a.facts["first_change"] = first
    return a


def builtin_findings(path, kernels: list, warp_version: str | None, *, table=None) -> Assessment:
    """Builtins of :data:`ADJOINT_DEFECTS` called by a launched kernel (or a
    ``@wp.func`` it calls, transitively, within the variant's files) on a
    release where their adjoint is documented as defective.

    Parameters
    ----------
    path : path-like
        The variant folder.
    kernels : list[str]
        Names of the kernels launched during gradient() (from the trace).
    warp_version : str
    table : dict, optional
        Overrides :data:`ADJOINT_DEFECTS`.
    """
    a = Assessment()
    table = ADJOINT_DEFECTS if table is None else table
    v = _v(warp_version)
    if v is None or not kernels:
        return a
    live = {k: t for k, t in table.items() if SpecifierSet(t[0]).contains(v, prereleases=True)}
    if not live:
        return a
    from .source import called_names, function_defs, ran_functions

    defs = function_defs(path)
    for name in sorted(ran_functions(path, set(kernels), defs)):
        fname, node = defs[name] if name in defs else (None, None)
        if node is None:
            continue
        for b in sorted(called_names(node) & set(live)):
            a.add("release", False, f"{fname}:{node.lineno}: kernel code {name} calls wp.{b} on Warp {warp_version}: "
                  f"{live[b][1]}", {"builtin": b, "function": name})
            a.weigh("warp_adjoint_bug", BUILTIN_WEIGHT)
    return a


def kernel_names(doc: dict) -> list:
    """Names of the kernels launched during call 1 (trace, else the per-launch record)."""
    from .source import launched_kernels

    names = launched_kernels(doc) or {k["kernel"] for k in (doc.get("launches") or {}).get("kernels", [])}
    return sorted(n for n in names if n)
