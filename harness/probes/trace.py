"""Trace: the runtime trace of the user's own first gradient() call.

Wraps Warp's public API for the duration of call 1 (launches, tape records,
``Tape.backward`` with its seeds, zeroing, host writes, copies, ``.grad``
reads) and records line coverage of the variant's files
(:mod:`harness.measure.trace`). This probe turns the trace into direct
evidence (:func:`harness.measure.trace.trace_findings`, given the objective
at the same point so that a backward seed can be checked against it) and
keeps the coverage for the source rules, which count only code that ran.
"""

from __future__ import annotations

from . import probe


def traced_call(ctx):
    """Call ``ctx.gradient()`` under the trace; keep the trace on ``ctx.trace``.
    Falls back to a plain call (and records why) when the trace cannot be set up."""
    try:
        from ..measure.trace import trace_call
    except Exception as exc:  # noqa: BLE001 - the trace is evidence, never a reason to fail the measurement
        ctx.doc["trace"] = {"error": f"{type(exc).__name__}: {exc}"}
        return ctx.gradient()
    result, tr = trace_call(ctx.gradient, params=ctx.p.params, coverage_root=ctx.path)
    ctx.trace = tr
    return result


@probe("trace", max_findings=20)
def measure(ctx, *, max_findings: int = 20) -> dict | None:
    """Findings and coverage from the trace of call 1 (the trace itself is taken by the determinism probe).

    Parameters
    ----------
    max_findings : int
        Findings kept at most.
    """
    tr = getattr(ctx, "trace", None)
    if tr is None:
        return ctx.doc.get("trace")
    from ..measure.trace import trace_findings

    try:
        findings = trace_findings(tr, objective=ctx.f0)
    except Exception as exc:  # noqa: BLE001
        findings = []
        ctx.doc.setdefault("errors", []).append({"probe": "trace", "error": f"findings: {type(exc).__name__}: {exc}"})
    out = {"findings": findings[:max_findings], "coverage": tr.get("coverage"),
           "kernels": tr.get("kernel_spans") or tr.get("kernels"),
           "summary": {k: tr.get(k) for k in ("n_launches", "n_backward", "n_tapes") if k in tr}}
    ctx.doc["trace"] = out
    ctx.save()
    return out
