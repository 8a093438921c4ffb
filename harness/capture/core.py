"""Capture a Problem from a running training script: :func:`capture_problem`.

:func:`capture_problem` runs the user's script unmodified in this process
(``runpy`` as ``__main__``, ``sys.argv = [entry, *args]``, the working
directory and the first ``sys.path`` entry set to the variant folder) with a
few of Warp's public names wrapped, and returns a :class:`CapturedProblem`
that satisfies the Problem protocol of docs/case-format.md.

How it works (one module per phase)
-----------------------------------
1. **Discovery run** (:mod:`.hooks`, :mod:`.iteration`), under the runtime trace
   (:func:`defects4warp.measure.trace.trace_call`, which wraps ``wp.launch``, ``wp.Tape``, host writes and
   ``.grad``): every ``wp.array`` construction is tagged with its allocation site (the first frame outside
   Warp and the harness: ``file, line``) and occurrence (the n-th construction at that line in the run). At
   each ``Tape.backward()`` call the run tells whether an *update* happened since the previous one (the
   script consumed an array's ``.grad`` and then wrote that array outside any tape block, re-allocated it,
   or changed it through a ``.numpy()`` view; a ``.grad`` handed to the next backward as its seed is no
   update): a new optimisation iteration starts there. The run stops at the first backward of the iteration
   after the modelled one (``ScriptSpec.iteration``), so what the script does with ``.grad`` is seen.
2. **Params** (:mod:`.discovery`): arrays with ``requires_grad=True`` read by any launch or host copy of the
   iteration (taped or not: work before ``with tape:`` belongs to it), written by no launch its tapes
   recorded, from which the loss is reachable, and whose ``.grad`` the script consumes after the
   iteration's last backward. ``ScriptSpec.params`` overrides the choice. The iteration's backwards all
   count: ``gradient()`` is what the params' update consumes, read where it consumes it
   (:func:`defects4warp.capture.iteration.consumption_point`: the update launch's input, a copy or buffer
   filled from ``.grad``, the last ``.numpy()`` before a host-side update; else the ``.grad`` after the last
   backward), the objective the sum of their losses (without a backward seeded by a hand-over adjoint,
   an inner solve's, or one repeating a tape recording). Updates of an inner solve's iterate (made while
   the outer tape records, or of an iterate restarted after the outer update) end no iteration.
3. **Re-runs** (:mod:`.captured`: ``objective()``, ``gradient()``, ``train(n)``): the script runs again in
   the same process (modules stay loaded, kernels stay built; the variant folder's own modules are
   imported afresh). The construction at a param's site returns the *same* array object as before (filled
   with what the script's construction produced, ``.grad`` zeroed as in a fresh allocation), so ``params``
   keeps its identity across runs and the trace of a re-run labels it as a param. Launches, copies, tape
   starts, backwards and ``requires_grad`` allocations are counted alike in every run (calls made inside
   another are not); the params are set to the values ``params`` held when the call started just before the
   counted call where the iteration starts (after the last write of a param before the iteration reads it:
   :func:`defects4warp.capture.iteration.injection_step`). The objective is read at the iteration's
   backwards, before each runs (``loss`` summed, or ``sum(seed * array)`` over a ``grads={...}`` seed dict or
   over the ``.grad`` the script set by hand on arrays a launch on the tape wrote); ``gradient()`` copies the
   params' gradient where the update consumes it (:attr:`CapturedProblem.consume`; a re-run goes on past
   the last backward to that hooked call), else their ``.grad`` right after the last backward. The script
   is then stopped by a private ``BaseException`` raised
   from the wrapper and caught here; the params are restored.
4. **The reported loss.** When the script seeds ``grads={...}`` (or ``.grad``)
   and the loss it prints matches no seed-weighted sum, the objective is the
   printed loss where it can be identified: the mean or sum of a single
   seeded array, or a weighted sum of several seeded arrays' sums fitted to
   the prints of a few re-runs (:func:`_fit_reported_weights`). An iteration of several backwards is compared as the sum
   over them and fitted with one common weight (a mean over windows each seeded with 1). A gradient buffer the
   update adds that was filled from a backward before the iteration (a prior's gradient cached once) makes that
   backward's loss a term of the objective, evaluated by one more re-run (:attr:`CapturedProblem.external_terms`).
5. **Along the loop** (:mod:`.screen`, ``screen=True``): iteration 1 and later ones of the script's own loop
   are checked with a central difference; a later one that disagrees when the first agrees is returned.
6. **State carried across iterations.** When a param's ``.grad`` is still
   nonzero when the next backward starts (after the script used it) or a
   seed buffer is reused changed by the next iteration, repeated
   ``gradient()`` calls at one point continue the script (see
   :meth:`CapturedProblem.gradient`), so growth or a stale seed shows as the
   script really has it.

Only public Warp names are wrapped: ``wp.array.__new__``/``__init__`` (class
attributes; ``wp.array`` defines no ``__new__`` on 1.12.1 to 1.19.0),
``wp.Tape.__enter__``/``backward``, ``wp.capture_begin``,
``wp.ScopedCapture.__enter__`` and the interop functions (``wp.from_torch``,
``wp.to_torch``, ``wp.from_jax``, ``wp.to_jax``, ``wp.from_paddle``,
``wp.to_paddle``, ``wp.from_dlpack``, ``wp.to_dlpack``), plus
``subprocess.Popen.__init__``, ``os.fork`` and
``multiprocessing.process.BaseProcess.start``. Everything is restored after
each run, also when the script raises.

Limits (each a :class:`CaptureError` naming what is missing and how to
proceed): no k-th backward within the time limit (saying what ran and where
the script was); an exit before the first backward (where, and what it
printed); ``backward(loss)`` on a non-scalar array; ``backward()`` without a
loss, ``grads=`` or a ``.grad`` set by hand on an array the tape wrote; CUDA
graph capture;
child processes; torch/JAX/Paddle/DLPack interop on the param path (the
other framework owns the loop); a param allocated at import time of a module
outside the variant folder (not seen again by a re-run).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time

import numpy as np
import warp as wp

from ..measure import trace as _trace
from .captured import CapturedProblem
from .hooks import finish_discovery
from .discovery import (_assigns_list, _iteration_reads_writes, _label_objects, _override_params, _param_candidates,
                        _program_modules, _reachable, _var_name)
from .iteration import consumption_point, injection_step, step_of
from .naming import array_words
from .runstate import DEFAULT_TIMEOUT_S, JITTER_RTOL, _Run, _grad, _np, _ordinal, _quiet
from .screen import screen_iterations
from .spec import CaptureError, ScriptSpec, format_site
from .summary import _fit_reported_weights, _iteration_terms, _summary

__all__ = ["CapturedProblem", "capture_problem", "CaptureError", "DEFAULT_TIMEOUT_S", "JITTER_RTOL"]


def capture_problem(folder, spec: ScriptSpec, device: str = "cpu", *, timeout_s: float = DEFAULT_TIMEOUT_S,
                    check_determinism: bool = True, screen: bool = False) -> CapturedProblem:
    """Run the script of ``spec`` in ``folder`` and capture the Problem of its k-th backward.

    Parameters
    ----------
    folder : path-like
        The variant folder (the script's working directory and first ``sys.path`` entry).
    spec : ScriptSpec
        Entry point, arguments, iteration k and optional param sites.
    device : str, default "cpu"
        Warp device made the default (``wp.ScopedDevice``) while the script runs.
    timeout_s : float, default :data:`DEFAULT_TIMEOUT_S`
        Wall-clock limit of each run of the script, seconds.
    check_determinism : bool, default True
        Re-run twice at the captured params; differing objectives (beyond
        :data:`JITTER_RTOL`) flag the problem ``stochastic``.
    screen : bool, default False
        Also check later iterations of the script's own loop than ``spec.iteration``
        (:func:`defects4warp.capture.screen.screen_iterations`, within
        :data:`SCREEN_BUDGET_FRACTION` of ``timeout_s``) and return the capture of
        the first later one whose gradient disagrees with a central difference
        when ``spec.iteration``'s agrees; the summary's ``iterations`` says what was checked.

    Returns
    -------
    CapturedProblem

    Raises
    ------
    CaptureError
        Naming what was missing and how to proceed (``--param``, ``--iteration``,
        a ``make_problem`` adapter).
    """
    if isinstance(spec, (str, dict)):
        spec = ScriptSpec.from_json(spec)
    t0 = time.perf_counter()
    wp.init()
    cap = CapturedProblem(folder, spec, device=device, timeout_s=timeout_s)
    run = _Run(cap, "discover")

    def go():
        # the trace's label -> array table, kept for mapping labels back to the script's arrays
        st = _trace.active("trace")
        run.by_label = st.by_label if st is not None else {}
        return cap._execute(run, silent=False)

    (text, stopped), tr = _trace.trace_call(go, params=None, digests=False)
    if run.kth is not None or run.marks:
        finish_discovery(run)
        stopped = run.stopped or stopped
        text = _cut_record(run, tr, text)
    files = _program_modules(cap)
    kth = run.kth
    k = spec.iteration
    if kth is None:
        _not_reached(spec, run, text, stopped)
    b, chosen, candidates, unrecorded, objs, site_of = _choose_params(cap, spec, run, tr)
    _name_params(cap, run, chosen)
    _set_given_point(cap, spec, run, chosen)
    if _written_after_read(tr["events"], cap, chosen, b):
        _point_from_rerun(cap)
    _summarise(cap, spec, run, tr, b, chosen, candidates, unrecorded, objs, site_of, text, stopped, files, t0)
    if check_determinism:
        _check_determinism(cap, run)
    _compare_consumed(cap)
    if screen and not cap.stochastic:
        return _screened(cap, folder, spec, device, timeout_s)
    return cap


def _cut_record(run, tr, text):
    """The discovery run's trace and printed text cut back to the first backward of iteration K+1 (the run may
    have looked past it, :func:`.hooks._discover_backward`): the record is then what a run stopped there holds."""
    if run.cut_seq is None:
        return text
    tr["events"] = tr["events"][: run.cut_seq]
    tr["tapes"] = {k: v for k, v in (tr.get("tapes") or {}).items()
                   if v.get("created") is None or v["created"] < run.cut_seq}
    if text is not None and run.cut_out is not None:
        text = text[: run.cut_out]
    return text


def _not_reached(spec, run, text, stopped):
    """The CaptureError of a discovery run that did not reach the modelled iteration (interop owning the loop,
    an exit before any backward, a loop shorter than the iteration asked for)."""
    k = spec.iteration
    if run.interop:
        fn = ", ".join(sorted({f"wp.{a} ({b})" for a, b in run.interop[:5]}))
        raise CaptureError(f"{spec.entry}: no {_ordinal(k)} Tape.backward() was reached ({stopped}); the script "
                           f"hands arrays to another framework ({fn}), which then owns the training loop and its "
                           f"gradients. Write a make_problem adapter around the Warp part")
    seen = run.backwards
    exit_at = getattr(run, "exit_at", None)
    if stopped.startswith("exit") and not seen:
        # the script stopped itself before any backward (an argument check, a usage message, a missing file)
        err = run.err.getvalue() if getattr(run, "err", None) is not None else ""
        said = [ln.strip() for ln in ((text or "") + "\n" + err).splitlines() if ln.strip()][-2:]
        where = (f" at {format_site(exit_at[0], exit_at[1])}" + (f" ({exit_at[2]})" if exit_at[2] else "")
                 if exit_at else "")
        raise CaptureError(f"{spec.entry}: the script exited ({stopped}){where} before its first "
                           f"Tape.backward()" + (f", after printing: {' | '.join(said)}" if said else "")
                           + f". It was run as: python {spec.entry} {' '.join(spec.args)}".rstrip()
                           + ". Give it the arguments (after --) or the files it needs so that it reaches its "
                             "training loop")
    its = run.iteration if seen else 0
    raise CaptureError(f"{spec.entry}: the script ended ({stopped}) after {seen} Tape.backward() call(s)"
                       + (f" in {its} iteration(s)" if seen else "") + f", so it has no {_ordinal(k)} "
                       f"iteration" + (f"; use --iteration {its} or lower" if seen else
                       "; a script whose gradient is not taken with wp.Tape().backward() needs a make_problem "
                       "adapter") + (f" (check the arguments after --: {spec.args})" if spec.args else ""))


def _choose_params(cap, spec, run, tr):
    """The modelled iteration's bounds (its backwards, those whose losses sum to the objective), its params
    (:mod:`.discovery`) and where a re-run sets them (:func:`.iteration.injection_step`); returns
    ``(first backward event, chosen, candidates, unrecorded copies, label -> array, label -> site)``."""
    events = tr["events"]
    rec_arrays = tr["arrays"]
    backs = [e for e in events if e["kind"] == "backward"]
    itK = [m for m in run.marks if m["iteration"] == spec.iteration]
    k = cap.k = itK[0]["n"]
    cap.grad_after, cap.per_iteration = itK[-1]["n"], len(itK)
    cap.per_next = getattr(run, "per_next", None)  # backwards of the next iteration, when the look saw it whole
    cap.obj_offsets = [m["n"] - k for m in itK if m["counted"]] or [0]
    cap.iteration_marks = itK
    if len(backs) < cap.grad_after:
        raise CaptureError(f"{spec.entry}: the trace saw {len(backs)} backward(s), fewer than {cap.grad_after}")
    bK = backs[k - 1: cap.grad_after]
    b = bK[0]
    w0 = backs[k - 2]["seq"] + 1 if k > 1 else 0
    w1 = bK[-1]["seq"]
    reads, writes, unrecorded = _iteration_reads_writes(events, bK, w0, w1)
    sinks = {s["target"] for off, bb in enumerate(bK) if off in cap.obj_offsets for s in bb["seeds"] if s["target"]}
    needed = _reachable(events, sinks, w1, rec_arrays, w0)
    objs = _label_objects(tr, run)
    site_of = {lab: run.site_of.get(id(o)) for lab, o in objs.items()}
    # an array the update writes inside a tape block (a momentum step recorded before backward()) is a param, not
    # an intermediate the recorded forward computes
    updated_on_tape = set(getattr(run, "recorded_updates", ()) or ())
    cap.recorded_updates = updated_on_tape
    candidates, chosen = _param_candidates(events, rec_arrays, objs, site_of, reads - (writes - updated_on_tape),
                                           needed, w1, run, w0)
    if spec.params:
        grads = {lab: info["grad_of"] for lab, info in rec_arrays.items() if info.get("grad_of") is not None}
        chosen = _override_params(spec, objs, site_of, reads | writes, k, lambda site: _site_name(cap, run, site),
                                  candidates, events, grads)
    else:
        chosen = [dict(c, chosen_by="capture") for c in candidates if c["why_not"] is None]
    if not chosen:
        cands = "; ".join(f"{array_words(c['label'], rec_arrays, site_of)} ({c['why_not']})"
                          for c in candidates[:8]) or "none"
        raise CaptureError(f"{spec.entry}: no parameter found: no array with requires_grad=True is read in "
                           f"iteration {spec.iteration} (backward {k}" + (f" to {cap.grad_after}" if cap.grad_after > k
                                                                         else "")
                           + f" and the launches before them since the previous update), written by none of the "
                           f"launches its tapes recorded but an update, and has its .grad used by the script "
                           f"afterwards (requires_grad leaves seen: {cands}). Name the params with --param FILE.py:LINE, or "
                           f"write a make_problem adapter")
    grads = {lab: info["grad_of"] for lab, info in rec_arrays.items() if info.get("grad_of") is not None}
    alloc = {c["label"]: run.alloc_steps[id(c["obj"])] for c in chosen if id(c["obj"]) in run.alloc_steps}
    cap.inject_step, first_read_step, first_read_seq = injection_step(
        events, w0, w1, [c["label"] for c in chosen], grads, run.step_seqs, alloc)
    cap.inject_at = run.launch_sites.get(first_read_seq) if first_read_seq is not None else None
    cap.first_read_seq = first_read_seq
    for c in chosen:
        c["consume"] = _consume_spec(events, b["seq"], w1, c["label"], grads, run, site_of)
    cap.external_terms = _external_terms(events, run, chosen, grads, alloc)
    bad = [c for c in chosen if id(c["obj"]) in run.interop_ids]
    if bad:
        fn = ", ".join(sorted({f"wp.{a}" for a, _ in run.interop}))
        raise CaptureError(f"{spec.entry}: the param allocated at {format_site(*bad[0]['site'])} comes from or goes "
                           f"to another framework ({fn}): torch/JAX owns the loop and its gradients. Write a "
                           f"make_problem adapter around the Warp part")
    return b, chosen, candidates, unrecorded, objs, site_of


def _external_terms(events, run, chosen, grads, alloc):
    """``[{"n", "inject_step", "iteration"}]``: the backwards before the modelled iteration whose gradient its update
    still consumes (the ``external`` of the params' consume specs: a prior's gradient cached in a buffer once), each
    with the hooked call where a re-run sets the params to read its loss: the start of that backward's own
    iteration (:func:`.iteration.injection_step` over that iteration up to the backward)."""
    wanted = sorted({n for c in chosen for n in ((c.get("consume") or {}).get("external") or ())})
    if not wanted:
        return []
    marks = {m["n"]: m for m in run.all_marks} if getattr(run, "all_marks", None) else {m["n"]: m for m in run.marks}
    out = []
    labels = [c["label"] for c in chosen]
    for n in wanted:
        m = marks.get(n)
        if m is None:
            continue
        earlier = [q for q in marks.values() if q["iteration"] < m["iteration"]]
        start = max(q["seq"] for q in earlier) + 1 if earlier else 0
        step, _, _ = injection_step(events, start, m["seq"], labels, grads, run.step_seqs, alloc)
        out.append({"n": n, "inject_step": step, "iteration": m["iteration"]})
    return out


def _consume_spec(events, b0, w1, label, grads, run, site_of):
    """Where a re-run reads the gradient of the param labelled ``label``: the hooked call at which the script's
    update consumes it (:func:`.iteration.consumption_point`), as ``{"step", "offset", "is_grad", "array_site",
    "site", "changed", "summed", "external"}`` (``site``: the consuming launch's call site, checked again by the
    re-run; ``changed``: what wrote the gradient between the last backward and that point, in words; ``summed``:
    ``[{"is_grad", "array_site"}]`` of the gradient arrays the update adds, or None for one; ``external``: the
    numbers of the backwards before the iteration whose gradient the update still consumes, a cached one), or
    None."""
    by_label = getattr(run, "by_label", {}) or {}

    def shape_of(lab):
        o = by_label.get(lab)
        return tuple(o.shape) if o is not None and getattr(o, "shape", None) is not None else None

    cp = consumption_point(events, b0, w1, label, grads, shape_of=shape_of)
    if cp is None:
        return None
    step = step_of(run.step_seqs, cp["seq"])
    if step < 0:
        return None
    backs = [e["seq"] for e in events if e["kind"] == "backward"]
    summed = [{"is_grad": cp["is_grads"][a], "array_site": None if cp["is_grads"][a] else site_of.get(a)}
              for a in cp["arrays"]]
    if any(not d["is_grad"] and d["array_site"] is None for d in summed):
        summed = [{"is_grad": cp["is_grad"], "array_site": None if cp["is_grad"] else site_of.get(cp["array"])}]
    # a gradient buffer (not the param's own .grad: what it carries over is grad_carried's) filled from a backward
    # before the iteration (a prior's gradient cached once): its loss is a term of the objective the iteration does
    # not recompute
    external = sorted({backs.index(q) + 1 for a in cp["arrays"] if not cp["is_grads"][a]
                       and (len(summed) > 1 or a == cp["array"])
                       for q in cp["sources"].get(a) or () if q < b0 and q in backs})
    words = {"tape_zero": "Tape.zero()", "tape_reset": "Tape.reset()", "grad_assign": ".grad assigned"}
    changed = []
    for ch in cp["changed"]:
        at = run.launch_sites.get(ch["seq"]) if ch["kind"] == "launch" else None
        what = (words.get(ch["kind"]) or (f"wp.{ch['op']}" if ch["kind"] == "host" and ch.get("op") in ("copy", "clone")
                                            else f".{ch['op']}()" if ch["kind"] == "host" else f"launch of {ch['op']}"))
        changed.append(what + (f" at {format_site(*at)}" if at else ""))
    return {"step": step, "offset": cp["offset"], "is_grad": cp["is_grad"],
            "array_site": None if cp["is_grad"] else site_of.get(cp["array"]),
            "site": run.launch_sites.get(cp["seq"]) if cp["offset"] == 0 else None, "changed": changed,
            "summed": summed if len(summed) > 1 else None, "external": external}


def _site_name(cap, run, site):
    """The variable the allocation at ``site`` is assigned to (its line's, else its callers'), or None."""
    f, line, _ = site
    for path, ln in [(str(cap.folder / f) if not os.path.isabs(f) else f, line)] + list(run.callers.get(site) or []):
        name = _var_name(path, ln)
        if name:
            return name
    return None


def _name_params(cap, run, chosen):
    """Names of the params: the variable the allocation's line assigns, else the one its caller's line assigns (a
    helper `return wp.array(...)`); params allocated one after another by one list statement are NAME[i]; else
    the allocation site. Registers them on ``cap``."""
    used = set()
    wanted = []
    for c in chosen:
        f, line, occ = c["site"]
        name, listed = None, False
        for path, ln in [(str(cap.folder / f) if not os.path.isabs(f) else f, line)] + list(
                run.callers.get(c["site"]) or []):
            name = _var_name(path, ln)
            if name:
                listed = _assigns_list(path, ln)
                break
        wanted.append((name, listed))
    counts = {}
    for name, _ in wanted:
        counts[name] = counts.get(name, 0) + 1
    for c, (name, listed) in zip(chosen, wanted):
        f, line, occ = c["site"]
        if name and listed and counts[name] > 1:
            name = f"{name}[{occ - 1}]"
        if not name or name in used:
            name = format_site(f, line, occ if occ > 1 else None)
        used.add(name)
        c["name"] = name
        cap.params[name] = c["obj"]
        cap.sites[name] = c["site"]
        cap.by_site[c["site"]] = name
        if c.get("consume") is not None and (c["consume"]["is_grad"] or c["consume"]["array_site"] is not None):
            cap.consume[name] = c["consume"]


def _written_after_read(events, cap, chosen, b) -> bool:
    """Whether a param is written off the tape (an untaped launch, a host write) between the iteration's first read
    of the params and its first backward ``b``: a momentum step launched after ``with tape:`` and before
    ``backward()``; or by a recorded launch when the discovery run saw that param updated inside a tape block
    (``cap.recorded_updates``: a momentum step launched in ``with tape:`` after the forward). The params' values at
    the backward are then not those the re-runs set at the iteration's start."""
    first = getattr(cap, "first_read_seq", None)
    if first is None:
        return False
    labels = {c["label"] for c in chosen}
    on_tape = labels & set(getattr(cap, "recorded_updates", ()) or ())
    for ev in events[first:b["seq"]]:
        if ev.get("tape") is not None:
            if ev["kind"] == "launch" and on_tape & set(ev.get("writes") or ()):
                return True
            continue
        if (ev["kind"] == "launch" and labels & set(ev.get("writes") or ())) or (
                ev["kind"] == "host" and ev.get("dest") in labels):
            return True
    return False


def _point_from_rerun(cap):
    """The given point read where a re-run sets the params (:attr:`CapturedProblem.inject_step`), by one re-run that
    sets nothing and stops there: the script's own values at the iteration's start, which the discovery run's values
    at the first backward are not when the script writes a param between the two (:func:`_written_after_read`)."""
    run = _Run(cap, "point")
    cap._execute(run)
    if not run.point:
        return
    with _quiet():
        for name, v in run.point.items():
            P = cap.params[name]
            P.assign(v)
            g = _grad(P)
            if g is not None:
                g.zero_()
    cap.summary_notes = getattr(cap, "summary_notes", []) + [
        "a param is written off the tape between the iteration's first read of it and its first backward: the given "
        "point is the params' values where the re-runs set them (the iteration's start), read by one more re-run"]


def _set_given_point(cap, spec, run, chosen):
    """The given point: the params' values at the modelled iteration's first backward (not changed within it)."""
    k = spec.iteration
    with _quiet():
        for c in chosen:
            v = run.snap.get(id(c["obj"]))
            if v is None:
                raise CaptureError(f"{spec.entry}: the value of param {c['name']} when the {_ordinal(k)} "
                                   f"iteration's tape started recording was not seen")
            c["obj"].assign(v)
            g = _grad(c["obj"])
            if g is not None:
                g.zero_()


def _summarise(cap, spec, run, tr, b, chosen, candidates, unrecorded, objs, site_of, text, stopped, files, t0):
    """The capture summary, its findings and assumptions, and the fit of a printed loss (:mod:`.summary`)."""
    k, kth = cap.k, run.kth
    cap.hand_seed_sites = {s for s in (kth.get("hand_sites") or []) if s is not None}
    cap.summary = _summary(cap, tr, run, b, chosen, candidates, text, stopped, objs, site_of)
    cap.summary["assumptions"].extend(getattr(cap, "summary_notes", []))
    cap.summary["files"] = files
    for e in unrecorded:
        at = site_of.get(e.get("dest")) if e["op"] == "clone" else None
        src = array_words(e.get("src"), tr["arrays"], site_of, lambda site: _site_name(cap, run, site))
        cap.summary["assumptions"].append(
            f"wp.{e['op']}" + (f" at {format_site(*at)}" if at else "") + f" of {src}"
            + f" ran inside the tape block of backward {k}, "
            f"but the tape does not record it (Warp {wp.config.version}; Warp 1.0.2 records no copy, later releases "
            f"only one whose source and destination both have a .grad): no adjoint flows back through it, as in "
            f"the script")
    for c in chosen:
        if c.get("followed"):
            cap.summary["assumptions"].append(
                f"--param names the array allocated at {format_site(*c['followed']['site'])}, which is no param of "
                f"iteration {spec.iteration}: the script keeps that param in two buffers and swaps them at each "
                f"update, so in this iteration it is the buffer allocated at {format_site(*c['site'])} (named "
                f"{c['name']} here)")
    cap.carried = [f["data"]["param"] for f in cap.summary["findings"] if f["id"] == "grad_carried"]
    if cap.carried:
        cap.summary["assumptions"].append(
            f"the script carries the .grad of {', '.join(cap.carried)} into its next iteration: repeated "
            f"gradient() calls at one point continue the script (call m returns the .grad after its m-th "
            f"iteration from {k}, the params set to the point when each iteration's tape starts)")
    cap.summary["capture_s"] = time.perf_counter() - t0
    mism = [f for f in cap.summary["findings"] if f["id"] == "seed_objective_mismatch"]
    terms = _iteration_terms(cap, run)
    cap.term_counts = [len(info["terms"]) for _, info in terms]
    if mism and cap.objective_weights is None and sum(cap.term_counts) >= 2:
        _fit_reported_weights(cap, mism[0])
    # a mismatch over several backwards stands only with the weights of the printed loss found
    cap.summary["findings"] = [f for f in cap.summary["findings"] if not f.get("tentative")]
    if cap.term_weights is not None:
        run.objective = float(sum(w * t for off, info in terms
                                  for w, t in zip(cap.term_weights.get(off) or (), info["terms"])))
        cap.summary["objective"]["value"] = run.objective
    if cap.external_terms:
        run.objective = float(run.objective) + cap.external_value()
        cap.summary["objective"]["value"] = run.objective
        cap.summary["objective"]["external_backwards"] = [t["n"] for t in cap.external_terms]
        cap.summary["assumptions"].append(
            "the update also consumes the gradient of backward " + ", ".join(
                f"{t['n']} (iteration {t['iteration']})" for t in cap.external_terms)
            + ", kept in a buffer since and not recomputed in this iteration: the objective adds that backward's "
              "loss at the params (one more re-run, the params set at the start of its own iteration), the loss "
              "whose gradient the update takes it for")


def _compare_consumed(cap):
    """When the trace saw a param's gradient written between the iteration's last backward and the update that
    consumes it (``cap.consume[name]["changed"]``): one gradient() re-run, whose ``.grad`` right after the
    backward and whose consumed gradient are compared. Sets the summary's ``consumed_gradient`` to
    ``{"differs": bool, "params": {name: {"max_abs_diff", "changed_by"}}}`` and, when they differ, an
    assumption saying so; the re-run's cost is one more run of the script."""
    changed = {n: c for n, c in cap.consume.items() if c.get("changed")}
    if not changed:
        return
    run, _, vals = cap._rerun("gradient")
    cap._restore(vals)
    out = {}
    if run.grad is None or run.grad_backward is None:
        return
    for name, c in changed.items():
        a = np.asarray(run.grad[name], dtype=np.float64)
        b = np.asarray(run.grad_backward[name], dtype=np.float64)
        out[name] = {"max_abs_diff": float(np.max(np.abs(a - b))) if a.size else 0.0, "changed_by": c["changed"],
                     "missed": name in run.consume_missed}
    differs = any(v["max_abs_diff"] > 0 and not v["missed"] for v in out.values())
    cap.summary["consumed_gradient"] = {"differs": differs, "params": out}
    if differs:
        cap.summary["assumptions"].append(
            "the update consumes a gradient that differs from the .grad right after backward "
            f"{cap.grad_after} (" + "; ".join(f"{n}: max |difference| {v['max_abs_diff']:.3g}, written by "
                                               + ", ".join(v["changed_by"]) for n, v in out.items())
            + "): gradient() returns what the update consumes")


def _check_determinism(cap, run):
    """Two re-runs at the captured params: differing objectives (beyond :data:`JITTER_RTOL`) flag it stochastic."""
    vals = [float(run.objective)]
    for _ in range(2):
        vals.append(cap.objective())
    ref = max(abs(v) for v in vals) or 1e-300
    spread = (max(vals) - min(vals)) / ref if all(math.isfinite(v) for v in vals) else 0.0
    cap.stochastic = bool(spread > JITTER_RTOL)
    cap.summary["stochastic_objectives"] = vals
    if cap.stochastic:
        cap.summary["assumptions"].append(
            f"re-runs at the same params gave objectives {', '.join(f'{v:.9g}' for v in vals)}: the script is "
            f"stochastic (unseeded randomness); nothing was pinned")


#: Share of the capture's time limit the look along the trajectory may take (counting run and later captures).
SCREEN_BUDGET_FRACTION = 0.5


def _count_iterations(cap, budget_s):
    """Length of the script's loop in iterations: one untraced run to its end (within ``budget_s``) counting
    backward calls; the modelled iteration K and those before it end at its last backward, and the backwards
    after it make iterations of as many backwards as the next one had (``cap.per_next``, when the discovery run
    saw it whole; else as many as iteration K: a gradient taken once before the loop belongs to iteration 1
    only). A lower bound when the budget ends the run."""
    run = _Run(cap, "count")
    saved = cap.timeout_s
    x0 = {k: _np(a) for k, a in cap.params.items()}  # the script's own updates move the params in this run
    cap.timeout_s = max(1.0, float(budget_s))
    try:
        cap._execute(run)
        ended = True
    except CaptureError:
        ended = False
    finally:
        cap.timeout_s = saved
        cap._restore(x0)
    per = getattr(cap, "per_next", None)
    if per and run.backwards >= cap.grad_after:
        n = cap.iteration + (run.backwards - cap.grad_after) // per
    else:
        n = run.backwards // max(1, cap.per_iteration)
    return n, ended


def _screened(cap, folder, spec, device, timeout_s):
    """Iteration 1 and later iterations checked (:mod:`defects4warp.capture.screen`); the capture to diagnose."""
    t0 = time.perf_counter()
    budget = SCREEN_BUDGET_FRACTION * float(timeout_s)
    n, ended = _count_iterations(cap, budget / 2)

    def later(k):
        return capture_problem(folder, dataclasses.replace(spec, iteration=k), device, timeout_s=timeout_s,
                               check_determinism=False)

    chosen, rows = screen_iterations(cap, later, n if n else None, budget - (time.perf_counter() - t0))
    info = {"loop_iterations": n, "loop_length_known": ended, "checked": rows, "diagnosed": chosen.iteration,
            "screen_s": time.perf_counter() - t0}
    bad = [r["iteration"] for r in rows if r.get("status") == "disagrees"]
    for c in (cap, chosen):
        c.summary["iterations"] = info
    if chosen is not cap:
        chosen.stochastic = cap.stochastic
        chosen.summary["assumptions"].append(
            f"iteration {cap.iteration}'s gradient shows no disagreement with a central difference and iteration "
            f"{chosen.iteration}'s does (iterations that disagree: {', '.join(map(str, bad))}): the problem is iteration "
            f"{chosen.iteration} of the script's own loop")
    return chosen
