"""The capture's wrappers over Warp's public names for one run (:func:`_install`), and the discovery
run's handling of each backward call (:func:`_discover_backward`: iteration bounds, objective, values).
"""

from __future__ import annotations

import os
import time

import numpy as np
import warp as wp

from ..measure import trace as _trace
from .iteration import handed_over, nested_sites, pending_recordings, restarted_alone, updated_owners
from .objective import _objective_at
from .runstate import (LOOKAHEAD_BACKWARDS, LOOKAHEAD_FRACTION, LOOKAHEAD_MIN_S, LOOKAHEAD_RESTARTED_BACKWARDS,
                       LOOKAHEAD_RESTARTED_MIN_S, MAX_EXTRA_BACKWARDS, _INTEROP,
                       _Limit, _Stop, _dtype, _from_user, _grad, _live_grads, _nested,
                       _np, _quiet)
from .spec import format_site


def _install(run):
    """Wrap the names this run needs through one :class:`defects4warp.measure.patches.Patches` of layer
    ``"capture"`` (the same mechanism the runtime trace installs its wrappers with) and return it
    (:meth:`~defects4warp.measure.patches.Patches.restore` restores it). Every wrapper closes over ``run``
    and acts only while ``run.in_force``; the trace recording the run, if any, is ``run.trace``."""
    patches = _trace.Patches("capture", run)
    try:
        for hook in (_hook_arrays, _hook_tape, _hook_calls, _hook_numpy, _hook_init, _hook_limits, _hook_interop):
            hook(run, patches.patch)
    except BaseException:
        patches.restore()
        raise
    return patches


def _hook_arrays(run, patch):
    """``wp.array.__new__``/``__init__``: allocation sites, params kept across re-runs, counted allocations."""
    A = wp.array
    o_init = A.__dict__["__init__"]
    o_new = A.__dict__.get("__new__")
    cap = run.cap

    def __new__(cls, *args, **kwargs):
        r = run if run.in_force else None
        st = run.trace
        if r is not None and not r.quiet and r.depth == 0 and r.reusing is None and not (st is not None and st.busy):
            r.check_time()
            site = r.site()
            n = r.counts.get(site, 0) + 1
            r.counts[site] = n
            site = (site[0], site[1], n)
            if r.mode == "discover":
                r.callers[site] = r.callers_of()
            if cls is A and r.mode != "discover":
                name = cap.by_site.get(site)
                if name is not None:
                    P = cap.params[name]
                    r.reusing = (name, P)
                    r.next_site[id(P)] = site
                    return P
            obj = o_new(cls, *args, **kwargs) if o_new is not None else object.__new__(cls)
            r.next_site[id(obj)] = site
            return obj
        if o_new is not None:
            return o_new(cls, *args, **kwargs)
        return object.__new__(cls)

    def __init__(self, *args, **kwargs):
        r = run if run.in_force else None
        if r is None or r.quiet or r.depth:
            return o_init(self, *args, **kwargs)
        if r.reusing is not None and r.reusing[1] is self:
            return _reinit_param(r, self, args, kwargs, o_init)
        site = r.next_site.pop(id(self), None)
        r.depth += 1
        try:
            o_init(self, *args, **kwargs)
        finally:
            r.depth -= 1
        if site is None:
            return None
        r.site_of[id(self)] = site
        r.keep.append(self)
        if getattr(self, "requires_grad", False):
            r.step()
            if r.mode == "discover":
                r.alloc_steps[id(self)] = r.steps - 1
                st = r.trace
                # (seq, shape, whether a tape block was open, the label of the array a wp.clone copied or None): an
                # array made inside `with tape:` is an intermediate of the recorded forward, never the update's new
                # params; a clone takes its values from its source
                src = getattr(r, "clone_src", None) if r.hook_depth else None
                src_rec = st.arrays.get(id(src)) if (st is not None and src is not None) else None
                r.alloc_seqs.append((len(st.events) if st is not None else 0, tuple(self.shape),
                                     bool(st is not None and st.active),
                                     src_rec["label"] if src_rec is not None else None))
                r.alloc_site_seqs.setdefault(tuple(site[:2]), []).append(len(st.events) if st is not None else 0)
        r.latest[site[:2]] = self
        if r.in_interop:
            r.interop_ids.add(id(self))
        if getattr(self, "requires_grad", False):
            r.rg.append(self)
            if r.mode == "discover" and r.injected:
                with _quiet(r):
                    try:
                        r.snap[id(self)] = _np(self)
                    except Exception:  # noqa: BLE001
                        pass
        return None

    patch(A, "__new__", staticmethod(__new__))
    patch(A, "__init__", __init__)


def _reinit_param(r, obj, args, kwargs, o_init):
    """``wp.array.__init__`` of a re-run at a param's site: the script's construction is made into a temporary and
    copied into the param object (the same one in every run), whose ``.grad`` is zeroed as in a fresh one."""
    name, P = r.reusing
    r.reusing = None
    site = r.next_site.pop(id(P), None)
    tmp = object.__new__(wp.array)
    r.depth += 1
    try:
        o_init(tmp, *args, **kwargs)
    finally:
        r.depth -= 1
    with _quiet(r):
        if tuple(tmp.shape) != tuple(P.shape) or tmp.dtype != P.dtype or str(tmp.device) != str(P.device):
            raise _Limit(f"the array allocated at {format_site(*site)} (param '{name}') has shape "
                         f"{tuple(tmp.shape)}, dtype {_dtype(tmp.dtype)} on {tmp.device} in this run but "
                         f"{tuple(P.shape)}, {_dtype(P.dtype)} on {P.device} in the capture run: the "
                         f"script allocates differently from run to run; name the param with --param")
        wp.copy(P, tmp)
        g = _grad(P)
        if g is not None:
            g.zero_()
    r.found[name] = P
    r.site_of[id(P)] = site
    r.latest[site[:2]] = P
    # a requires_grad allocation is a hooked call (a param re-allocated by the update: `w = wp.array(...)`);
    # arrays without .grad are not (a library's kernel annotations construct some when first imported)
    if getattr(tmp, "requires_grad", False):
        r.step()
    if name in r.pending:
        with _quiet(r):
            P.assign(r.pending.pop(name))
    return None


def _hook_tape(run, patch):
    """``Tape.__enter__``/``backward``: counted calls, the params set again in a continued chain, the backwards."""
    T = wp.Tape
    # wrap what is installed now (the trace's wrappers during a traced call), not the originals
    cur_enter, cur_bw = T.__enter__, T.backward

    def __enter__(self, *a, **k):
        r = run if run.in_force else None
        if r is not None and not r.quiet:
            r.step()
            r.tapes += 1
            if r.mode == "train" and r.injected and len(r.losses) >= r.n_train \
                    and r.backwards >= r.k + r.n_train * r.cap.per_iteration - 1:
                r.stopped = "tape"
                raise _Stop()
            if r.backwards in r.inject_after and r.backwards not in r.injected_at and r.mode != "train":
                r.do_inject()
        return cur_enter(self, *a, **k)

    def backward(self, loss=None, grads=None, *a, **k):
        r = run if run.in_force else None
        if r is None or r.quiet:
            return cur_bw(self, loss, grads, *a, **k)
        r.step()
        n = r.backwards + 1
        if r.mode == "count":
            r.backwards = n
            return _nested(r, cur_bw, self, loss, grads, *a, **k)
        if r.mode == "discover":
            _discover_backward(r, self, loss, grads, n)
            res = _nested(r, cur_bw, self, loss, grads, *a, **k)
            r.backwards = n
            return res
        return _rerun_backward(r, self, loss, grads, n, cur_bw, *a, **k)

    patch(T, "__enter__", __enter__)
    patch(T, "backward", backward)


def _hook_calls(run, patch):
    """``wp.launch``/``copy``/``clone`` and ``wp.array.assign``/``zero_``/``fill_`` as counted calls."""
    A = wp.array
    def counted(owner, fname):
        cur = owner.__dict__[fname] if isinstance(owner, type) else getattr(owner, fname)

        def call(*args, **kwargs):
            r = run if run.in_force else None
            st = run.trace
            if r is None or r.quiet or r.depth or (st is not None and st.busy):
                return cur(*args, **kwargs)
            if not r.hook_depth and fname == "launch":
                r.launches += 1
                if r.mode == "discover" and st is not None:
                    r.launch_sites[len(st.events)] = r.site()
            r.step()
            outer = not r.hook_depth
            if outer and fname == "clone":
                # the array a clone allocates takes its values from this source (see _hook_arrays)
                r.clone_src = args[0] if args else kwargs.get("src")
            r.hook_depth += 1
            try:
                return cur(*args, **kwargs)
            finally:
                r.hook_depth -= 1
                if outer and fname == "clone":
                    r.clone_src = None

        patch(owner, fname, call)

    for fname in ("launch", "copy", "clone"):
        counted(wp, fname)
    for fname in ("assign", "zero_", "fill_"):
        if fname in A.__dict__:
            counted(A, fname)


def _hook_numpy(run, patch):
    """``wp.array.numpy``: a host read, never a counted call. Warp's own calls inside it are not the script's: a
    CUDA array's ``.numpy()`` clones it to the host (``array.to("cpu")``, a ``wp.clone`` and a ``wp.copy``),
    a CPU array's returns a view, so counting them would number a CUDA run's calls differently from the same
    script's on the CPU and shift the iteration's bounds. In a gradient() re-run the values a ``.numpy()`` of a
    consumed gradient returned are kept (:meth:`_Run.note_numpy`; an update through host values reads them)."""
    A = wp.array
    cur = A.__dict__["numpy"]
    notes = run.mode == "gradient" and bool(run.cap.consume)

    def numpy(self, *a, **k):
        r = run if run.in_force else None
        if r is None:
            return cur(self, *a, **k)
        r.depth += 1
        try:
            res = cur(self, *a, **k)
        finally:
            r.depth -= 1
        if notes and r.consume_wait and not r.quiet and not r.depth:
            r.note_numpy(self, res)
        return res

    patch(A, "numpy", numpy)


def _hook_init(run, patch):
    """``wp.init``: whether the discovery run's script initialises Warp itself. The capture initialises Warp
    before running the script; Warp 1.0-1.1 need ``wp.init()`` before the first array (automatic from 1.2), so a
    script that never calls it stops there when run as it is (the summary says so)."""
    if run.mode != "discover":
        return
    cur = wp.init

    def init(*a, **k):
        r = run if run.in_force else None
        if r is not None and not r.quiet and r.depth == 0:
            r.script_inits += 1
        return cur(*a, **k)

    patch(wp, "init", init)


def _hook_limits(run, patch):
    """Refusals: CUDA graph capture and child processes started by the script's own files."""
    def limit(msg):
        def refuse(*a, **k):
            r = run if run.in_force else None
            if r is not None and not r.quiet and r.depth == 0 and _from_user(r):
                raise _Limit(msg)
            return None
        return refuse

    graph = ("the script captures a CUDA graph (wp.capture_begin / wp.ScopedCapture): launches replayed from a "
             "graph do not go through wp.launch, so the capture cannot see them. Run the script with graph capture "
             "off (pass its own flag after --, e.g. -- --no-graph) or write a make_problem adapter")
    if hasattr(wp, "capture_begin"):
        o_cb = wp.capture_begin

        def capture_begin(*a, **k):
            limit(graph)()
            return o_cb(*a, **k)

        patch(wp, "capture_begin", capture_begin)
    if hasattr(wp, "ScopedCapture"):
        o_sce = wp.ScopedCapture.__enter__

        def sc_enter(self, *a, **k):
            limit(graph)()
            return o_sce(self, *a, **k)

        patch(wp.ScopedCapture, "__enter__", sc_enter)
    procs = ("the script starts another process ({what}): the capture follows one Python process only. Run the "
             "training in one process (a flag of the script, passed after --), or write a make_problem adapter")
    import subprocess
    import multiprocessing.process as mpp

    o_popen = subprocess.Popen.__init__

    def popen_init(self, *a, **k):
        limit(procs.format(what="subprocess"))()
        return o_popen(self, *a, **k)

    patch(subprocess.Popen, "__init__", popen_init)
    o_start = mpp.BaseProcess.start

    def mp_start(self, *a, **k):
        limit(procs.format(what="multiprocessing"))()
        return o_start(self, *a, **k)

    patch(mpp.BaseProcess, "start", mp_start)
    if hasattr(os, "fork"):
        o_fork = os.fork

        def fork(*a, **k):
            limit(procs.format(what="os.fork"))()
            return o_fork(*a, **k)

        patch(os, "fork", fork)


def _hook_interop(run, patch):
    """Interop with torch/JAX/Paddle/DLPack: noted, and its arrays marked (the other framework owns the loop)."""
    for fname in _INTEROP:
        if not hasattr(wp, fname):
            continue
        orig = getattr(wp, fname)

        def interop(*a, __orig=orig, __name=fname, **k):
            r = run if run.in_force else None
            if r is None or r.quiet:
                return __orig(*a, **k)
            r.interop.append((__name, format_site(*r.site())))
            if __name.startswith("to_") and a and isinstance(a[0], wp.array):
                r.interop_ids.add(id(a[0]))
            r.in_interop += 1
            try:
                res = __orig(*a, **k)
            finally:
                r.in_interop -= 1
            if isinstance(res, wp.array):
                r.interop_ids.add(id(res))
            return res

        patch(wp, fname, interop)


def _rerun_backward(r, tape, loss, grads, n, cur_bw, *a, **k):
    """A re-run (objective, gradient, train, observe, count) at its n-th backward call: the objective of the
    modelled iteration's counted backwards, the ``.grad`` after its last, the stops of each mode."""
    per = r.cap.per_iteration
    if r.mode == "term":
        return _rerun_term_backward(r, tape, loss, grads, n, cur_bw, *a, **k)
    _stop_at_mode_bound(r, tape, loss, grads, n, per)
    if n < r.k:
        r.backwards = n
        return _nested(r, cur_bw, tape, loss, grads, *a, **k)
    _require_params_set(r, n)
    _add_objective_term(r, tape, loss, grads, n, per)
    res = _nested(r, cur_bw, tape, loss, grads, *a, **k)
    r.backwards = n
    _read_gradient_after(r, n, per)
    return res


def _rerun_term_backward(r, tape, loss, grads, n, cur_bw, *a, **k):
    """A term-mode re-run at its n-th backward call: returns the nested backward's result before backward
    ``r.term_n``; at it, sets ``r.objective`` to that backward's loss and stops the run (``_Stop``)."""
    # the loss of an earlier iteration's backward whose gradient the modelled update still consumes (a cached
    # prior's gradient), at the params set at the start of that iteration
    if n < r.term_n:
        r.backwards = n
        return _nested(r, cur_bw, tape, loss, grads, *a, **k)
    if not r.first_injected:
        raise _Limit(f"the re-run reached backward {n} before the point where the capture sets the params")
    r.objective = _objective_at(r, loss, grads, n, tape)[0]
    r.stopped = "term"
    raise _Stop()


def _stop_at_mode_bound(r, tape, loss, grads, n, per):
    """Returns None, or stops the re-run (``_Stop``) where its mode ends before the n-th backward runs: a train
    run past its iterations, an observe run past the gradient (reading the next backward's seeds), a gradient run
    whose continued iteration found no tape start to set the params at."""
    if r.mode == "train" and n >= r.k + r.n_train * per:
        r.stopped = "backward"
        raise _Stop()
    if r.mode == "observe" and n > r.cap.grad_after:
        # the seeded arrays of the next backward too: a script often prints the loss after its update,
        # computed at the params the next backward starts from
        try:
            r.next_info = _objective_at(r, loss, grads, n, tape)[1]
        except _Limit:
            r.next_info = None
        r.stopped = "backward"
        raise _Stop()
    if r.mode == "gradient" and n > r.k and (n - 1) in r.inject_after and (n - 1) not in r.injected_at:
        # a continued iteration whose tape started before the params could be set again: its gradient
        # would be at the point the script's update reached, not at the requested one
        r.stopped = f"no tape start before backward {n}"
        raise _Stop()


def _require_params_set(r, n):
    """Returns None when the re-run may go on at its n-th backward; raises ``_Limit`` at the k-th backward when
    the params were not set (the script does not repeat its run) or some were not allocated again."""
    if n == r.k and not r.first_injected:
        raise _Limit(f"the re-run reached backward {n} before the point where the capture sets the params (the "
                     f"start of iteration {r.cap.iteration}, hooked call {r.cap.inject_step}): the script does "
                     f"not repeat its own run; use --iteration or write a make_problem adapter")
    if n == r.k and r.pending:
        raise _Limit(f"param(s) {sorted(r.pending)} were not allocated again before backward {n} of the "
                     f"re-run (allocated at import time of a module outside the variant folder?): write a "
                     f"make_problem adapter, or allocate them in the script")


def _add_objective_term(r, tape, loss, grads, n, per):
    """Returns None; adds the n-th backward's loss to the iteration's objective when it is a counted term
    (``r.iter_value``, ``r.objective``, the infos of the k-th backward), recording a train run's losses and
    stopping an objective run (``_Stop``) after the iteration's last counted backward."""
    off = (n - r.k) % per if r.mode == "train" else n - r.k
    counted = r.cap.obj_offsets
    if off in counted and (r.mode == "train" or n - r.k < per):
        tw = r.cap.term_weights
        value, info = _objective_at(r, loss, grads, n, tape, weights=None if tw is None else tw.get(off))
        if n - r.k < per:
            r.term_infos[off] = info
        if off == counted[0]:
            r.iter_value = 0.0
            if n - r.k < per:
                r.k_info = info
                if r.mode == "observe":
                    r.kth = info
                    r.out_mark = len(r.out.getvalue()) if r.out is not None else 0
        r.iter_value += value
        if n - r.k < per:
            r.objective = r.iter_value
        if off == counted[-1]:
            if r.mode == "train":
                r.losses.append(r.iter_value)
            if r.mode == "objective":
                r.stopped = "objective"
                raise _Stop()


def _read_gradient_after(r, n, per):
    """Returns None; in a gradient re-run, reads the params' ``.grad`` after the iteration's last backward
    (``r.grad``), then waits for the update to consume it or stops the run (``_Stop``) at the target backward."""
    if r.mode == "gradient" and n >= r.cap.grad_after and (n - r.cap.grad_after) % per == 0:
        with _quiet(r):
            r.grad = {}
            for name, P in r.cap.params.items():
                g = _grad(P)
                r.grad[name] = np.zeros(P.shape, dtype=_np(P).dtype) if g is None else _np(g)
            r.grad_backward = {name: v.copy() for name, v in r.grad.items()}
        r.chain_reached += 1
        r.grad_last = n
        if r.grad_target is None and r.cap.consume and n == r.cap.grad_after:
            # go on to where the update consumes the gradients (_Run.read_consumed stops the run there)
            r.consume_wait = dict(r.cap.consume)
            return
        if r.grad_target is None or n >= r.grad_target:
            r.stopped = "gradient"
            raise _Stop()


def _discover_backward(r, tape, loss, grads, n) -> None:
    """The discovery run at its n-th backward call, before the backward runs: which optimisation iteration it
    belongs to, whether it adds to that iteration's objective, the objective's value and the params' values at
    the modelled iteration's first backward.

    An update of some array since the previous backward (:func:`defects4warp.capture.iteration.updated_owners`)
    starts a new iteration unless it belongs to an *inner solve* inside the iteration: it was made while
    another tape still held launches it had not differentiated
    (:func:`defects4warp.capture.iteration.pending_recordings`), or its array's allocation site is *nested*
    (:func:`defects4warp.capture.iteration.nested_sites`: updated before another site's update and
    re-allocated or emptied after it, an iterate the script starts afresh each outer iteration). The backward
    whose gradient such an update consumed is no term of the objective, nor is one seeded by an adjoint handed
    over from an earlier backward, or a repeat on the same tape recording. An allocation site one of whose
    updates was made inside an open outer recording is nested from then on (its other updates, made before the
    outer tape began recording in that iteration, are steps of the same solve).

    Nesting shows only once the outer update has happened, so the run goes on past the first backward of the
    next iteration as first classified (a *provisional* stop, whose state is kept) until nesting is seen or
    :data:`LOOKAHEAD_BACKWARDS` backwards (or :data:`LOOKAHEAD_FRACTION` of the run's time so far, at least
    :data:`LOOKAHEAD_MIN_S`) have passed (:data:`LOOKAHEAD_RESTARTED_BACKWARDS`, at least
    :data:`LOOKAHEAD_RESTARTED_MIN_S`, while every update seen was of a solve the script restarted:
    :func:`defects4warp.capture.iteration.restarted_alone`); :func:`finish_discovery` then cuts the run's record back to the first
    backward of iteration K+1. Raises :class:`_Stop` to end the run (or :data:`MAX_EXTRA_BACKWARDS` into the
    modelled iteration)."""
    st = r.trace
    K = r.cap.iteration
    events = st.events if st is not None else []
    seed_labels = set()
    if st is not None and grads:
        seed_labels = {st.arrays[id(v)]["label"] for v in grads.values() if id(v) in st.arrays}
    glabs = _live_grads(st) if st is not None else {}
    upd = _updates_since_last(r, st, events, glabs, seed_labels, n)
    site = {lab: _site_key(r, st, lab) for lab in upd} if st is not None else {}
    trec = st.tapes.get(id(tape)) if st is not None else None
    mark = {"n": n, "iteration": r.iteration, "seq": len(events), "tape": id(tape),
            "tape_label": trec.get("label") if trec else None,
            "epoch": trec.get("epoch") if trec else None, "updated": sorted(upd),
            "updated_sites": sorted({site[lab] for lab in upd}), "counted": True, "why": None,
            "out": len(r.out.getvalue()) if r.out is not None else 0}
    r.marks.append(mark)
    if upd and st is not None:
        r.nested |= nested_sites(r.marks, r.site_resets(events))
    _classify(r)
    same = [m for m in r.marks[:-1] if m["iteration"] == mark["iteration"]]
    if any(m["tape"] == mark["tape"] and m["epoch"] == mark["epoch"] for m in same):
        mark.update(counted=False, why="a repeated backward of the same tape recording")
    elif same and seed_labels and st is not None:
        if handed_over(events, same[0]["seq"], glabs, seed_labels):
            mark.update(counted=False, why="seeded by an adjoint an earlier backward of the iteration produced")
    cur = mark["iteration"]
    if cur > K and len(r.marks) > 1 and cur != r.marks[-2]["iteration"]:
        # a provisional first backward of the next iteration: what the script carried over into it
        _keep_stop_state(r, mark, loss, grads, n, tape, seed_labels)
        if r.look_t0 is None:
            r.look_t0 = time.perf_counter()
    if cur <= K or r.look_t0 is not None:
        try:
            value, info = _objective_at(r, loss, grads, n, tape)
            info["seq"] = len(events)
            mark["value"], mark["info"] = value, info
        except _Limit as exc:
            if cur <= K and mark["counted"]:
                raise
            mark["limit"] = exc
    _refresh_objective(r)
    if cur == K and r.k is None:
        r.k = n
        r.do_inject()  # the values of the params at the iteration's start (not changed within it)
    if st is not None:
        with _quiet(r):
            r.values.take([(st.arrays[id(a)]["label"], a) for a in r.grad_arrays() if id(a) in st.arrays])
            if mark["updated"] or n == 1:
                mark["values"] = r.values.vals  # the values at this iteration's start (take() makes a new dict)
    _stop_when_seen_enough(r, mark, loss, grads, n, tape, seed_labels, K)


def _updates_since_last(r, st, events, glabs, seed_labels, n):
    """Labels of the arrays updated since the previous backward that end an iteration; an inner solve's updates
    (made while another tape still records) mark that backward uncounted and their sites nested instead. Those
    updated by a write a tape recorded (:func:`defects4warp.capture.iteration.recorded_update`) are added to
    ``r.recorded_updates``."""
    upd = set()
    if st is not None and r.marks:
        def changed(lab):
            return r.values.changed(lab, st.by_label.get(lab))

        recorded = set()
        with _quiet(r):
            upd = updated_owners(events, r.marks[-1]["seq"], glabs, seed_labels, changed, r.alloc_seqs,
                                 lambda lab: getattr(st.by_label.get(lab), "shape", None), recorded)
        prev = r.marks[-1]
        inner = {}
        if upd:
            inner = pending_recordings(events, r.iter_start_seq.get(prev["iteration"], 0), prev["seq"],
                                       exclude={prev.get("tape_label")})
        if upd and inner:
            # an inner solve's update inside the outer forward: the backward it consumed is no term of the loss
            prev.update(counted=False, why="an inner solve's backward: an update inside the iteration consumes "
                                           "its gradient while the outer tape is still recording")
            r.inner_updates.append({"n": n, "updated": sorted(upd), "open_tapes": sorted(inner)})
            # the same arrays' updates made before the outer tape began recording are steps of that solve too
            r.nested |= {_site_key(r, st, lab) for lab in upd}
            upd = set()
        r.recorded_updates |= recorded & upd
    return upd


def _stop_when_seen_enough(r, mark, loss, grads, n, tape, seed_labels, K):
    """Raise :class:`_Stop` once the look-ahead past iteration ``K`` is spent, or ``MAX_EXTRA_BACKWARDS`` into it."""
    first_next = next((m for m in r.marks if m["iteration"] == K + 1), None)
    if first_next is not None:
        t0 = r.look_t0 if r.look_t0 is not None else time.perf_counter()
        spent = time.perf_counter() - t0
        count, floor = LOOKAHEAD_BACKWARDS, LOOKAHEAD_MIN_S
        if not r.nested and (n - first_next["n"] >= count or spent > floor):
            if r.restarted is None and r.trace is not None:  # read once, where the usual bound ends the look
                r.restarted = restarted_alone(r.marks, r.site_resets(r.trace.events))
            if r.restarted:  # only restarted solves so far: their outer update is still to come
                count, floor = LOOKAHEAD_RESTARTED_BACKWARDS, LOOKAHEAD_RESTARTED_MIN_S
        budget = max(floor, LOOKAHEAD_FRACTION * (t0 - r.t0))
        if r.nested or n - first_next["n"] >= count or spent > budget:
            if not r.nested and n - first_next["n"] < count:
                r.look_cut = {"backwards": n - first_next["n"], "seconds": round(spent, 2)}
            r.stopped = "next iteration's backward"
            raise _Stop()
    elif r.k is not None and _start_of(r, K) is not None and n > _start_of(r, K) + MAX_EXTRA_BACKWARDS + sum(
            1 for m in r.marks if m["iteration"] == K and (m["why"] or "").startswith("an inner solve")):
        _keep_stop_state(r, mark, loss, grads, n, tape, seed_labels)
        r.cut_at = n
        r.stopped = "next iteration's backward"
        raise _Stop()


def _start_of(r, K) -> int | None:
    """The first backward of iteration ``K`` as the marks are classified now (an inner solve found later moves it
    past the provisional start ``r.k``); None when no mark is in iteration ``K`` (any more: it is still to come)."""
    return next((m["n"] for m in r.marks if m["iteration"] == K), None)


def _site_key(r, st, lab):
    """``(file, line)`` of the allocation of the array labelled ``lab`` in the live trace ``st`` (``("?", lab)``
    when it was not seen)."""
    obj = st.by_label.get(lab)
    at = r.site_of.get(id(obj)) if obj is not None else None
    return tuple(at[:2]) if at else ("?", lab)


def _keep_stop_state(r, mark, loss, grads, n, tape, seed_labels) -> None:
    """The state at a (provisional) first backward of the next iteration: the params' ``.grad`` as the script
    carried them into it, its objective and seeds, where the run's record ends if the run stops there."""
    with _quiet(r):
        nbg = {}
        for P in r.grad_arrays():
            g = _grad(P)
            nbg[id(P)] = None if g is None else _np(g)
    try:
        nobj, ninfo = _objective_at(r, loss, grads, n, tape)
    except _Limit:
        nobj, ninfo = None, None
    r.stop_state[n] = {"next_backward_grads": nbg, "next_objective": nobj, "next_info": ninfo,
                       "stop_seeds": set(seed_labels) if grads else set(), "seq": mark["seq"], "out": mark["out"]}


def _classify(r) -> None:
    """Each mark's iteration from the updates that end one (those of arrays at non-nested sites)."""
    it = 1
    for i, m in enumerate(r.marks):
        if i and any(s not in r.nested for s in m["updated_sites"]):
            it += 1
        m["iteration"] = it
        if i and m["updated_sites"] and all(s in r.nested for s in m["updated_sites"]):
            prev = r.marks[i - 1]
            if prev["counted"]:
                prev.update(counted=False, why="an inner solve's backward: its gradient is consumed by the update "
                                               "of an iterate the script starts afresh in each iteration")
    r.iteration = it
    starts = {}
    for i, m in enumerate(r.marks):
        if m["iteration"] not in starts:
            starts[m["iteration"]] = r.marks[i - 1]["seq"] + 1 if i else 0
    r.iter_start_seq = starts


def finish_discovery(r) -> None:
    """After the discovery run: cut its record back to the first backward of iteration K+1 as finally classified
    (the run may have gone on past it, :func:`_discover_backward`): marks, the state kept there, the stop, and
    the params' values at the start of iteration K when the classification moved it."""
    K = r.cap.iteration
    first_next = next((m for m in r.marks if m["iteration"] == K + 1), None)
    if first_next is not None and any(m["iteration"] >= K + 2 for m in r.marks):
        r.per_next = sum(1 for m in r.marks if m["iteration"] == K + 1)  # the look saw iteration K+1 whole
    cut = first_next["n"] if first_next is not None else r.cut_at
    if cut is not None:
        keep = r.stop_state.get(cut)
        r.marks = [m for m in r.marks if m["n"] < cut]
        if keep is not None:
            r.next_backward_grads = keep["next_backward_grads"]
            r.next_objective, r.next_info = keep["next_objective"], keep["next_info"]
            r.stop_seeds = keep["stop_seeds"]
            r.cut_seq, r.cut_out = keep["seq"], keep["out"]
            r.stopped = "next iteration's backward"
        r.backwards = min(r.backwards, cut - 1)
    _refresh_objective(r)
    itK = [m for m in r.marks if m["iteration"] == K]
    bad = [m for m in itK if m["counted"] and "limit" in m]
    if bad:
        raise bad[0]["limit"]
    if itK and r.k is not None and itK[0]["n"] != r.k and itK[0].get("values") is not None:
        # the iteration starts later than first classified: the params' values at its real start
        st = r.trace
        r.k = itK[0]["n"]
        for lab, v in itK[0]["values"].items():
            obj = r.by_label.get(lab) if getattr(r, "by_label", None) else None
            if obj is not None:
                r.snap[id(obj)] = v


def _refresh_objective(r) -> None:
    """The discovery run's objective of the modelled iteration: the sum of the values of its counted backwards
    (``r.objective``), and the first counted one's info (``r.kth``, ``r.k_info``); a backward found later to
    be an inner solve's is uncounted."""
    K = r.cap.iteration
    its = [m for m in r.marks if m["iteration"] == K and m["counted"] and "value" in m]
    r.iter_value = float(sum(m["value"] for m in its))
    r.objective = r.iter_value if its else None
    r.kth = its[0]["info"] if its else None
    r.k_info = r.kth
