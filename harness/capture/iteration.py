"""Iteration bounds of a training script: where one optimisation iteration ends and the next begins.

The unit a captured Problem models is the script's *optimisation iteration*: everything it does
between the update that wrote its params (or their allocation, for the first iteration) and the
next update that consumes their gradient. Every launch, tape and ``Tape.backward()`` in between
belongs to it: work done before ``with tape:`` that maps the params to an intermediate, checkpoint
segments replayed under their own tapes, one tape per window or loss.

An **update** of an array ``X`` is seen in the runtime trace (:mod:`defects4warp.measure.trace`)
between two backward calls when the script consumed ``X.grad`` (read the property, called
``.numpy()`` on it, passed it to a launch or a host copy) and then

* wrote ``X`` outside any tape block (an update kernel, ``warp.optim``'s step, ``assign``,
  ``wp.copy``), or
* wrote ``X``, reading its gradient or an array computed from it, inside a tape block entered after the
  backward whose gradient it consumed (:func:`recorded_update`: a momentum step launched in the next
  iteration's ``with tape:``, before its ``backward()``, applying the previous iteration's gradient), or
* allocated a new ``requires_grad`` array of ``X``'s shape outside any tape block
  (``w = wp.array(w.numpy() - lr * g)``), or
* changed ``X``'s values with no traced write (a ``.numpy()`` view written on the CPU),

unless that ``.grad`` (or a copy of it) seeds the backward being called: an adjoint handed from
one tape to another (checkpointing, an inner solver's tape) is no update; nor is a ``.grad`` read only
to be zeroed. An inner solve's update (:func:`pending_recordings`, :func:`nested_sites`) ends no
iteration; where the update consumes the gradient is :func:`consumption_point`.

These functions read the live trace's event list (dicts with ``kind``, ``seq``, ``reads``,
``writes``, ``tape``, ``active_tape``, ``src``, ``dest``, ``array``, ``grad``) and import no Warp.
"""

from __future__ import annotations

import numpy as np

#: Bytes of array values the discovery run keeps per backward call to see updates written through a
#: ``.numpy()`` view (no traced write); arrays beyond the budget are compared by traced writes only.
VALUE_SNAPSHOT_BYTES = 64 << 20


def grad_labels(arrays: dict) -> dict:
    """``{grad label: owner label}`` from a trace array table (``{label: {"grad_of": owner or None}}``)."""
    return {lab: info["grad_of"] for lab, info in arrays.items() if info.get("grad_of") is not None}


def is_update_event(ev: dict, grads) -> bool:
    """Whether trace event ``ev`` consumes a gradient: a launch reading a ``.grad`` array, a host copy from
    one, or a ``.grad.numpy()`` call (the update step of an optimiser reads the gradient it applies)."""
    k = ev["kind"]
    if k == "launch":
        return bool(set(ev.get("reads") or []) & set(grads))
    if k == "host":
        return ev.get("src") in grads
    return k in ("grad_numpy",)


def consumed_owners(events, start: int, grads: dict) -> dict:
    """``{owner label: seq of its first gradient use}`` for the gradients consumed in ``events[start:]``.

    A ``.grad`` property read counts (the script took the array) as do ``.numpy()`` on it, passing it to
    a launch or copying from it; ``grads`` maps grad labels to their owners (:func:`grad_labels`). An owner
    whose ``.grad`` was only read and zeroed or filled (``x.grad.zero_()`` before a window's backward) has
    consumed nothing and is left out, as in :func:`defects4warp.capture.discovery._consumed`."""
    out, read_only, emptied = {}, set(), set()
    for ev in events[start:]:
        k = ev["kind"]
        owners = []
        if k in ("grad_read", "grad_numpy", "grad_assign") and ev.get("array") is not None:
            owners = [ev["array"]]
        elif k == "launch":
            owners = [grads[g] for g in ev.get("reads") or [] if g in grads]
        elif k == "host" and ev.get("src") in grads:
            owners = [grads[ev["src"]]]
        elif k == "host" and ev.get("dest") in grads and ev.get("op") in ("zero_", "fill_"):
            emptied.add(grads[ev["dest"]])
        for o in owners:
            if o not in out:
                out[o] = ev["seq"]
                if k == "grad_read":
                    read_only.add(o)
            elif k != "grad_read":
                read_only.discard(o)
    return {o: s for o, s in out.items() if not (o in read_only and o in emptied)}


def handed_over(events, start: int, grads: dict, seed_labels) -> set:
    """Owners whose ``.grad`` (or a host copy of it) made since ``start`` is among ``seed_labels``, or is copied
    into the ``.grad`` of another array (``wp.copy(x_end.grad, x0.grad)`` before the earlier segment's
    ``backward``, by a host copy or a launch): the adjoint one backward hands to the next (checkpoint segments,
    an inner solver's tape). No update writes a gradient into another array's ``.grad``; a backward does
    start from one."""
    derived = {g: o for g, o in grads.items()}
    out = set()
    for ev in events[start:]:
        if ev["kind"] == "host" and ev.get("src") in derived and ev.get("dest"):
            src_owner = derived[ev["src"]]
            if ev["dest"] in grads and grads[ev["dest"]] != src_owner:
                out.add(src_owner)
            derived[ev["dest"]] = src_owner
        elif ev["kind"] == "launch" and ev.get("tape") is None and ev.get("active_tape") is None:
            srcs = {derived[r] for r in ev.get("reads") or () if r in derived}
            for d in ev.get("writes") or ():
                if d in grads:
                    out |= {o for o in srcs if o != grads[d]}
        elif ev["kind"] in ("grad_read", "grad_numpy") and ev.get("grad") is not None and ev.get("array"):
            derived.setdefault(ev["grad"], ev["array"])
    return out | {derived[s] for s in seed_labels if s in derived}


def updated_owners(events, start: int, grads: dict, seed_labels, changed, allocs, shape_of=None,
                   recorded=None) -> set:
    """Owners updated between the backward call at ``events[start]`` and now (module docstring).

    Parameters
    ----------
    events : list of dict
        The live trace's events.
    start : int
        Seq of the previous backward call's first event (0 before the first backward).
    grads : dict
        ``{grad label: owner label}`` (:func:`grad_labels`).
    seed_labels : iterable of str
        Labels of the seed arrays of the backward being called (``grads={...}`` values).
    changed : callable
        ``changed(owner label) -> bool``: whether the owner's values differ from those at the previous
        backward call (False when unknown).
    allocs : list of (int, tuple) or (int, tuple, bool, str or None)
        ``(seq, shape[, inside a tape block, clone source])`` of the ``requires_grad`` arrays allocated by the
        script, in order; one allocated while a ``with tape:`` block was open (an intermediate of the recorded
        forward, such as the initial state of a rollout) or cloned from an array computed before the gradient use
        (:func:`_fresh_values`) is no re-allocation of the params.
    shape_of : callable, optional
        ``shape_of(owner label) -> tuple or None``: a re-allocation counts only with the owner's shape
        (a loss buffer allocated per window is no new param); None: any shape counts.
    recorded : set, optional
        Filled in place with the owners whose update was a write inside a tape block (:func:`recorded_update`) that
        reads their gradient or an array computed from it (:func:`_first_update_write`).

    Returns
    -------
    set of str
        Owner labels.
    """
    used = consumed_owners(events, start, grads)
    if not used:
        return set()
    used = {o: s for o, s in used.items() if o not in handed_over(events, start, grads, seed_labels)}
    out = set()
    for o, first in used.items():
        how, traced_write = _first_update_write(events, first, o, grads)
        if how is not None:
            out.add(o)
            if how == "recorded" and recorded is not None:
                recorded.add(o)
        if o in out:
            continue
        want = shape_of(o) if shape_of is not None else None
        if successor_written(events, first, o, grads, want, shape_of):
            out.add(o)
            continue
        if any(a[0] >= first and (want is None or tuple(a[1]) == tuple(want)) and not (len(a) > 2 and a[2])
               and _fresh_values(events, first, a[3] if len(a) > 3 else None, o) for a in allocs):
            out.add(o)
            continue
        if not traced_write and changed(o):
            out.add(o)
    return out


def _first_update_write(events, first: int, owner: str, grads: dict) -> tuple:
    """``(how, traced_write)`` for ``owner`` after its gradient use at seq ``first``: ``how`` is ``"untaped"`` at its
    first write outside any tape block, ``"recorded"`` at a write inside a tape block that :func:`recorded_update`
    takes as an update and that reads the gradient or an array computed from it since ``first`` (the velocity a
    momentum kernel mixed it into; an intermediate recomputed from other arrays in the next forward is none), else
    None; ``traced_write``: whether any launch or host call wrote ``owner`` since ``first``."""
    derived = {g for g, o in grads.items() if o == owner}
    traced_write = False
    for ev in events[first:]:
        reads, dest = (), ()
        if ev["kind"] == "launch":
            reads, dest = ev.get("reads") or (), ev.get("writes") or ()
        elif ev["kind"] == "host" and ev.get("dest"):
            reads, dest = ((ev["src"],) if ev.get("src") else ()), (ev["dest"],)
        if owner in dest:
            traced_write = True
            if ev.get("tape") is None and ev.get("active_tape") is None:
                return "untaped", True
            if derived & set(reads) and recorded_update(events, first, ev):
                return "recorded", True
        if derived & set(reads):
            derived |= set(dest) - {owner}
    return None, traced_write


def recorded_update(events, first: int, ev: dict) -> bool:
    """Whether ``ev``, a write made inside a tape block (``active_tape``, else the ``tape`` that recorded it) after
    a gradient use at seq ``first``, is an update that ends an iteration: that block was entered after the last
    backward before ``first``, so the gradient consumed comes from the backward of an earlier tape block that had
    already ended (the previous iteration's gradient, applied by a momentum step launched in the next iteration's
    ``with tape:`` before its ``backward()``). A write inside a block entered before that backward (an inner
    solver's step, its own tape's backward run while the outer tape records) stays inside the iteration, as
    does any write when no backward precedes ``first`` or the block's entry was not traced.

    Parameters
    ----------
    events : list of dict
        The live trace's events (module docstring; ``tape_enter`` events carry ``tape``).
    first : int
        Seq of the gradient use (:func:`consumed_owners`).
    ev : dict
        The writing event (``seq``, ``tape``, ``active_tape``).
    """
    block = ev.get("active_tape") or ev.get("tape")
    if block is None:
        return False
    back = next((i for i in range(min(first, len(events)) - 1, -1, -1) if events[i]["kind"] == "backward"), None)
    if back is None:
        return False
    return any(events[i]["kind"] == "tape_enter" and events[i].get("tape") == block
               for i in range(back + 1, min(ev["seq"], len(events))))


def _fresh_values(events, first: int, src, owner) -> bool:
    """Whether an allocation whose values a ``wp.clone`` copied from ``src`` (a label; None: not a clone, the values
    built on the host) can hold the new values of ``owner`` after its gradient use at seq ``first``: ``src`` is
    ``owner`` or was written since then. A clone of an array computed before the gradient was used (a checkpoint of
    the rollout, the initial state replayed under a segment's own tape) is no re-allocation of the params."""
    if src is None or src == owner:
        return True
    for ev in events[first:]:
        if (ev["kind"] == "launch" and src in (ev.get("writes") or ())) or (
                ev["kind"] == "host" and ev.get("dest") == src):
            return True
    return False


def successor_written(events, first: int, owner: str, grads: dict, want=None, shape_of=None) -> bool:
    """Whether a launch outside any tape block, at or after seq ``first``, reads ``owner``'s ``.grad`` and writes
    another ``requires_grad`` array of ``owner``'s shape: the update of a param kept in two buffers, the new
    values written into the other one, which the script then uses in its place (``step(pa, pa.grad) -> pb;
    pa, pb = pb, pa``). The written array counts only if it has a ``.grad`` of its own (a ``grads`` owner) and,
    with ``shape_of`` and ``want`` given, ``shape_of(label) == want``; a launch writing only a scratch array
    without ``requires_grad`` (an optimiser's moment buffer) is no such update.

    Parameters
    ----------
    events : list of dict
        The live trace's events (module docstring).
    first : int
        Seq of the owner's first gradient use since the previous backward (:func:`consumed_owners`).
    owner : str
        The owner's label.
    grads : dict
        ``{grad label: owner label}`` (:func:`grad_labels`).
    want : tuple, optional
        The owner's shape.
    shape_of : callable, optional
        ``shape_of(label) -> tuple or None``.
    """
    owners = set(grads.values())
    return any(d != owner and d in owners and (want is None or shape_of is None
                                               or tuple(shape_of(d) or ()) == tuple(want))
               for d in grad_update_writes(events, first, owner, grads))


def grad_update_writes(events, first: int, owner: str, grads: dict) -> set:
    """Labels written, at or after seq ``first``, by launches outside any tape block that read ``owner``'s
    ``.grad`` (``grads``: ``{grad label: owner label}``): what an update step consuming that gradient writes."""
    mine = {g for g, o in grads.items() if o == owner}
    out = set()
    for ev in events[first:]:
        if (ev["kind"] == "launch" and ev.get("tape") is None and ev.get("active_tape") is None
                and mine & set(ev.get("reads") or ())):
            out.update(ev.get("writes") or ())
    return out


class ValueSnapshots:
    """Values of the ``requires_grad`` arrays at the last backward call, to see ``.numpy()``-view updates.

    Parameters
    ----------
    budget_bytes : int, default :data:`VALUE_SNAPSHOT_BYTES`
        Arrays are copied in order until the budget is spent; later ones are not compared.
    """

    def __init__(self, budget_bytes: int = VALUE_SNAPSHOT_BYTES):
        self.budget = int(budget_bytes)
        self.vals = {}

    def take(self, labelled) -> None:
        """Copy the values of ``labelled`` (``[(label, array)]``); ``array.numpy()`` is read."""
        self.vals, spent = {}, 0
        for lab, a in labelled:
            try:
                n = int(a.size) * int(getattr(a.dtype, "_length_", 1) or 1) * 8
            except Exception:  # noqa: BLE001 - an exotic array: not compared
                continue
            if spent + n > self.budget:
                continue
            try:
                self.vals[lab] = np.array(a.numpy(), copy=True)
            except Exception:  # noqa: BLE001
                continue
            spent += n

    def changed(self, lab, a) -> bool:
        """Whether ``a`` (labelled ``lab``) now differs from its copy (False when it has none)."""
        before = self.vals.get(lab)
        if before is None or a is None:
            return False
        try:
            now = np.asarray(a.numpy())
        except Exception:  # noqa: BLE001
            return False
        return now.shape != before.shape or not np.array_equal(now, before)


def step_of(step_seqs, seq: int) -> int:
    """Index of the hooked call whose events include trace event ``seq`` (``step_seqs[i]``: the number of
    events when call ``i`` began, nondecreasing); -1 before the first call."""
    lo, hi = 0, len(step_seqs)
    while lo < hi:
        mid = (lo + hi) // 2
        if step_seqs[mid] <= seq:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def injection_step(events, window_start: int, window_end: int, params, grads: dict, step_seqs, alloc_steps) -> tuple:
    """Where a re-run sets the params of an iteration: the hooked call after the last write of any param
    before its first read in the iteration. A write by the update (a launch that reads a ``.grad``) counts even
    after a read of that param: what read the param between the previous backward and the update that wrote it
    (``wp.copy(anchor, w)`` before ``step(w, w.grad)``) belongs to the previous iteration. A write outside any tape
    block of a param whose gradient the window already used and that no event of the iteration read yet is the
    update too, and its own read of the param is none of the iteration's: a momentum step ``params += vel`` after
    the kernel that mixed the gradient into ``vel``.

    Parameters
    ----------
    events : list of dict
        The discovery run's trace events.
    window_start, window_end : int
        Seqs bounding the iteration: just after the last backward event of the previous iteration (0 for
        the first) and the last backward event of this one.
    params : list of str
        Labels of the params.
    grads : dict
        ``{grad label: owner label}``.
    step_seqs : list of int
        Trace length when each hooked call (launch, copy, clone, tape start, backward, allocation) began.
    alloc_steps : dict
        ``{label: index of the hooked call that allocated it}`` for the params allocated while the script ran.

    Returns
    -------
    (int, int, int or None)
        ``(step, first read step, seq of the first read)``: the re-run sets the params just before hooked call
        ``step``; the first param read of the iteration is at ``first read step`` (``step`` is never past it).
    """
    last = -1
    pset = set(params)
    for lab in params:
        if lab in alloc_steps:
            last = max(last, alloc_steps[lab])
    first_read = {}  # label -> (step, seq) of its first read in the iteration
    used = set()  # params whose gradient the window used so far
    for ev in events[window_start:window_end]:
        k = ev["kind"]
        reads, writes = (), ()
        if k == "launch":
            reads, writes = ev.get("reads") or (), ev.get("writes") or ()
            used |= {grads[g] for g in reads if g in grads}
        elif k == "host":
            reads = (ev["src"],) if ev.get("src") else ()
            writes = (ev["dest"],) if ev.get("dest") else ()
            used |= {grads[g] for g in reads if g in grads}
        elif k in ("grad_read", "grad_numpy") and ev.get("array") in pset:
            # the update's gradient use (a .numpy() view written back comes right after)
            used.add(ev["array"])
            if ev["array"] not in first_read:
                last = max(last, step_of(step_seqs, ev["seq"]))
            continue
        elif k == "backward":
            reads = ()
        upd = is_update_event(ev, grads) or (ev.get("tape") is None and ev.get("active_tape") is None and any(
            lab in used and lab not in first_read for lab in pset & set(writes)))
        for lab in writes:
            if lab in pset and (lab not in first_read or upd):
                last = max(last, step_of(step_seqs, ev["seq"]))
                # reads before the update that writes the param belong to the previous iteration
                # (a proximal anchor copied from the params between the backward and the update)
                first_read.pop(lab, None)
        if upd:
            continue
        for lab in reads:
            if lab in pset and lab not in first_read:
                first_read[lab] = (step_of(step_seqs, ev["seq"]), ev["seq"])
    step = last + 1
    if not first_read:
        return step, step, None
    fr, first_seq = min(first_read.values())
    return min(step, fr), fr, first_seq


def consumption_point(events, b0: int, w1: int, owner: str, grads: dict, end=None, shape_of=None):
    """Where the update of ``owner`` consumes its gradient, and which array holds it there.

    The gradient an update applies is not always ``owner.grad`` right after the iteration's last backward:
    the script may zero it (``tape.zero()``, ``x.grad.zero_()``), overwrite it, or apply a copy of it
    (``wp.clone(x.grad)``, a buffer a launch outside any tape filled from it: a sum of the gradients of
    several backwards). The *update* is the first event after ``w1`` that writes ``owner`` outside any
    tape block (a launch, ``assign``, ``wp.copy``). The *gradient arrays* are ``owner``'s ``.grad``
    arrays and every array derived from one since ``b0`` (a host copy or clone of one, or an array a launch
    outside any tape wrote while reading gradient arrays only, ``owner`` itself excepted: a launch that
    also reads other arrays, such as a momentum buffer, mixes the gradient with optimiser state and its
    output is no gradient). Then:

    * the update reads a gradient array: it is consumed at the update (``offset`` 0: read just before
      the hooked call that made the update event);
    * else the first launch outside any tape, after the last backward and before the update, that reads a
      gradient array together with other arrays (a momentum or moment kernel) consumes it there;
    * else the last ``.numpy()`` of a gradient array before the update (or before ``end``, when no traced
      update was seen: an update through a ``.numpy()`` view or a re-allocation) is where it was consumed
      (``offset`` 1: read just before the next hooked call, the values ``.numpy()`` returned then).

    Parameters
    ----------
    events : list of dict
        The discovery run's trace events (:mod:`defects4warp.measure.trace`).
    b0, w1 : int
        Seqs of the iteration's first and last backward events.
    owner : str
        The param's trace label.
    grads : dict
        ``{grad label: owner label}``.
    end : int, optional
        Seq bound of the search (default: the end of ``events``).

    An update launch that reads several gradient arrays of ``owner``'s shape (``shape_of(label) -> shape``; without
    it only one) applies their sum: a prior's gradient cached in its own buffer and the data term's ``.grad``
    (``step(w, w.grad, prior_grad)``), also when the cached one was filled in an earlier iteration (the record is
    followed from its start). ``arrays`` lists them and ``sources`` the backwards each gradient comes from
    (:func:`_gradient_sources`): one before the iteration's first backward is a term of the loss the update follows
    that the iteration does not recompute (a stale cached gradient), evaluated at the params by the capture.

    Returns
    -------
    dict or None
        ``{"seq", "offset", "array", "is_grad", "update_seq", "changed", "arrays", "sources"}``: the consuming
        event's seq,
        0 or 1 (above), the label of the gradient array read there, whether it is a ``.grad`` of
        ``owner`` (else a copy or derived buffer), the update event's seq (None when not traced), the
        events between ``w1`` and the consumption that wrote a gradient array or zeroed ``owner``'s adjoint
        (``[{"seq", "kind", "op"}]``), the gradient arrays summed there (``array`` first or among them) and
        ``{array: [seq of each backward its gradient comes from]}``; None when no consumption is seen (then the
        ``.grad`` after the last
        backward stands).
    """
    end = len(events) if end is None else min(int(end), len(events))
    own = {g for g, o in grads.items() if o == owner}
    derived = set(own)
    made = {}  # derived array -> (seq of the event that filled it, the derived arrays it was filled from)
    update, numpied, reader = _scan_to_update(events, b0, w1, end, owner, own, derived, made)
    at, offset, array = _consuming_event(update, reader, numpied, derived, own)
    if at is None or array is None:
        return None
    changed = _changed_before(events, w1, at, array, owner, own, made)
    summed = [array]
    if at is update and update is not None and update["kind"] == "launch" and shape_of is not None:
        want = shape_of(owner)
        summed = [a for a in update.get("reads") or [] if a in derived
                  and (want is None or tuple(shape_of(a) or ()) == tuple(want))] or [array]
    sources = {a: _gradient_sources(events, a, at["seq"], owner, own, made) for a in summed}
    return {"seq": at["seq"], "offset": offset, "array": array, "is_grad": array in own,
            "update_seq": update["seq"] if update is not None else None, "changed": changed,
            "arrays": summed, "sources": sources, "is_grads": {a: a in own for a in summed}}


def _gradient_sources(events, array, until, owner, own, made) -> list:
    """Seqs of the backward events whose gradient of ``owner`` the gradient array ``array`` holds at seq ``until``:
    back through the copies and gradient-only launches that filled it (``made``) to a ``.grad`` of ``owner``
    (``own``), and there the backwards since that adjoint was last zeroed (``Tape.zero()``/``reset()`` over
    ``owner``, a ``zero_``/``fill_`` of the ``.grad``) before the array was read, among those whose tape recorded a
    launch reading ``owner``."""
    out, todo, seen = set(), [(array, until)], set()
    while todo:
        a, t = todo.pop()
        if (a, t) in seen:
            continue
        seen.add((a, t))
        if a in own:
            last = -1
            for ev in events[:t]:
                k = ev["kind"]
                if (k in ("tape_zero", "tape_reset") and owner in (ev.get("arrays") or ())) or (
                        k == "host" and ev.get("dest") in own and ev.get("op") in ("zero_", "fill_")):
                    last = ev["seq"]
            # the backwards since then whose tape recorded a launch that read the owner (those that wrote its .grad)
            for ev in events[last + 1:t]:
                if ev["kind"] == "backward" and any(
                        e["kind"] == "launch" and e.get("tape") == ev.get("tape") and e.get("epoch") == ev.get("epoch")
                        and owner in (e.get("reads") or ()) for e in events[:ev["seq"]]):
                    out.add(ev["seq"])
        elif a in made:
            seq, srcs = made[a]
            todo.extend((b, seq) for b in srcs)
    return sorted(out)


def _scan_to_update(events, b0, w1, end, owner, own, derived, made):
    """Walk ``events[b0:end]`` to the update of ``owner``, growing ``own``, ``derived`` and ``made`` in place:
    ``(update event, last .numpy() of a gradient array, (first mixing launch, its gradient array))``."""
    update, numpied, reader = None, None, None

    def derive(ev, srcs, dests):
        for d in dests:
            if d not in own:
                derived.add(d)
                made[d] = (ev["seq"], set(srcs))

    # from the start of the record: a gradient cached in an earlier iteration (copied from .grad once, before the
    # loop) and read by this iteration's update is one of the gradients that update consumes
    for ev in events[:end]:
        k = ev["kind"]
        if k in ("grad_read", "grad_numpy", "grad_assign") and ev.get("array") == owner and ev.get("grad"):
            own.add(ev["grad"])
            derived.add(ev["grad"])
        if ev["seq"] <= w1:
            if k == "host" and ev.get("src") in derived and ev.get("dest") and ev.get("op") in ("copy", "clone"):
                derive(ev, [ev["src"]], [ev["dest"]])
            elif (k == "launch" and ev.get("tape") is None and ev.get("active_tape") is None
                    and derived & set(ev.get("reads") or []) and set(ev.get("reads") or []) <= derived):
                derive(ev, set(ev.get("reads") or []), set(ev.get("writes") or []) - {owner})
            continue
        untaped = ev.get("tape") is None and ev.get("active_tape") is None
        if k == "launch" and untaped and owner in (ev.get("writes") or []):
            update = ev
            break
        if k == "host" and untaped and ev.get("dest") == owner:
            update = ev
            break
        if k == "grad_numpy" and (ev.get("grad") in derived or ev.get("array") == owner):
            numpied = ev
        if k == "host" and ev.get("src") in derived and ev.get("dest") and ev.get("op") in ("copy", "clone"):
            derive(ev, [ev["src"]], [ev["dest"]])
        elif k == "launch" and untaped and derived & set(ev.get("reads") or []):
            if set(ev.get("reads") or []) <= derived:  # a function of gradients alone (a sum, a copy)
                derive(ev, set(ev.get("reads") or []), set(ev.get("writes") or []) - {owner})
            elif reader is None:  # mixes a gradient with optimiser state (momentum, moments): it consumes it
                hit = [a for a in ev.get("reads") or [] if a in derived]
                reader = (ev, next((a for a in hit if a in own), hit[0]))
    return update, numpied, reader


def _consuming_event(update, reader, numpied, derived, own):
    """``(event, offset, gradient array)`` where the gradient is consumed (all None when nowhere seen)."""
    at, offset, array = None, 0, None
    if update is not None and update["kind"] == "launch":
        hit = [a for a in update.get("reads") or [] if a in derived]
        if hit:
            at, array = update, next((a for a in hit if a not in own), hit[0])
    elif update is not None and update["kind"] == "host" and update.get("src") in derived:
        at, array = update, update["src"]
    if at is None and reader is not None:
        at, array = reader
    if at is None and numpied is not None:
        at, offset, array = numpied, 1, numpied.get("grad")
    return at, offset, array


def _changed_before(events, w1, at, array, owner, own, made):
    """The events between ``w1`` and the consumption ``at`` that wrote the consumed values or zeroed ``owner``'s
    adjoint (``[{"seq", "kind", "op"}]``)."""
    # the arrays whose values reach the consumed one, each until it was read into the next: the consumed
    # array up to the consumption, and back through the copies and launches that filled it
    window = {}
    todo = [(array, at["seq"])]
    while todo:
        a, until = todo.pop()
        if window.get(a, -1) >= until:
            continue
        window[a] = until
        if a in made:
            seq, srcs = made[a]
            todo.extend((b, seq) for b in srcs)
    filled = {seq for seq, _ in made.values()}
    changed = []
    for ev in events[w1 + 1: at["seq"]]:
        k = ev["kind"]
        if ev["seq"] in filled:
            continue
        hit = (k == "host" and ev.get("dest") in window and ev["seq"] < window[ev["dest"]]) or (
            k == "launch" and any(a in window and ev["seq"] < window[a] for a in ev.get("writes") or []))
        if not hit and k in ("tape_zero", "tape_reset", "grad_assign") and any(g in window and ev["seq"] < window[g]
                                                                               for g in own):
            hit = owner in (ev.get("arrays") or []) if k != "grad_assign" else ev.get("array") == owner
        if hit:
            changed.append({"seq": ev["seq"], "kind": k, "op": ev.get("op") or (ev.get("kernel") if k == "launch"
                                                                                  else None)})
    return changed


def pending_recordings(events, start: int, before: int, exclude=()) -> dict:
    """``{tape label: seq of its first pending launch}`` for the tapes that hold launches recorded since
    ``start`` that no later backward of that tape has run over and no ``reset()`` has dropped, counting only
    tapes whose first such launch precedes ``before`` (the backward whose gradient an update consumed).

    An update made while such a recording is open happens *inside* the forward pass whose loss that tape
    will differentiate: the iterate of an inner solve (joint angles, a settled displacement) that a small
    tape of its own computes at each step of the outer rollout, between the outer tape's recordings. It
    ends no optimisation iteration. ``exclude``: tape labels left out (the backward's own tape).
    """
    first = {}
    for ev in events[start:]:
        k = ev["kind"]
        T = ev.get("tape")
        if k == "launch" and T is not None and T not in exclude:
            first.setdefault(T, ev["seq"])
        elif k in ("backward", "tape_reset") and T in first:
            del first[T]
    return {T: s for T, s in first.items() if s < before}


def nested_sites(marks, resets) -> set:
    """Allocation sites whose updates belong to an inner solve nested in the optimisation iteration.

    A site S is nested when an array allocated there was updated before an update of another site H (at a
    backward where S was not updated too), and an array at S was started afresh (``resets[S]``: a
    ``requires_grad`` allocation there, a ``zero_``/``fill_``) after that update of H and before the next
    backward: the script runs a small solve for S (a settled displacement, joint angles) from a fresh start in
    every iteration of H, and S's updates are steps of that solve, not ends of the outer iteration. Two params
    updated together (both re-allocated by one update) are not nested in each other.

    Parameters
    ----------
    marks : list of dict
        The discovery run's backward marks in order: ``{"seq", "updated_sites"}`` (``updated_sites``: the
        ``(file, line)`` of the arrays updated since the previous backward).
    resets : dict
        ``{(file, line): [seq, ...]}``.

    Returns
    -------
    set of tuple
    """
    out = set()
    seen = set()
    for j, m in enumerate(marks):
        here = set(m.get("updated_sites") or ())
        if j and here:
            lo, hi = marks[j - 1]["seq"], m["seq"]
            for S in seen - here:
                if any(lo < q <= hi for q in resets.get(S, ())):
                    out.add(S)
        seen |= here
    return out


def restarted_alone(marks, resets) -> bool:
    """Whether every allocation site updated so far was started afresh after its first update and no site was
    updated without that: the updates seen are all steps of solves the script restarts (an inner settle, an
    adjoint solve), and the outer update that would make them nested (:func:`nested_sites`) is still to come.

    Parameters
    ----------
    marks : list of dict
        The discovery run's backward marks in order (``{"seq", "updated_sites"}``).
    resets : dict
        ``{(file, line): [seq, ...]}``, as for :func:`nested_sites`.

    Returns
    -------
    bool
        False when no site was updated.
    """
    first = {}
    for m in marks:
        for S in m.get("updated_sites") or ():
            first.setdefault(S, m["seq"])
    return bool(first) and all(any(q > at for q in resets.get(S, ())) for S, at in first.items())
