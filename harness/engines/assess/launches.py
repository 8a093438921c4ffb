"""The per-launch check's assessment: which kernels disagree with finite differences alone, in words,
and the evidence behind the class of a bug it carries.

:mod:`defects4warp.probes.launches` checks each recorded kernel alone in the worker; this reads its
records from the document.
"""

from __future__ import annotations

from . import AssessContext, Assessment, Evidence, assessor


def staircase_kernels(doc: dict) -> list:
    """Kernels of a measurement document (``doc["launches"]``) with a pair that is flat but not constant
    (:func:`defects4warp.probes.launches.staircase_pairs`), sorted; ``[]`` when the probe did not run
    or found none."""
    return sorted(r["kernel"] for r in (doc.get("launches") or {}).get("kernels", []) if r.get("staircase"))


@assessor("launches", cites=("launch_kernel_fails_alone", "launch_all_kernels_pass",
                             "kernel_compiled_without_adjoint"))
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """Evidence entries of the per-launch check: kernels that disagree with
    finite differences in isolation, those that agree, and those not checked
    (not clean and ``data["counted"]`` False: reported, not counted; a kernel
    compiled without adjoint is counted).
    Facts: ``kernels`` (every entry), ``failing``, ``passing``, ``no_adjoint``
    (compiled with ``enable_backward=False``)."""
    a = Assessment()
    kernels = (doc.get("launches") or {}).get("kernels", [])
    failing = [k for k in kernels if k.get("ok") is False]
    passing = [k for k in kernels if k.get("ok") is True]
    no_adjoint = [k for k in kernels if (k.get("skipped") or "").startswith("compiled with enable_backward=False")]
    for k in failing:
        w = k.get("worst") or {}
        a.add("launches", False, f"kernel {k['kernel']} disagrees with finite differences in isolation: "
              f"d {w.get('output')} / d {w.get('input')} relative error {w.get('relative_error', float('nan')):.3g} "
              f"({w.get('signature')})", k)
    if passing:
        a.add("launches", True, f"{len(passing)} kernel(s) agree with finite differences in isolation: "
              + ", ".join(k["kernel"] for k in passing), None)
    for k in kernels:
        if k.get("skipped") and k in no_adjoint:
            a.add("launches", False, f"kernel {k['kernel']} not checked: {k['skipped']}", None)
        elif k.get("skipped"):
            # a check that did not run is no clean result: reported, not counted (bug_evidence leaves
            # launch_all_kernels_pass out while a kernel is unchecked)
            a.add("launches", False, f"kernel {k['kernel']} not checked: {k['skipped']}",
                  {"counted": False, "kernel": k["kernel"], "skipped": k["skipped"]})
    a.facts.update(kernels=kernels, failing=failing, passing=passing, no_adjoint=no_adjoint)
    return a


def bug_evidence(doc: dict, ctx: AssessContext) -> Assessment:
    """The per-launch check's evidence behind the class of a bug, from :func:`assess`'s facts
    (``ctx.assessed["launches"]``; assessed here when absent):
    ``launch_kernel_fails_alone`` (a kernel disagrees with finite differences alone), else
    ``launch_all_kernels_pass`` (every kernel checked, all agree); and
    ``kernel_compiled_without_adjoint``."""
    facts = ctx.facts("launches") or assess(doc, ctx).facts
    kernels, failing, passing, no_adjoint = (facts[k] for k in ("kernels", "failing", "passing", "no_adjoint"))
    cited = []
    unchecked = [k for k in kernels if k.get("ok") is None and k not in no_adjoint]
    if failing:
        cited.append(Evidence("launch_kernel_fails_alone", "launches", data=[k["kernel"] for k in failing]))
    elif passing and not unchecked:
        cited.append(Evidence("launch_all_kernels_pass", "launches", data=[k["kernel"] for k in passing]))
    if no_adjoint:
        cited.append(Evidence("kernel_compiled_without_adjoint", "launches", data=[k["kernel"] for k in no_adjoint]))
    return Assessment(cited=cited)
