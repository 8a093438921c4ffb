"""Returned gradients that alias a Warp buffer overwritten after the backward.

On CPU ``x.grad.numpy()`` is a *view* of the Warp ``.grad`` buffer (no copy),
and ``wp.to_torch(x.grad)`` shares the buffer on every device. A program that
returns such a view and then clears the buffer (``tape.zero()``,
``x.grad.zero_()``, a later ``backward()`` into it) returns whatever the
buffer holds *now*, not what its backward produced: typically all zeros.

This module measures that mechanism from the outside, with no assumption on
how the program is written:

* :func:`returned_aliases` (called by the trace's recorder when it writes the
  trace document, while the arrays are alive): for every value the traced
  call returned, the Warp array whose memory it shares (an overlap of
  ``[ptr, ptr + nbytes)`` ranges: NumPy's ``__array_interface__``, CUDA's
  ``__cuda_array_interface__`` or a torch tensor's ``data_ptr()`` against the
  Warp array's ``ptr`` and ``capacity``), whether that buffer's contents now
  differ from what the call's last ``backward()`` left in it, and the events
  after that backward which wrote it.
* :func:`alias_findings` turns those entries into trace findings
  (``returned_grad_overwritten``, class ``stale_gradient_read``).

Only a return that shares memory with a ``.grad`` buffer *and* differs from
that buffer's post-backward contents counts: a copy (``.numpy().copy()``,
``np.array(...)``) never aliases, and a view of a buffer nobody touched after
the backward returns the right values.
"""

from __future__ import annotations

import numpy as np

__all__ = ["memory_range", "returned_aliases", "alias_findings", "FINDING_ID"]

#: Trace finding id of a returned view whose .grad buffer was overwritten after the backward.
FINDING_ID = "returned_grad_overwritten"

#: Event kinds that write a .grad buffer after a backward (see the trace's module docstring).
_GRAD_WRITERS = ("tape_zero", "tape_reset", "backward", "host")


def memory_range(v):
    """Address range ``(start, nbytes)`` of the memory behind ``v``, or None.

    Parameters
    ----------
    v : object
        A NumPy array (or anything with ``__array_interface__`` /
        ``__cuda_array_interface__``), a torch tensor (``data_ptr()``), or a
        Warp array (``ptr``; ``capacity`` bytes, else ``size`` times the
        element size).

    Returns
    -------
    tuple of int or None
        ``(start address, length in bytes)``; None when the object exposes no
        address or holds no bytes.
    """
    try:
        if hasattr(v, "ptr") and hasattr(v, "dtype") and hasattr(v, "capacity"):
            ptr, n = v.ptr, v.capacity
            if not n:
                import warp as wp

                n = int(v.size) * int(wp.types.type_size_in_bytes(v.dtype))
            return (int(ptr), int(n)) if ptr else None
        if hasattr(v, "data_ptr") and hasattr(v, "element_size") and callable(v.data_ptr):
            n = int(v.numel()) * int(v.element_size())
            return (int(v.data_ptr()), n) if n else None
        for attr in ("__cuda_array_interface__", "__array_interface__"):
            iface = getattr(v, attr, None)
            if isinstance(iface, dict) and iface.get("data"):
                ptr = int(iface["data"][0])
                shape = iface.get("shape") or ()
                count = int(np.prod(shape)) if shape else 1
                n = count * np.dtype(iface.get("typestr", "|u1")).itemsize
                return (ptr, n) if ptr and n else None
    except Exception:  # noqa: BLE001 - an object we cannot read is not an alias
        return None
    return None


def _overlap(a, b):
    return a is not None and b is not None and a[0] < b[0] + b[1] and b[0] < a[0] + a[1]


def returned_aliases(result, st, *, rtol: float = 1e-6) -> dict:
    """:func:`_returned_aliases`, never raising (the trace is evidence, never a reason to fail):
    ``{"error": message}`` when it cannot be measured."""
    try:
        return _returned_aliases(result, st, rtol=rtol)
    except Exception as exc:  # noqa: BLE001
        return {"error": f"{type(exc).__name__}: {exc}"}


def _returned_aliases(result, st, *, rtol: float = 1e-6) -> dict:
    """Which returned values share memory with a ``.grad`` buffer, and whether it changed since the backward.

    Parameters
    ----------
    result : object
        What the traced call returned; only a dict ``{param name: array-like}``
        is examined.
    st : defects4warp.measure.trace_state._Recorder
        The recorder of the trace (live arrays by label, the post-backward
        ``.grad`` copies, the events).
    rtol : float, default 1e-6
        Relative tolerance (``np.allclose``, atol 0) for "the buffer still
        holds what the backward left"; the trace's ``result_rtol``.

    Returns
    -------
    dict
        ``{name: {"buffer": label, "grad_of": owner label or None, "owner_param":
        param name or None, "bytes_shared": bool, "changed_since_backward": bool
        or None (None: no backward snapshot of it), "backward_sum", "now_sum",
        "writes_after_backward": [event seq]}}`` for each returned value that
        overlaps a Warp array known to the trace; ``{}`` when nothing aliases.
    """
    if not isinstance(result, dict):
        return {}
    known = []
    for rec in list(st.arrays.values()):
        a = rec.get("_obj")
        r = memory_range(a)
        if r is not None:
            known.append((rec, r))
    # .grad buffers of the params never read through the trace still count
    for name, label in st.params.items():
        p = st.by_label.get(label)
        g = st.grad_of(p) if p is not None else None
        if g is not None and id(g) not in st.arrays:
            st.array(g, grad_of=label)
            rec = st.arrays[id(g)]
            r = memory_range(g)
            if r is not None:
                known.append((rec, r))
    out = {}
    backs = [e for e in st.events if e.get("kind") == "backward"]
    last = backs[-1]["seq"] if backs else None
    pname = {v: k for k, v in st.params.items()}
    for name, v in result.items():
        r = memory_range(v)
        if r is None:
            continue
        hits = [rec for rec, rr in known if _overlap(r, rr)]
        if not hits:
            continue
        rec = next((h for h in hits if h["grad_of"] is not None), hits[0])
        owner = rec["grad_of"]
        entry = {"buffer": rec["label"], "grad_of": owner, "owner_param": pname.get(owner),
                 "bytes_shared": True, "changed_since_backward": None, "backward_sum": None, "now_sum": None,
                 "writes_after_backward": []}
        snap = st.post_grads[-1].get(pname.get(owner)) if (st.post_grads and owner in pname) else None
        now = st.contents(rec["_obj"])
        if snap is not None and now is not None and snap.shape == now.shape:
            entry["changed_since_backward"] = bool(not np.allclose(now, snap, rtol=rtol, atol=0.0, equal_nan=True))
            entry["backward_sum"] = float(np.sum(snap))
            entry["now_sum"] = float(np.sum(now))
        if last is not None and owner is not None:
            for ev in st.events[last + 1:]:
                k = ev.get("kind")
                if k in ("tape_zero", "tape_reset") and owner in (ev.get("arrays") or []):
                    entry["writes_after_backward"].append(ev["seq"])
                elif k == "host" and ev.get("dest") in (rec["label"], owner) and ev.get("op") in ("zero_", "fill_",
                                                                                                 "assign", "copy"):
                    entry["writes_after_backward"].append(ev["seq"])
                elif k == "backward":
                    entry["writes_after_backward"].append(ev["seq"])
        out[str(name)] = entry
    return out


def alias_findings(trace: dict) -> list:
    """Trace findings for returned views of a ``.grad`` buffer overwritten after the backward.

    Parameters
    ----------
    trace : dict
        A trace document (:func:`defects4warp.measure.trace.trace_call`) with
        its ``aliases`` entry (:func:`returned_aliases`).

    Returns
    -------
    list of dict
        ``{"id": "returned_grad_overwritten", "detail", "data"}``, one per returned value that shares memory with a
        ``.grad`` buffer whose contents changed after the call's last backward.
    """
    out = []
    events = trace.get("events") or []
    for name, a in sorted((trace.get("aliases") or {}).items()):
        if not isinstance(a, dict) or a.get("grad_of") is None or not a.get("changed_since_backward"):
            continue
        ops = []
        for s in a.get("writes_after_backward") or []:
            ev = events[s] if 0 <= s < len(events) else {}
            ops.append(f"{ev.get('op') or ev.get('kind')} (event {s})")
        how = ", ".join(ops[:4]) if ops else "a write the trace did not see"
        out.append({"id": FINDING_ID, "detail": f"the array returned for {name} shares memory with the .grad buffer of array "
                              f"{a['grad_of']} (a view, not a copy); {how} overwrote that buffer after the backward, "
                              f"so the call returns sum {a['now_sum']:g} where the backward produced sum "
                              f"{a['backward_sum']:g}",
                    "data": {"param": name, "buffer": a["buffer"], "grad_of": a["grad_of"],
                             "writes_after_backward": list(a.get("writes_after_backward") or [])[:20],
                             "backward_sum": a.get("backward_sum"), "now_sum": a.get("now_sum")}})
    return out
