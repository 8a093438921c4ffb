"""Reading a measurement document: the comparisons it holds and its signature.

Used by the reference engine and the ``fd-only`` baseline; ground truth
(``defects4warp validate``) is judged by the independent oracle
(:mod:`defects4warp.oracle`), which shares none of this.
"""

from __future__ import annotations

from .compare import combine


def comparisons(doc: dict) -> list:
    """(label, signature dict) for every autodiff-vs-truth comparison measured.

    With a reference gradient, the reference comparisons replace the finite
    differences at the given point (the problem says FD cannot judge there).
    """
    out = []
    ref = doc.get("reference")
    fd = doc.get("fd") or {}
    if ref:
        for k, c in enumerate(ref["calls"], start=1):
            out.append((f"call {k} vs reference_gradient", c))
        return out
    for k, c in enumerate(fd.get("calls", []), start=1):
        if c.get("elements"):
            out.append((f"call {k} vs finite differences (elements)", c["elements"]))
        if c.get("directions"):
            out.append((f"call {k} vs finite differences (random directions)", c["directions"]))
    pert = fd.get("perturbed")
    if pert:
        if pert.get("elements"):
            out.append(("perturbed point vs finite differences (elements)", pert["elements"]))
        if pert.get("directions"):
            out.append(("perturbed point vs finite differences (random directions)", pert["directions"]))
    tr = (doc.get("train") or {}).get("comparison")
    if tr:
        for key in ("elements", "directions"):
            if tr.get(key):
                out.append((f"after train() vs finite differences ({key})", tr[key]))
    return out


def signature_of(doc: dict) -> str:
    """The signature of a measurement document (see :mod:`defects4warp.taxonomy`)."""
    det = doc.get("determinism", {})
    nan = doc.get("nan_scan", {})
    if nan.get("gradient_nonfinite"):
        return "nan_inf"
    if det.get("growth"):
        return "growth"
    comps = comparisons(doc)
    first = [c["signature"] for label, c in comps if label.startswith("call 1 ")]
    if det.get("first_call_differs") and all(s == "agrees" for s in first):
        return "iteration"
    call1 = [c for label, c in comps if label.startswith("call 1 ")]
    if call1:
        el = call1[0]["signature"]
        if el not in ("agrees", "unresolved"):
            return el
        rest = [c["signature"] for c in call1[1:] if c["signature"] not in ("agrees", "unresolved")]
        if rest:
            # sampled elements agree (or are below resolution) while a random direction does not
            return rest[0] if el == "unresolved" else "sparse"
    return combine(c["signature"] for _, c in comps)


def worst_relative_error(doc: dict) -> float | None:
    """The largest relative error over all comparisons (inf for NaN/inf
    gradients), or None when nothing was compared."""
    if (doc.get("nan_scan") or {}).get("gradient_nonfinite"):
        return float("inf")
    errs = [c["relative_error"] for _, c in comparisons(doc)]
    return max(errs) if errs else None
