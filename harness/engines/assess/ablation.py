"""The ablation's assessment: what the gradients without the hand-written adjoints say (pure, no Warp).

:mod:`defects4warp.probes.ablation` measures, in the worker, the gradient with every hand-written
adjoint removed (``native``) and stopped (``zero``) at the points the step sweep confirmed a
disagreement at, and compares them coordinate by coordinate
(:func:`defects4warp.probes.ablation.coordinates`).

Reading (:func:`read`): on the items the step sweep confirmed, does ``native`` agree with finite
differences (the FD probe's test, or the sweep's own reading of the item's differences)? And on the
coordinates of those points, where the hand-written adjoints change the gradient, does removing
them equal stopping them (``f`` flat there) or not (``f`` smooth there)?
Agreeing, and changing only where ``f`` is flat: the whole disagreement is the hand-written
surrogate's (``surrogate``). Agreeing, and changing where ``f`` is smooth: its hand-written
adjoint is not its derivative (``adjoint_not_derivative``). Not agreeing: something else is wrong
(``elsewhere``), and the ablation says nothing about the hand-written adjoint.
"""

from __future__ import annotations

import numpy as np

from ...measure import compare
from . import AssessContext, Assessment, assessor


#: The readings of :func:`read`.
READINGS = ("surrogate", "adjoint_not_derivative", "elsewhere")


def _fd_items(doc: dict, point: str) -> list:
    fd = doc.get("fd") or {}
    return list((fd.get("perturbed") or {}).get("items") or []) if point == "perturbed" else list(fd.get("items") or [])


def read(doc: dict) -> dict:
    """What the ablation says about the disagreements the step sweep confirmed (pure, no Warp).

    On each ``confirmed`` sweep item at the given or perturbed point (``doc["sweep"]["items"]``), the
    ``native`` value (hand-written adjoints removed) is compared with the item's central difference
    ``fd`` by the FD probe's own test (:func:`defects4warp.measure.compare.mismatch`: ``|native - fd| <=
    rtol max|fd| + rtol |fd| + unc``, ``rtol`` and ``max|fd|`` over the items of the same kind at that
    point, as the sweep takes them). Then, over the coordinates of those points
    (:func:`defects4warp.probes.ablation.coordinates`):
    where the hand-written adjoints change the gradient, is the function flat (removing its adjoint
    equals stopping it) or smooth?

    ``elsewhere``: ``native`` disagrees on a confirmed item. ``adjoint_not_derivative``: it agrees on
    every one, and the hand-written adjoints change the gradient on a coordinate where the function's
    own derivative is not zero. ``surrogate``: it agrees on every one, and they change it only where
    that derivative is zero.

    Returns
    -------
    dict
        ``reading`` (one of :data:`READINGS`, or None: not measured, not restored bit for bit, a
        confirmed item it did not cover, or nothing changed), ``why`` (when None), ``functions``,
        ``items`` (per confirmed item: ``point``, ``item``, ``where``, ``program``, ``native``, ``zero``,
        ``fd``, ``native_agrees``), ``coordinates`` (the sums of
        :func:`defects4warp.probes.ablation.coordinates` over those points).
    """
    abl = doc.get("ablation") or {}
    out = {"reading": None, "functions": [f["name"] for f in abl.get("functions", [])], "items": []}
    if abl.get("status") != "measured":
        out["why"] = f"not measured: {abl.get('reason', 'no ablation in the document')}"
        return out
    if not (abl.get("restored") or {}).get("identical"):
        out["why"] = "the program's gradient after restoring its adjoints is not bit-identical to the one before"
        return out
    rtol = float((doc.get("fd") or {}).get("rtol", compare.RTOL["float32"]))
    for r in [r for r in (doc.get("sweep") or {}).get("items", []) if r.get("verdict") == "confirmed"]:
        item = _item(abl, _fd_items(doc, r.get("point")), r, rtol, (doc.get("fd") or {}).get("resolution_factor", 4.0))
        if item is None:
            out["why"] = f"a confirmed item ({r.get('point')} point) the ablation did not measure"
            return out
        out["items"].append(item)
    keys = ("n", "changed", "changed_where_flat", "changed_where_smooth")
    coords = [abl["points"][p].get("coordinates") for p in sorted({i["point"] for i in out["items"]})]
    if not out["items"] or None in coords:
        out["why"] = "no confirmed disagreement" if not out["items"] else "no coordinate comparison measured"
        return out
    out["coordinates"] = {k: sum(c[k] for c in coords) for k in keys}
    out["examples"] = [e for c in coords for e in c.get("examples", [])][:4]
    if not out["coordinates"]["changed"]:
        out["why"] = "the hand-written adjoints change no coordinate of the gradient"
    elif not all(i["native_agrees"] for i in out["items"]):
        out["reading"] = "elsewhere"
    elif out["coordinates"]["changed_where_smooth"]:
        out["reading"] = "adjoint_not_derivative"
    else:
        out["reading"] = "surrogate"
    return out


def _item(abl: dict, items: list, rec: dict, rtol: float, resolution_factor: float) -> dict | None:
    """One confirmed sweep item (``rec``: FD item ``rec["item"]`` at point ``rec["point"]``) with the
    ablation's values; None when the ablation did not measure it.

    ``native_agrees``: the value with the hand-written adjoints removed passes the FD probe's test at the
    base step, or the step sweep's own reading of the item's differences
    (:func:`defects4warp.measure.compare.sweep_verdict`, with the noise of each difference rebuilt from the
    item's ``unc`` = ``resolution_factor`` sigma / (sqrt(2) s)) explains it as a kink, a staircase or
    round-off, as it would explain an autodiff value (a weight within the base step of a clamp's corner)."""
    pt, j = rec.get("point"), rec.get("item")
    vals = (abl.get("points") or {}).get(pt)
    if vals is None or j is None or j >= len(items) or "native" not in vals:
        return None
    same = [i for i, it in enumerate(items) if it["kind"] == items[j]["kind"]]
    fd = np.array([items[i]["fd"] for i in same], dtype=float)
    unc = np.array([items[i]["unc"] for i in same], dtype=float)
    native = np.array([float(vals["native"][i]) for i in same])
    agrees = not bool(compare.mismatch(native, fd, rtol, None, unc)[same.index(j)])
    if not agrees and rec.get("forward") and rec.get("central"):
        uc = [items[j]["unc"] / (resolution_factor * t) for t in rec["steps"]]
        verdict = compare.sweep_verdict(native[same.index(j)], rec["forward"], rec["backward"], rec["central"],
                                        [2.0 * u for u in uc[:len(rec["forward"])]], uc, rtol)
        agrees = verdict in ("kink", "kink_nearby", "staircase", "precision")
    return {"point": pt, "item": j, "where": _where(items[j]), "program": float(vals["program"][j]),
            "native": float(vals["native"][j]), "zero": float(vals["zero"][j]), "fd": float(items[j]["fd"]),
            "native_agrees": agrees}


def _where(it: dict) -> str:
    return f"{it['param']}[{it['index']}]" if it.get("kind") == "coord" else "a random direction"


_SENTENCES = {
    "surrogate": "without the hand-written adjoint(s) the gradient agrees with finite differences on every confirmed "
                 "disagreement, and they change it only where removing them equals stopping them: the function(s) are "
                 "flat there (their own derivative adds nothing), so the disagreement is the hand-written surrogate's",
    "adjoint_not_derivative": "without the hand-written adjoint(s) the gradient agrees with finite differences on "
                              "every confirmed disagreement, and they change it where removing them differs from "
                              "stopping them: the function(s) are smooth there and their hand-written adjoint is not "
                              "their derivative",
    "elsewhere": "without the hand-written adjoint(s) the gradient still disagrees with finite differences: something "
                 "other than the hand-written adjoint is wrong (the ablation says nothing about it)",
}


@assessor("ablation", cites=("ablation:adjoint_not_derivative",))
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """Evidence entry of the ablation (none when it did not run). Facts: :func:`read`'s result
    (``reading``, ``items``, ``functions``, ``why``)."""
    a = Assessment()
    if "ablation" not in doc:
        return a
    r = read(doc)
    a.facts.update(r)
    names = ", ".join(r["functions"]) or "none found"
    if r["reading"] is None:
        a.add("ablation", True, f"ablation of the hand-written adjoint(s) ({names}): {r['why']}", None)
        return a
    c = r["coordinates"]
    nums = "; ".join(f"{i['where']} ({i['point']}): program {i['program']:.4g}, without {i['native']:.4g}, stopped "
                     f"{i['zero']:.4g}, finite differences {i['fd']:.4g}" for i in r["items"])
    nums += (f"; of {c['n']} coordinates the adjoint(s) change {c['changed']}, {c['changed_where_flat']} where the "
             f"function is flat, {c['changed_where_smooth']} where it is smooth")
    a.add("ablation", r["reading"] != "adjoint_not_derivative",
          f"ablation of the hand-written adjoint(s) of {names}: {_SENTENCES[r['reading']]} ({nums})", r["items"])
    return a


def bug_evidence(doc: dict, ctx: AssessContext) -> Assessment:
    """``ablation:adjoint_not_derivative`` when the ablation read it (see :func:`read`)."""
    a = Assessment()
    facts = ctx.facts("ablation")
    if facts.get("reading") == "adjoint_not_derivative":
        a.cite("ablation:adjoint_not_derivative", "ablation", data={"functions": facts["functions"],
                                                                    "items": len(facts["items"])})
    return a
