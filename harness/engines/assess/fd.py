"""The finite-difference probe's assessment: every autodiff-vs-truth comparison, in words, and the
evidence behind the class of a bug that the comparisons carry (an exact factor and its size, params
whose gradient alone is zero).

:mod:`defects4warp.probes.fd` measures the items and their comparisons; this reads the document.
"""

from __future__ import annotations

from ...measure.judge import comparisons
from . import AssessContext, Assessment, Evidence, assessor


@assessor("fd", cites=("factor_2_or_3", "factor_reduction_size", "factor_equals_seed_size", "param_gradient_zero"))
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """Evidence entries of every autodiff-vs-truth comparison measured
    (:func:`defects4warp.measure.judge.comparisons`: finite differences, and the
    problem's ``reference_gradient()`` where it has one; entries of the latter
    are the ``reference`` probe's), and finite differences that disagree with
    the reference gradient.

    Facts: ``comparisons`` (the list of (label, signature dict)) and
    ``fd_vs_reference`` (the reference probe's comparison of finite
    differences with ``reference_gradient()``, or None).
    """
    a = Assessment()
    comps = comparisons(doc)
    for label, c in comps:
        probe_name = "fd" if "finite" in label else "reference"
        if c["signature"] == "agrees":
            extra = f", {c['n_unresolved']} below resolution" if c.get("n_unresolved") else ""
            a.add(probe_name, True, f"{label}: agrees on {c['n'] - c.get('n_unresolved', 0)} checked{extra} "
                  f"(relative error {c['relative_error']:.2g})", None)
        elif c["signature"] == "unresolved":
            a.add(probe_name, True, f"{label}: all {c['n']} items below the finite-difference resolution "
                  "(unresolved, not agreement)", None)
        else:
            text = (f"{label}: {c['n_mismatch']} of {c['n'] - c.get('n_unresolved', 0)} resolved items disagree, "
                    f"relative error {c['relative_error']:.3g}, signature {c['signature']}")
            if c.get("factor") is not None:
                text += f" (factor {c['factor']:.6g})"
            a.add(probe_name, False, text, {k: c.get(k) for k in ("mismatched", "factor", "zero_fraction")})
    ref = doc.get("reference") or {}
    fd_vs_ref = ref.get("fd_vs_reference")
    if fd_vs_ref and fd_vs_ref["signature"] != "agrees":
        a.add("reference", False, f"finite differences disagree with reference_gradient() (relative error "
              f"{fd_vs_ref['relative_error']:.3g}): FD cannot judge here", None)
    a.facts.update(comparisons=comps, fd_vs_reference=fd_vs_ref)
    return a


def zero_params(doc: dict) -> list:
    """Params whose checked elements are all exactly zero in call 1 while finite differences are not."""
    calls = (doc.get("fd") or {}).get("calls") or []
    if not calls or doc.get("reference") or not calls[0].get("elements"):
        return []
    per = calls[0]["elements"].get("per_param", {})
    return sorted(k for k, s in per.items() if s["signature"] == "zero")


def flat_params(doc: dict) -> list:
    """Params whose autodiff and finite differences are both exactly zero."""
    calls = (doc.get("fd") or {}).get("calls") or []
    per = (calls[0].get("elements") or {}).get("per_param", {}) if calls else {}
    return sorted(k for k, s in per.items() if s["ad_zero"] and s["fd_zero"])


def comparison_factor(comps) -> float | None:
    """The exact factor of the first comparison that found one (autodiff / truth), or None."""
    for label, c in comps:
        if c.get("factor") is not None:
            return c["factor"]
    return None


def joint_factor(doc: dict) -> float | None:
    """The exact factor of call 1's joint comparison (elements and directions), or None."""
    calls = (doc.get("fd") or {}).get("calls") or []
    if calls:
        return (calls[0].get("joint") or {}).get("factor")
    return None


def factor_evidence(factor: float | None, seeds: list, *, reduction: bool = True,
                    max_reduction: int = 10**6, extents: list | None = None) -> tuple:
    """Structured evidence from the size of an exact factor.

    Parameters
    ----------
    factor : float or None
        autodiff / truth, constant over the items.
    seeds : list[int]
        Element counts of the arrays the trace saw seeded by ``backward()``.
    reduction : bool
        Cite ``factor_reduction_size`` for an integer > 2 (v3: not when a kernel fails alone).
    max_reduction : int
        Largest factor read as the size of a reduction (default 10^6: a
        blown-up gradient, e.g. 2.8e7 x, is not a mean over that many elements).
    extents : list[int], optional
        Element counts the traced call has (array sizes and axes, launch grids:
        :func:`defects4warp.probes.trace.element_counts`). When given, an integer factor
        is read as a reduction's size only if it is one of them (a mean over N elements
        needs N elements somewhere); None (no trace): every integer, as before.

    Returns
    -------
    (list[Evidence], note)
        ``factor_2_or_3`` (2 or 3, >= 1), ``factor_reduction_size`` (an integer
        > 2 or its reciprocal, within 1 %), ``factor_equals_seed_size`` (once
        per seeded array of that many elements); note: one sentence or None.
    """
    ev, note = [], None
    if factor is None or factor == 0:
        return ev, note
    mag = abs(factor) if abs(factor) >= 1 else 1.0 / abs(factor)
    near = round(mag)
    # a reduction over at most max_reduction elements; past that every number is "an integer within 1 %"
    integral = 2 <= near <= max_reduction and abs(mag - near) <= 1e-2 * mag
    if integral and near in (2, 3) and abs(factor) >= 1:
        ev.append(Evidence("factor_2_or_3", "fd", f"exact factor {factor:.6g}", {"factor": factor}))
    if integral and near > 2 and (extents is None or near in set(extents)):
        if reduction:
            ev.append(Evidence("factor_reduction_size", "fd", f"exact factor {factor:.6g}", {"factor": factor}))
        note = f"the factor is {near if abs(factor) >= 1 else '1/' + str(near)}: the size of a reduction"
    for n in seeds:
        if n > 1 and integral and abs(near - n) <= max(1e-2 * n, 0.5):
            ev.append(Evidence("factor_equals_seed_size", "fd", f"factor {factor:.6g} = {n} seeded elements",
                               {"factor": factor, "seed_size": n}))
            note = f"the factor equals the {n} elements of the array the backward pass was seeded over"
    return ev, note


def factor_bug_evidence(doc: dict, ctx: AssessContext) -> Assessment:
    """The exact factor's evidence behind the class of a bug: its size (:func:`factor_evidence`)
    of the comparisons' factor (this probe's assessment, ``ctx.assessed["fd"]``) under
    ``exact_factor`` (call 1's joint factor otherwise, under ``exact_factor``, ``subtly_wrong`` and
    ``sparse``; ``ctx.signature``), and a sentence naming what the size is.

    The seeded sizes are the trace's (its findings' ``seed_size`` and its summary's ``seed_sizes``,
    ``ctx.assessed["trace"]``), the reduction extents its summary's ``extents``; the factor is read
    as a reduction's size only when no kernel fails the per-launch check alone
    (``ctx.assessed["launches"]``).

    Returns
    -------
    Assessment
        ``cited``: structured evidence; ``evidence``: the sentence.
    """
    sig, comparisons = ctx.signature, ctx.facts("fd").get("comparisons") or []
    tfind, trace = ctx.facts("trace").get("findings") or [], ctx.facts("trace").get("trace") or {}
    seeds = [int(f.get("data", {}).get("seed_size") or 0) for f in tfind if isinstance(f.get("data"), dict)]
    seeds += [int(n) for n in (trace.get("summary") or {}).get("seed_sizes", []) or []]
    extents = (trace.get("summary") or {}).get("extents")  # None without a trace (or an older document)
    factor = comparison_factor(comparisons) if sig == "exact_factor" else None
    if factor is None and sig in ("exact_factor", "subtly_wrong", "sparse"):
        factor = joint_factor(doc)
    cited, note = factor_evidence(factor, seeds, reduction=not ctx.facts("launches").get("failing"), extents=extents)
    a = Assessment(cited=cited)
    if note:
        a.add("fd", False, f"exact factor {factor:.6g}: {note}", {"factor": factor})
    return a


def zero_params_bug_evidence(doc: dict, ctx: AssessContext) -> Assessment:
    """``param_gradient_zero`` (and its sentence) when autodiff is exactly zero for some params
    where finite differences are not, and the signature (``ctx.signature``) is not already ``zero``."""
    a = Assessment()
    zp = zero_params(doc)
    if zp and ctx.signature != "zero":
        a.add("fd", False, "autodiff is exactly zero for param(s) " + ", ".join(zp) +
              " where finite differences are not", {"params": zp})
        a.cited.append(Evidence("param_gradient_zero", "fd", data={"params": zp}))
    return a
