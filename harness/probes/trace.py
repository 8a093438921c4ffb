"""Trace: the runtime trace of the user's own first gradient() call.

Wraps Warp's public API for the duration of call 1 (launches, tape records,
``Tape.backward`` with its seeds, zeroing, host writes, copies, ``.grad``
reads) and records line coverage of the variant's files
(:mod:`defects4warp.measure.trace`). This probe turns the trace into direct
evidence (:func:`defects4warp.measure.trace.trace_findings`, given the objective
at the same point so that a backward seed can be checked against it) and
keeps the coverage for the source rules, which count only code that ran.
Calls 1 and 2 are traced; findings are merged by id (call 2 shows what one
iteration leaves to the next: a ``.grad`` not zeroed, a seed accumulated).
"""

from __future__ import annotations

from . import probe


def traced_call(ctx, call: int = 1):
    """Call the problem's ``gradient()`` under the trace (its dict, so the trace can check the
    returned arrays); keep the trace on ``ctx.traces[call]``; return the flat gradient as
    ``ctx.gradient()`` does. Falls back to a plain call (and records why) when the trace cannot be set up."""
    try:
        from ..measure.trace import trace_call
    except Exception as exc:  # noqa: BLE001 - the trace is evidence, never a reason to fail the measurement
        ctx.doc["trace"] = {"error": f"{type(exc).__name__}: {exc}"}
        return ctx.gradient()

    def raw():
        # the problem's own return (a dict of arrays), not ctx.gradient()'s flattened copy: the trace
        # compares it with the .grad buffers and checks whether it is a view of one (measure.aliasing)
        if ctx.pinned:
            ctx.p.set_seed(ctx.pinned_seed)
        ctx.n_grad += 1
        return ctx.p.gradient()

    result, tr = trace_call(raw, params=ctx.p.params, coverage_root=ctx.path)
    if not hasattr(ctx, "traces"):
        ctx.traces = {}
    ctx.traces[call] = tr
    return ctx.flat.flatten_gradient(result)


#: Relative difference between the objective and the seed-weighted sum of the
#: seeded arrays above which explicit constant seeds do not match the objective.
SEED_RTOL = 1e-3


def seed_consistency(trace: dict, objective, *, rtol: float = SEED_RTOL) -> dict | None:
    """Explicit constant seeds (``backward(grads={y: c})``) whose weighted sum
    of the seeded arrays, ``sum_k c_k * sum(y_k)``, is not the objective.

    With constant seeds the backward pass differentiates exactly that
    weighted sum; when the program reports another objective (a mean, other
    weights for the terms of a multi-term loss), the gradient is that of the
    other objective. Only the last ``backward()`` of the call is read, and
    only when every seed is explicit and constant over its array.
    """
    if objective is None:
        return None
    backs = [e for e in trace.get("events") or [] if e.get("kind") == "backward"]
    if not backs:
        return None
    seeds = backs[-1].get("seeds") or []
    if not seeds or any(sd.get("mode") == "loss" or sd.get("constant") is None or sd.get("target_sum") is None
                        for sd in seeds):
        return None
    total = sum(float(sd["constant"]) * float(sd["target_sum"]) for sd in seeds)
    f = float(objective)
    if abs(total - f) <= rtol * max(abs(f), abs(total), 1e-300):
        return None
    desc = ", ".join(f"{sd.get('target')} ({sd.get('target_size')} elements) with {float(sd['constant']):.4g}" for sd in seeds)
    return {"id": "seed_weights", "classes": ["seed_mismatch"],
            "detail": f"backward seeds {desc}: the seed-weighted sum of the seeded arrays is {total:.6g} while the "
                      f"objective is {f:.6g}, so the backward pass differentiates another objective",
            "data": {"weighted_sum": total, "objective": f, "seeds": len(seeds)}}


def refine(finding: dict, trace: dict) -> dict:
    """Class of a write-after-read by something the tape did not record,
    from when it happened (docs/taxonomy.md): a host write (``zero_``,
    ``fill_``, ``assign``, ``wp.copy``) or an unrecorded launch *inside* the
    ``with tape:`` block that recorded the read, e.g. clearing an accumulator
    at the top of each substep, is ``overwrite``; a change after the block,
    before ``backward()`` (an optimiser step, a rendering step) is
    ``offtape_mutation``."""
    if finding.get("id") != "offtape_write_after_read":
        return finding
    data = finding.get("data") or {}
    tape = data.get("tape")
    events = trace.get("events") or []
    inside = []
    for w in data.get("writers") or []:
        if isinstance(w, int) and 0 <= w < len(events):
            inside.append(events[w].get("active_tape") == tape and tape is not None)
    if inside and all(inside):
        return dict(finding, classes=["overwrite"], data=dict(data, inside_tape_block=True),
                    detail=finding.get("detail", "") + " (inside the with-tape block)")
    return dict(finding, data=dict(data, inside_tape_block=False))


@probe("trace", max_findings=20)
def measure(ctx, *, max_findings: int = 20) -> dict | None:
    """Findings and coverage from the trace of call 1 (the trace itself is taken by the determinism probe).

    Parameters
    ----------
    max_findings : int
        Findings kept at most.
    """
    traces = getattr(ctx, "traces", None) or {}
    tr = traces.get(1)
    if tr is None:
        return ctx.doc.get("trace")
    from ..measure.trace import trace_findings

    findings, seen = [], set()
    for call in sorted(traces):
        try:
            fs = trace_findings(traces[call], objective=ctx.f0)
        except Exception as exc:  # noqa: BLE001
            fs = []
            ctx.doc.setdefault("errors", []).append({"probe": "trace", "error": f"findings: {type(exc).__name__}: {exc}"})
        fs = [refine(f, traces[call]) for f in fs]
        for f in fs:
            if f["id"] in seen:
                continue
            seen.add(f["id"])
            f = dict(f, call=call)
            if call > 1:
                f["detail"] = f"(call {call}) " + f["detail"]
            findings.append(f)
    if not any("seed_mismatch" in (f.get("classes") or []) for f in findings):
        extra = seed_consistency(traces[1], ctx.f0)
        if extra:
            findings.append(extra)
    cov = {}
    for t in traces.values():
        for fname, lines in (t.get("coverage") or {}).items():
            cov.setdefault(fname, set()).update(lines)
    tr = dict(tr, coverage={k: sorted(v) for k, v in cov.items()} if cov or tr.get("coverage") is not None else None)
    events = tr.get("events") or []
    backs = [e for e in events if e.get("kind") == "backward"]
    seed_sizes = sorted({int(sd.get("target_size") or sd.get("size") or 0) for b in backs for sd in b.get("seeds") or []})
    kernels = [{"key": k, "name": v.get("name"), "file": v.get("file"), "lines": v.get("lines"),
                "enable_backward": v.get("enable_backward")} for k, v in (tr.get("kernels") or {}).items()]
    out = {"findings": findings[:max_findings], "coverage": tr.get("coverage"), "kernels": kernels,
           "call_error": tr.get("error"),
           "summary": {"launches": sum(1 for e in events if e.get("kind") == "launch"), "backward": len(backs),
                       "tapes": len(tr.get("tapes") or {}), "seed_sizes": seed_sizes, "wall_s": tr.get("wall_s"),
                       "backward_tapes": len({b.get("tape") for b in backs if b.get("tape") is not None}),
                       "copies": sum(1 for e in events if e.get("kind") == "host" and e.get("op") in ("copy", "clone"))}}
    ctx.doc["trace"] = out
    ctx.save()
    return out
