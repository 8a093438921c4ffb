"""The runtime trace's assessment: its findings in words, and the structured evidence behind the class
of a bug (``trace:<finding id>`` and its variants, backward windows).

:mod:`defects4warp.probes.trace` turns the trace of the first gradient() calls into findings and
coverage in the worker; this reads them from the document, with the evidence table's classes.
"""

from __future__ import annotations

import re

from ...evidence_table import evidence_classes
from . import AssessContext, Assessment, Evidence, assessor


def measured_id(finding: dict) -> str:
    """The evidence id of a trace finding as the trace probe measured it: ``trace:<id>``, and
    ``trace:offtape_write_after_read:inside_tape`` for a write
    :func:`defects4warp.probes.trace.refine` saw inside the with-tape block."""
    eid = f"trace:{finding.get('id')}"
    if finding.get("id") == "offtape_write_after_read" and (finding.get("data") or {}).get("inside_tape_block"):
        eid += ":inside_tape"
    return eid


@assessor("trace", cites=("trace:*", "trace_backward_windows"))
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """Evidence entries of the runtime trace: one per finding (its ``data`` names the
    classes the evidence table's rows for :func:`measured_id` give), none found, or why
    the trace is unavailable. Facts: ``findings``, ``trace`` (the probe's document).

    The classes are read from ``ctx.table`` (default: the engine's table).
    """
    table = ctx.table if ctx is not None else None
    a = Assessment()
    trace = doc.get("trace") or {}
    tfind = trace.get("findings") or []
    for f in tfind:
        a.add("trace", False, f"trace: {f.get('detail')}",
              {"id": f.get("id"), "classes": list(evidence_classes(measured_id(f), table)), "data": f.get("data")})
    if "findings" in trace and not tfind:
        a.add("trace", True, "runtime trace of the first gradient() call: no taping finding", None)
    if trace.get("error"):
        a.add("trace", True, f"runtime trace unavailable: {trace['error']}", None)
    a.facts.update(findings=tfind, trace=trace)
    return a


#: Findings that say two backward passes (or one launch recorded twice) double count:
#: with one of them, several backward tapes are not read as windows (``trace_backward_windows``).
DOUBLE_COUNT_FINDINGS = ("multiple_backward", "duplicate_launch")


def inplace_kernel(finding: dict, scopes: set) -> bool:
    """Whether a trace finding's kernel is one where a source finding saw ``*=``/``/=`` (``scopes``)."""
    text = finding.get("detail") or ""
    data = finding.get("data") or {}
    names = {str(data.get(k)) for k in ("kernel", "name") if data.get(k)}
    return any(s and (s in names or re.search(rf"\b{re.escape(s)}\b", text)) for s in scopes)


def bug_evidence(doc: dict, ctx: AssessContext) -> Assessment:
    """The structured evidence of the trace (``doc["trace"]``) behind the class of a bug.

    ``ctx.inplace_scopes``: kernels where a counted source finding saw ``*=``/``/=``.

    Returns
    -------
    Assessment
        ``cited``: ``trace:<id>`` per finding (``:not_inplace`` for a kernel that reads and stores one
        array without ``*=``/``/=``, ``:inside_tape`` for a write
        :func:`defects4warp.probes.trace.refine` saw inside the with-tape block) and
        ``trace_backward_windows`` when one call ran backward on two or more tapes and no finding
        says they double count; ``evidence``: the entries (sentences) of the derived facts.
    """
    trace, inplace_scopes = doc.get("trace") or {}, ctx.inplace_scopes
    tfind = trace.get("findings") or []
    cited, sentences = [], []
    for f in tfind:
        fid = f"trace:{f.get('id')}"
        if f.get("id") == "inplace_read_write" and not inplace_kernel(f, inplace_scopes):
            # one launch reads and stores the same array: `*=`/`/=` is inplace_math, any other
            # read-then-store of the same element is a write-after-read within the kernel
            fid += ":not_inplace"
        elif f.get("id") == "offtape_write_after_read" and (f.get("data") or {}).get("inside_tape_block"):
            fid += ":inside_tape"  # refine(): a host write inside the with-tape block
        cited.append(Evidence(fid, "trace", f.get("detail") or "", f.get("data")))
    n_tapes = (trace.get("summary") or {}).get("backward_tapes") or 0
    if n_tapes >= 2 and not any(f.get("id") in DOUBLE_COUNT_FINDINGS for f in tfind):
        cited.append(Evidence("trace_backward_windows", "trace", data={"backward_tapes": n_tapes}))
        a = Assessment()
        a.add("trace", False, f"trace: one gradient() call ran backward on {n_tapes} separate tapes "
              "(windows): the gradient through the state carried between them depends on seeding each "
              "window from the next", {"backward_tapes": n_tapes})
        sentences += a.evidence
    return Assessment(evidence=sentences, cited=cited)
