"""The overwrite tracker's assessment: its write-after-read warnings, in words and as evidence.

:mod:`defects4warp.probes.tracker` parses the warnings Warp's tracker raised during the run; this
reads them from the document (the stages that count, :data:`TRACKER_STAGES`, are also what the
tracker-only and warp-gradcheck baselines count).
"""

from __future__ import annotations

from . import AssessContext, Assessment, Evidence, assessor


#: Tracker warnings raised in these stages count (loading, the objective, the first gradient() call).
TRACKER_STAGES = ("load", "objective", "gradient_1")


@assessor("tracker", cites=("tracker_warning", "tracker_warning:inplace_kernel"))
def assess(doc: dict, ctx: AssessContext | None = None, *, stages=TRACKER_STAGES) -> Assessment:
    """Evidence entry of the overwrite tracker (only when the tracker probe ran):
    its write-after-read warnings raised in ``stages`` (default
    :data:`TRACKER_STAGES`), or none. Facts: ``warnings`` (those counted)."""
    a = Assessment()
    tracker = doc.get("tracker") or {}
    warns = [w for w in tracker.get("warnings", []) if set(w.get("stages", [])) & set(stages)]
    if tracker.get("enabled"):
        if warns:
            desc = "; ".join(f"{w.get('arg') or w.get('operation') or 'array'} in {w.get('kernel') or '?'} at "
                             f"{', '.join(w['sites']) or '?'}" for w in warns[:5])
            a.add("tracker", False, f"overwrite tracker: {len(warns)} write-after-read warning(s): {desc}", warns)
        else:
            a.add("tracker", True, "overwrite tracker raised no warning during the first gradient() call", None)
    a.facts["warnings"] = warns
    return a


def bug_evidence(doc: dict, ctx: AssessContext) -> Assessment:
    """``tracker_warning`` per counted warning of :func:`assess`'s facts (``tracker_warning:inplace_kernel``
    in a kernel where a counted source finding saw ``*=``/``/=``, :attr:`AssessContext.inplace_scopes`),
    each of strength 1/n over the n warnings."""
    warnings, inplace_scopes = ctx.facts("tracker").get("warnings") or [], ctx.inplace_scopes
    return Assessment(cited=[Evidence("tracker_warning:inplace_kernel" if w.get("kernel") in inplace_scopes else "tracker_warning",
                     "tracker", data=w, strength=1.0 / len(warnings)) for w in warnings])
