"""Recording sessions of one ``wp.Tape``: launches a backward replays a second time.

A ``wp.Tape`` keeps every launch recorded on it until ``tape.reset()``. A
program that keeps one tape (``self.tape``) and records it again in a new
``with tape:`` block without ``reset()`` makes the next ``backward()`` replay
the earlier block's launches too: their adjoints are added once more into
the params' ``.grad`` (``double_count``; the gradient grows with every
iteration). This differs from ``missing_tape_zero`` (a fresh or reset tape
whose ``.grad`` arrays are not zeroed between backwards): here the launch
list itself is stale.

The trace calls :func:`on_enter` when a ``with tape:`` block opens and
:func:`on_backward` when ``backward()`` starts; they read the live tape's
launch list (``tape.launches``: ``[kernel, dim, max_blocks, inputs, outputs,
device, ...]`` per launch and a callable per recorded function, from Warp
1.0 to 1.19) and store on the backward event ``sessions``:

``launches``
    entries on the tape at the backward.
``new``
    entries added since the last ``with tape:`` block opened (this session).
``carried``
    entries that were already on the tape at an earlier ``backward()`` on it
    in this trace, or before the trace started (an earlier ``gradient()``
    call), and were not removed by ``reset()`` since: the launches this
    backward replays a second time. 0 when the tape was not recorded again.
``carried_shared``
    carried launches that touch an array (other than a param) that the new
    session's launches also touch, or whose ``.grad`` is nonzero when the
    backward starts: replaying them adds a nonzero adjoint again. ``None``
    when the tape's entries hold no arrays to compare.
``sessions``
    ``with tape:`` blocks opened on this tape (since its last reset) in the trace.

:func:`rerecord_findings` reads them: ``tape_rerecorded`` (class
``double_count``) when a backward replays carried launches that matter
(``carried > 0``, ``new > 0`` and ``carried_shared`` not 0). Several blocks
recorded on one tape before a single backward (a legitimate way to build one
graph) carry nothing and never fire.
"""

from __future__ import annotations

import numpy as np

__all__ = ["on_enter", "on_backward", "rerecord_findings", "FINDING_ID"]

#: Trace finding id of a tape recorded again without reset() whose backward replays the earlier launches.
FINDING_ID = "tape_rerecorded"

#: Carried launches whose arrays' .grad are read for nonzero entries, at most (cost bound).
MAX_GRAD_CHECKS = 64


def on_enter(rec: dict, tape) -> None:
    """Remember the tape's launch count when a ``with tape:`` block opens.

    Parameters
    ----------
    rec : dict
        The trace's record of this tape (``epoch``: resets seen in the trace).
    tape : warp.Tape
    """
    try:
        rec.setdefault("_sessions", []).append((rec.get("epoch", 0), len(tape.launches)))
    except Exception:  # noqa: BLE001 - a tape without a launch list is simply not measured
        pass


def _arrays(entry) -> list:
    if callable(entry) or not isinstance(entry, (list, tuple)) or len(entry) < 5:
        return []
    out = []
    for group in (entry[3], entry[4]):
        for a in group or []:
            if hasattr(a, "ptr") and hasattr(a, "dtype") and hasattr(a, "shape"):
                out.append(a)
    return out


def on_backward(st, rec: dict, tape, ev: dict) -> None:
    """Store ``ev["sessions"]`` (module docstring) for a ``backward()`` starting on ``tape``.

    Parameters
    ----------
    st : defects4warp.measure.trace_state._Recorder
        The recorder (its ``busy`` counter silences the trace while this reads ``.grad``;
        ``params``/``by_label`` name the params).
    rec : dict
        The trace's record of this tape.
    tape : warp.Tape
    ev : dict
        The backward event; gets ``sessions`` (None when the tape was not recorded in the trace
        since its last reset, or its launch list cannot be read).
    """
    st.busy += 1
    try:
        ev["sessions"] = _measure(st, rec, tape)
    except Exception as exc:  # noqa: BLE001 - tracing never breaks the user's backward
        ev["sessions"] = None
        st.note("tape_sessions", exc)
    finally:
        st.busy -= 1


def _measure(st, rec, tape):
    launches = list(tape.launches)
    n = len(launches)
    epoch = rec.get("epoch", 0)
    starts = [c for e, c in rec.get("_sessions", []) if e == epoch]
    backs = [c for e, c in rec.get("_backs", []) if e == epoch]
    rec.setdefault("_backs", []).append((epoch, n))
    if not starts:
        return None
    current = min(starts[-1], n)
    new = n - current
    consumed = max([starts[0]] + [b for b in backs if b <= current])
    carried = min(consumed, current) if new > 0 else 0
    shared = None
    if carried:
        params = {id(st.by_label.get(lab)) for lab in st.params.values()}
        new_ids = {id(a) for e in launches[current:] for a in _arrays(e)} - params
        have_arrays, shared, checks = False, 0, 0
        for e in launches[:carried]:
            arrs = [a for a in _arrays(e) if id(a) not in params]
            have_arrays = have_arrays or bool(_arrays(e))
            hit = any(id(a) in new_ids for a in arrs)
            if not hit:
                for a in arrs:
                    if checks >= MAX_GRAD_CHECKS:
                        break
                    g = getattr(a, "grad", None)
                    if g is None:
                        continue
                    checks += 1
                    try:
                        if np.any(np.asarray(g.numpy()) != 0):
                            hit = True
                            break
                    except Exception:  # noqa: BLE001
                        continue
            shared += bool(hit)
        if not have_arrays:
            shared = None
    return {"launches": n, "new": new, "carried": carried, "carried_shared": shared, "sessions": len(starts),
            "recorded_before_trace": starts[0], "earlier_backwards": len(backs)}


def rerecord_findings(trace: dict) -> list:
    """``tape_rerecorded`` findings of a trace document (one per tape).

    Parameters
    ----------
    trace : dict
        A trace document whose backward events carry ``sessions`` (:func:`on_backward`).

    Returns
    -------
    list of dict
        ``{"id": "tape_rerecorded", "detail", "data"}``.
    """
    out, seen = [], set()
    start = int(trace.get("start") or 0)
    for ev in trace.get("events") or []:
        if ev.get("kind") != "backward" or ev.get("seq", 0) < start:
            continue  # before ``start``: an earlier iteration the program replayed to reach the measured one
        s = ev.get("sessions")
        if not isinstance(s, dict) or not s.get("carried") or not s.get("new") or s.get("carried_shared") == 0:
            continue
        if ev.get("tape") in seen:
            continue
        seen.add(ev.get("tape"))
        where = ("before this gradient() call" if s.get("recorded_before_trace") and not s.get("earlier_backwards")
                 else "before an earlier backward() on it")
        out.append({"id": FINDING_ID, "detail": f"tape {ev.get('tape')} is recorded again (a new `with tape:` block) without reset(): "
                              f"its backward (event {ev['seq']}) replays {s['launches']} launches, {s['carried']} of "
                              f"them recorded {where}"
                              + (f" ({s['carried_shared']} touching arrays of the new recording or holding a nonzero "
                                 f"adjoint)" if s.get("carried_shared") else "")
                              + ", so their adjoints are added again",
                    "data": {"tape": ev.get("tape"), "backward": ev["seq"], **{k: s.get(k) for k in (
                        "launches", "new", "carried", "carried_shared", "sessions", "recorded_before_trace",
                        "earlier_backwards")}}})
    return out
