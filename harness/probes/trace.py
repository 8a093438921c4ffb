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
    start = int(trace.get("start") or 0)
    backs = [e for e in (trace.get("events") or [])[start:] if e.get("kind") == "backward"]
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
    return {"id": "seed_weights",
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
    ``offtape_mutation``. Marks the finding's ``data["inside_tape_block"]``;
    the engine cites a marked one as ``trace:offtape_write_after_read:inside_tape``
    (the evidence table's rows say which class each supports)."""
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
        return dict(finding, data=dict(data, inside_tape_block=True),
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
    from ..measure.detectors import DETECTORS

    # seed_weights only where the seed detector itself found nothing
    if not any(f["id"] in DETECTORS["seeds"].evidence for f in findings):
        extra = seed_consistency(traces[1], ctx.f0)
        if extra:
            findings.append(extra)
    cov = {}
    for t in traces.values():
        for fname, lines in (t.get("coverage") or {}).items():
            cov.setdefault(fname, set()).update(lines)
    tr = dict(tr, coverage={k: sorted(v) for k, v in cov.items()} if cov or tr.get("coverage") is not None else None)
    # the measured call's events: a script captured at iteration k > 1 replays iterations 1 .. k-1 first
    events = (tr.get("events") or [])[int(tr.get("start") or 0):]
    backs = [e for e in events if e.get("kind") == "backward"]
    seed_sizes = sorted({int(sd.get("target_size") or sd.get("size") or 0) for b in backs for sd in b.get("seeds") or []})
    extents = element_counts(tr, events)
    kernels = [{"key": k, "name": v.get("name"), "file": v.get("file"), "lines": v.get("lines"),
                "enable_backward": v.get("enable_backward")} for k, v in (tr.get("kernels") or {}).items()]
    out = {"findings": findings[:max_findings], "coverage": tr.get("coverage"), "kernels": kernels,
           "call_error": tr.get("error"),
           "summary": {"launches": sum(1 for e in events if e.get("kind") == "launch"), "backward": len(backs),
                       "tapes": len(tr.get("tapes") or {}), "seed_sizes": seed_sizes, "extents": extents,
                       "wall_s": tr.get("wall_s"),
                       "backward_tapes": len({b.get("tape") for b in backs if b.get("tape") is not None}),
                       "copies": sum(1 for e in events if e.get("kind") == "host" and e.get("op") in ("copy", "clone"))}}
    ctx.doc["trace"] = out
    ctx.save()
    return out


def element_counts(trace: dict, events: list, *, limit: int = 10**6) -> list:
    """Every count of elements a reduction in the traced call can run over: each array's size and
    each of its dimensions, each launch's dimensions and their product (sorted ints in [2, ``limit``]).

    A gradient off by the size N of a reduction (a sum seeded where the objective is a mean) needs
    something of N elements in the program: an array, one of its axes or a launch grid.

    Parameters
    ----------
    trace : dict
        The recorder's trace document (``arrays`` with ``shape``).
    events : list
        The measured call's events (launches with ``dim``).
    limit : int
        Largest count kept (default 10^6, the ``max_reduction`` of
        :func:`defects4warp.engines.assess.fd.factor_evidence`).
    """
    out = set()

    def put(dims):
        dims = [d for d in dims if isinstance(d, int)]
        if not dims:
            return
        out.update(dims)
        n = 1
        for d in dims:
            n *= d
        out.add(n)

    for rec in (trace.get("arrays") or {}).values():
        put(list(rec.get("shape") or []))
    for e in events:
        if e.get("kind") == "launch":
            put(list(e.get("dim") or []))
    return sorted(n for n in out if 2 <= n <= limit)
