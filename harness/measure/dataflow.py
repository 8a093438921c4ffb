"""Dataflow over a runtime trace document's events: who writes what, which launches lie on the
param -> seeded-array path, and small keys the detectors and the capture sort and compare with.

Pure functions of the document (:mod:`defects4warp.measure.trace` documents its fields):
standard library only, like :mod:`defects4warp.measure.detectors`, which reads them.
"""

from __future__ import annotations


def _last_write(events, targets, before):
    """Seq of the last launch or host op before ``before`` that writes one of ``targets`` (None if none)."""
    last = None
    for ev in events[:before]:
        if ev["kind"] == "launch" and set(ev["writes"]) & targets:
            last = ev["seq"]
        elif ev["kind"] == "host" and ev.get("dest") in targets:
            last = ev["seq"]
    return last


def _edges(events, before):
    """Dataflow edges (event, reads, writes) of launches and host ops before ``before``."""
    out = []
    for ev in events[:before]:
        if ev["kind"] == "launch":
            out.append((ev, set(ev["reads"]), set(ev["writes"])))
        elif ev["kind"] == "host" and ev.get("dest") is not None:
            reads = {ev["src"]} if ev.get("src") else set()
            out.append((ev, reads, {ev["dest"]}))
    return out


def _path(trace, b):
    """On-path events and arrays for backward event ``b`` (events from the document's ``start`` on)."""
    params = set(trace["params"].values())
    sinks = {s["target"] for s in b["seeds"] if s["target"]}
    start = int(trace.get("start") or 0)
    edges = [x for x in _edges(trace["events"], b["seq"]) if x[0]["seq"] >= start]
    tainted, t_before = set(params), {}
    for ev, r, w in edges:
        t_before[ev["seq"]] = r & tainted
        if r & tainted:
            tainted |= w
    needed, n_after = set(sinks), {}
    for ev, r, w in reversed(edges):
        hit = (w & needed) - params
        n_after[ev["seq"]] = hit
        if hit:
            needed |= r
    on, arrays = [], set()
    for ev, r, w in edges:
        tb, na = t_before[ev["seq"]], n_after[ev["seq"]]
        if tb and na:
            on.append(ev)
            arrays |= tb | na
    return on, arrays


def _value_tainted(trace, b):
    """Arrays whose *values* depend on a param before backward event ``b``: the forward taint of
    :func:`_path`, but through a launch that carries its value flows (``ev["flows"]``, from
    :func:`defects4warp.kernel_access._value_flows`) only into the arrays whose stored values
    read a tainted array, not into every array the launch writes (an index drawn from a counter,
    a copied constant). Launches without flows taint every array they write, as in :func:`_path`."""
    tainted = set(trace["params"].values())
    start = int(trace.get("start") or 0)
    for ev, r, w in _edges(trace["events"], b["seq"]):
        if ev["seq"] < start or not (r & tainted):
            continue
        flows = ev.get("flows") if ev["kind"] == "launch" else None
        if flows is None:
            tainted |= w
        else:
            tainted |= {x for x in w if x not in flows or set(flows[x]) & tainted}
    return tainted


def _launch_signature(ev):
    """Kernel, dim, argument identities/values and the digests of what the launch read."""
    args = tuple((e["arg"], e.get("field"), e.get("array"), repr(e.get("value"))) for e in ev["args"])
    reads = tuple((e["array"], (e.get("pre") or {}).get("digest")) for e in ev["args"] if "array" in e and e["reads"])
    return (ev["kernel"], tuple(ev["dim"]), args, reads)


def _release(version):
    """``(major, minor)`` of a Warp version string; ``(99, 0)`` when it does not parse."""
    try:
        return tuple(int(x) for x in str(version).split(".")[:2])
    except ValueError:
        return (99, 0)


def _label_key(label):
    """Sort key of an array label ``A<n>``: ``n`` (0 when it does not parse)."""
    try:
        return int(str(label)[1:])
    except ValueError:
        return 0


def _close(a, b, rtol):
    """Whether two numbers, neither None, agree within relative tolerance ``rtol``."""
    return a is not None and b is not None and abs(a - b) <= rtol * max(abs(a), abs(b), 1e-300)
