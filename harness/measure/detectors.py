"""Detectors: the direct evidence in a runtime trace document, one registered function per mechanism.

A trace document (:func:`defects4warp.measure.recorder.trace_call`; its fields
are documented in :mod:`defects4warp.measure.trace`) is read by the detectors
registered here with :func:`detector`, as the source rules are registered with
:func:`defects4warp.rules.registry.rule`. Each detector declares the finding ids
it emits (its evidence ids: the engine cites finding ``x`` as ``trace:x``, and
the evidence table, ``harness/engines/evidence_table.yaml``, maps that id to
class weights) and its scope: ``backward`` detectors run once per
``backward()`` event of the call, in call order, with that backward's view of
the dataflow path; ``call`` detectors run once per trace, after them.
:func:`trace_findings` runs them all in registration order and returns the
findings sorted by id then detail.

A finding is ``{"id", "detail", "data"}``: a measured fact and its id. It
names no class: the classes of ``trace:<id>`` are the evidence table's rows
(:func:`defects4warp.engines.evidence.finding_classes` reads them, in the parent
process; the measurement worker that runs the detectors has no YAML reader and
needs none).

Pure functions of the document: standard library only (no Warp, no NumPy),
so that findings can be recomputed from a stored trace anywhere. The dataflow
they share (writers, the param -> seeded-array path) is in
:mod:`defects4warp.measure.dataflow`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Callable

from .dataflow import _close, _label_key, _last_write, _launch_signature, _path, _release, _value_tainted

__all__ = ["trace_findings", "detector", "Detector", "DETECTORS", "FINDING_IDS"]


#: name -> :class:`Detector`, in registration order (the order detectors run in).
DETECTORS: dict = {}
#: Every finding id a registered detector declares, in registration order.
FINDING_IDS: list = []


@dataclass(frozen=True)
class Detector:
    """One registered trace detector.

    Attributes
    ----------
    name : str
        Detector id.
    evidence : tuple[str, ...]
        Finding ids it may emit (cited by the engine as ``trace:<id>``).
    scope : str
        ``"backward"``: ``fn(scan, b, view)`` once per backward event ``b``
        (``view``: ``on``, ``path_arrays``, ``T``, ``E``, ``on_rec``,
        ``loss_seq`` of that backward); ``"call"``: ``fn(scan)`` once.
    summary : str
        One line: what it detects.
    fn : callable
        Adds findings through ``scan.add`` / ``scan.group``; returns nothing.
    """

    name: str
    evidence: tuple
    scope: str
    summary: str
    fn: Callable


def detector(name: str, *, evidence, scope: str = "backward", summary: str = ""):
    """Decorator registering a trace detector.

    Parameters
    ----------
    name : str
        Unique detector id.
    evidence : sequence of str
        Finding ids it emits (non-empty; no other detector may declare one of them;
        each needs a row ``trace:<id>`` in the evidence table, which
        ``tests/test_engine_v4.py`` checks).
    scope : {"backward", "call"}, default "backward"
        When it runs (see :class:`Detector`).
    summary : str, default ""
        One line (defaults to the function's first docstring line).

    Raises
    ------
    ValueError
        When ``name`` is registered twice, ``evidence`` is empty or names a
        finding id another detector declares, or ``scope`` is not one of the two.
    """
    evidence = tuple(evidence)
    if not evidence:
        raise ValueError(f"detector {name!r} declares no evidence")
    taken = [e for e in evidence if e in FINDING_IDS]
    if taken:
        raise ValueError(f"detector {name!r}: finding id(s) {taken} declared by another detector")
    if scope not in ("backward", "call"):
        raise ValueError(f"detector {name!r}: scope must be backward or call, not {scope!r}")

    def deco(fn):
        if name in DETECTORS:
            raise ValueError(f"detector {name!r} registered twice")
        doc = (fn.__doc__ or "").strip().splitlines()
        DETECTORS[name] = Detector(name, evidence, scope, summary or (doc[0] if doc else ""), fn)
        FINDING_IDS.extend(evidence)
        return fn

    return deco


def evidence_ids() -> list:
    """Every finding id a registered detector may emit, in registration order."""
    return [e for d in DETECTORS.values() for e in d.evidence]


def _finding(fid, detail, **data):
    if fid not in FINDING_IDS:
        raise ValueError(f"finding id {fid!r} is declared by no registered detector")
    return {"id": fid, "detail": detail, "data": data}


class _Scan:
    """What every detector reads of one trace document, and the findings so far
    (``found``: {(id, key): finding}, first one wins; ``groups_war``: grouped
    instances of the write-after-read family, completed by :func:`trace_findings`)."""

    def __init__(self, trace, objective, rtol):
        self.trace, self.objective, self.rtol = trace, objective, rtol
        events = trace["events"]
        self.events = events
        self.arrays = trace["arrays"]
        self.kernels = trace["kernels"]
        params = trace["params"]
        self.params = params
        self.plabel = {v: k for k, v in params.items()}
        self.found = {}
        self._names = {}
        self.groups_war = {}
        # backwards of the measured call only: before ``start`` the program replayed earlier
        # iterations to reach it (a script captured at a later iteration, recorder.mark_start)
        start = int(trace.get("start") or 0)
        self.start = start
        self.backwards = [e for e in events if e["kind"] == "backward" and e["seq"] >= start]
        self.paths = {b["seq"]: _path(trace, b) for b in self.backwards}
        self.release = _release(trace.get("warp"))

    def add(self, f, key):
        """Keep finding ``f`` under ``(id, key)`` unless one is already there."""
        self.found.setdefault((f["id"], key), f)

    def kname(self, ev):
        """The kernel's Python name of launch ``ev``."""
        return self.kernels.get(ev["kernel"], {}).get("name", ev["kernel"])

    def where(self, ev):
        """``file.py:LINE`` where the kernel of launch ``ev`` is defined (``?`` when unknown)."""
        info = self.kernels.get(ev["kernel"], {})
        if info.get("file") and info.get("lines"):
            return f"{os.path.basename(info['file'])}:{info['lines'][0]}"
        return "?"

    def launched_at(self, ev):
        """``file.py:LINE`` of the program's ``wp.launch`` call of ``ev`` (None when unknown)."""
        site = ev.get("site")
        return f"{os.path.basename(site[0])}:{site[1]}" if site else None

    def writer_name(self, ev):
        """A launch or host write named with its event number."""
        if ev["kind"] == "launch":
            return f"launch of {self.kname(ev)} (event {ev['seq']})"
        return f"{ev['op']} (event {ev['seq']})"

    def writer_label(self, ev):
        """A launch or host write named without its event number."""
        return f"launch of {self.kname(ev)}" if ev["kind"] == "launch" else f"{ev['op']}()"

    def array_name(self, A):
        """How the program knows array ``A``, for text a user reads (the label stays in ``data``): the
        param's name; else the launch argument that first wrote it (``kernel.arg``), else the one that
        first read it; ``.grad of X`` for a gradient buffer; else its dtype and shape."""
        if A in self._names:
            return self._names[A]
        info = self.arrays.get(A) or {}
        name = None
        if A in self.plabel:
            name = f"param {self.plabel[A]}"
        elif info.get("grad_of") and info["grad_of"] != A:
            name = f".grad of {self.array_name(info['grad_of'])}"
        else:
            for role in ("writes", "reads"):
                for ev in self.events:
                    if ev["kind"] == "launch":
                        e = next((e for e in ev["args"] if e.get("array") == A and e[role]), None)
                        if e is not None:
                            name = f"{self.kname(ev)}.{e['field'] or e['arg']}"
                            break
                if name:
                    break
        if name is None:
            name = f"a {info.get('dtype', '?')} array of shape {tuple(info.get('shape') or ())}"
        self._names[A] = name
        return name

    def producer_name(self, on, A):
        """Array ``A`` named by the on-path launch argument that writes it, else by :meth:`array_name`."""
        for ev in on:
            if ev["kind"] == "launch":
                for e in ev["args"]:
                    if e.get("array") == A and e["writes"]:
                        return f"array {self.kname(ev)}.{e['field'] or e['arg']}"
        return f"array {self.array_name(A)}"

    def consumed_grad(self, a, after):
        """Whether the .grad of array a is read (property, .numpy(), copied) after event ``after``."""
        for ev in self.events[after + 1:]:
            if ev["kind"] in ("grad_read", "grad_numpy") and ev["array"] == a:
                return True
            if ev["kind"] == "host" and ev.get("src") and self.arrays.get(ev["src"], {}).get("grad_of") == a:
                return True
        return False

    def group(self, fid, key, how, A, reader, writer, **data):
        """Aggregate one instance (array A read at event reader, written at event writer)."""
        g = self.groups_war.get((fid, key))
        if g is None:
            g = self.groups_war[(fid, key)] = _finding(fid, how, arrays=[], readers=[], writers=[], count=0, **data)
        d = g["data"]
        d["count"] += 1
        for k, v in (("arrays", A), ("readers", reader), ("writers", writer)):
            if v is not None and v not in d[k] and len(d[k]) < 20:
                d[k].append(v)

    def zeroed(self, p, lo, hi):
        """Whether param label p had its grad zeroed by an event in (lo, hi)."""
        for ev in self.events[lo + 1 : hi]:
            if ev["kind"] in ("tape_zero", "tape_reset") and p in ev["arrays"]:
                return True
            if ev["kind"] == "host" and ev.get("dest") and self.arrays.get(ev["dest"], {}).get("grad_of") == p:
                if ev["op"] in ("zero_", "fill_", "assign"):
                    return True
        return False


# -- detectors --------------------------------------------------------------


@detector("write_after_read", scope="backward",
          evidence=("write_after_read", "write_after_loss", "struct_write_after_read",
                    "inplace_read_write", "offtape_write_after_read", "rng_state_overwrite"))
def _write_after_read(scan, b, view):
    """An array a recorded launch read is changed before backward (a later write, the launch itself, off the tape)."""
    trace, events, arrays, kernels, kname = scan.trace, scan.events, scan.arrays, scan.kernels, scan.kname
    where, writer_label, groups_war = scan.where, scan.writer_label, scan.groups_war
    group, release = scan.group, scan.release
    T, E, on_rec, loss_seq = view["T"], view["E"], view["on_rec"], view["loss_seq"]
    for L in on_rec:
        for entry in L["args"]:
            if "array" not in entry or not entry["reads"]:
                continue
            A = entry["array"]
            if any(s["target"] == A for s in b["seeds"]):
                continue
            needs = L.get("needs")
            if needs is not None and (entry["field"] or entry["arg"]) not in needs and release >= (1, 13):
                continue  # the adjoint does not read this value (affine use with constant coefficients)
            pre_then = entry.get("pre")
            pre_now = (b.get("pre") or {}).get(A)
            rc = ((b.get("read_changes") or {}).get(str(L["seq"])) or {}).get(A) or {}
            if rc.get("changed") is not None:
                if rc["changed"] == 0:
                    continue  # every element it read is as it was
            elif trace["digests"]:
                if not pre_then or not pre_now or pre_then["digest"] == pre_now["digest"]:
                    continue
            self_store = any(e2.get("array") == A and e2["writes"] and not e2["accumulates"]
                             for e2 in L["args"])
            if rc.get("self_overlap") is not None:
                self_store = self_store and rc["self_overlap"]
            if (self_store and rc.get("changed_set_before") == 0
                    and (entry["field"] or entry["arg"]) not in kernels.get(L["kernel"], {}).get("rmw", [])):
                # it stored into elements that held zeros before it ran (a buffer it fills, e.g. a
                # prefix product re-reading its own stores): not a read of old contents
                self_store = False
            writers = []
            if self_store:
                writers.append(L)
            for W in events[L["seq"] + 1 : b["seq"]]:
                if W["kind"] == "launch" and A in W["writes"]:
                    writers.append(W)
                elif W["kind"] == "host" and W.get("dest") == A:
                    writers.append(W)
            if not writers:
                continue
            W = writers[0]
            name = entry["field"] or entry["arg"]
            if W is L:
                fid = "struct_write_after_read" if entry["field"] else "inplace_read_write"
                how = (f"kernel {kname(L)} ({where(L)}) reads and stores {name} in one launch; the contents "
                       f"at backward differ from those it read")
            elif (W.get("tape") == T and W.get("epoch") == E) or W.get("active_tape") == T:
                # recorded on T, or a host write / record_tape=False launch inside T's recording
                # (e.g. zero_() of a force buffer at each substep): part of the forward pass
                if entry["field"] or (W["kind"] == "launch" and any(
                        e2.get("array") == A and e2.get("field") for e2 in W["args"])):
                    fid = "struct_write_after_read"
                elif loss_seq is not None and W["seq"] > loss_seq:
                    fid = "write_after_loss"
                else:
                    fid = "write_after_read"
                rec_word = "recorded" if W.get("tape") == T else f"unrecorded (inside the recording of {T})"
                how = (f"{name} read by {kname(L)} ({where(L)}) on tape {T} is written by a later {rec_word} "
                       f"{writer_label(W)}" + (" after the loss was produced" if fid == "write_after_loss" else "")
                       + " before backward")
            else:
                fid = "offtape_write_after_read"
                how = (f"{name} read by {kname(L)} ({where(L)}) on tape {T} is changed by an unrecorded "
                       f"{writer_label(W)} before backward")
            if not arrays.get(A, {}).get("float", True) and kernels.get(L["kernel"], {}).get("rng"):
                fid = "rng_state_overwrite"
                how = (f"random-number state {name} ({arrays[A].get('dtype')}) read by {kname(L)} ({where(L)}) "
                       f"on tape {T} is overwritten before backward (by {writer_label(W)}), so the replay "
                       f"draws other random numbers")
            group(fid, (kname(L), name, writer_label(W)), how, A, L["seq"], W["seq"],
                  field=entry["field"], tape=T, kernel=kname(L), writer_kind=W["kind"],
                  inplace=W is L, loss_event=loss_seq, writer_recorded=W.get("tape") == T)
            g = groups_war[(fid, (kname(L), name, writer_label(W)))]["data"]
            if rc.get("changed") is not None:
                g["changed_elements"] = g.get("changed_elements", 0) + rc["changed"]


@detector("struct_field_rebound", scope="backward", evidence=("struct_field_rebound",))
def _struct_field_rebound(scan, b, view):
    """A recorded launch's struct field points at another array at backward."""
    events, kname, where, group = scan.events, scan.kname, scan.where, scan.group
    path_arrays, T, on_rec = view["path_arrays"], view["T"], view["on_rec"]
    on_seqs = {e["seq"] for e in on_rec}
    for r in b.get("rebound") or []:
        L = events[r["launch"]]
        if r["launch"] not in on_seqs and not (set(L["reads"]) & path_arrays):
            continue
        group("struct_field_rebound", (kname(L), r["field"]),
              f"struct field {r['field']} passed to {kname(L)} ({where(L)}) on tape {T} was rebound on the host "
              f"to another array after the launch was recorded, so backward replays it with the new array",
              r["then"], r["launch"], None, field=r["field"], tape=T, kernel=kname(L), now=r["now"])


@detector("missing_requires_grad", scope="backward", evidence=("missing_requires_grad",))
def _missing_requires_grad(scan, b, view):
    """A float array on the param->loss path without requires_grad at backward."""
    arrays, producer_name, group = scan.arrays, scan.producer_name, scan.group
    on, path_arrays, on_rec = view["on"], view["path_arrays"], view["on_rec"]
    # requires_grad on the path, for arrays the tape's own launches touch (upstream of the tape
    # is the business of forward_outside_tape / window_handoff)
    on_tape_arrays = {a for e in on_rec for a in e["reads"] + e["writes"]}
    # an array whose stored values never depend on a param carries no gradient of the params,
    # with or without requires_grad (hit_ref[k] = ref_time[i] next to hit_time[k] = f(t0))
    valued = _value_tainted(scan.trace, b)
    for A in sorted(path_arrays & on_tape_arrays & valued, key=_label_key):
        rec = arrays.get(A, {})
        if rec.get("float") and not b["requires_grad"].get(A, rec.get("requires_grad")):
            who = producer_name(on, A)
            group("missing_requires_grad", (who,),
                  f"{who} lies on the dataflow path from the params to the seeded array but has "
                  f"requires_grad=False at backward", A, None, None)


@detector("tape_scope", scope="backward", evidence=("forward_outside_tape", "backward_disabled", "window_handoff"))
def _tape_scope(scan, b, view):
    """On-path launches recorded on no tape, on a tape whose backward never follows, or built without backward."""
    trace, events, kernels = scan.trace, scan.events, scan.kernels
    plabel, found, add = scan.plabel, scan.found, scan.add
    kname, where, consumed_grad, backwards = scan.kname, scan.where, scan.consumed_grad, scan.backwards
    on, path_arrays, T, E, on_rec = view["on"], view["path_arrays"], view["T"], view["E"], view["on_rec"]
    # launches on the path outside the tape / on other tapes. The tape's entry arrays are the
    # path arrays its launches read but no launch of it wrote; when the user consumes their .grad
    # after this backward (carry = wp.clone(start.grad), grads={end: carry}), the adjoint is
    # carried by hand (checkpointed windows) and the part before the tape is not lost.
    written_on_T = {a for e in on_rec for a in e["writes"]}
    entries = {a for e in on_rec for a in e["reads"] if a in path_arrays and a not in written_on_T
               and a not in plabel}
    carried = bool(entries) and all(consumed_grad(a, b["seq"]) for a in entries)
    several_tapes = len({(x["tape"], x["epoch"]) for x in backwards}) > 1
    other = {}
    for ev in on:
        if ev["kind"] != "launch":
            continue
        if ev["tape"] is None and carried:
            continue
        if ev["tape"] is None and several_tapes:
            # windows on their own tapes, the state between them recomputed or handed over off-tape
            other.setdefault((None, None), []).append(ev["seq"])
        elif ev["tape"] is None:
            key = ("forward_outside_tape", kname(ev))
            if key not in found:
                at = scan.launched_at(ev)
                add(_finding("forward_outside_tape",
                             (f"launch of {kname(ev)} at {at} (kernel defined at {where(ev)}, event {ev['seq']})"
                              if at else f"launch of {kname(ev)} ({where(ev)}, event {ev['seq']})")
                             + f" lies on the param->loss path but was recorded on no tape (record_tape="
                             f"{ev['record_tape']}, active tape {ev['active_tape']}); backward on {T} (event "
                             f"{b['seq']}) does not reach it",
                             launches=[], kernel=kname(ev), record_tape=ev["record_tape"],
                             active_tape=ev["active_tape"], backward=b["seq"], launch_site=at), kname(ev))
            ls = found[key]["data"]["launches"]
            if ev["seq"] not in ls and len(ls) < 20:
                ls.append(ev["seq"])
        elif (ev["tape"], ev["epoch"]) != (T, E):
            other.setdefault((ev["tape"], ev["epoch"]), []).append(ev["seq"])
        kinfo = kernels.get(ev["kernel"], {})
        if (ev["tape"] == T and ev["epoch"] == E and kinfo.get("enable_backward", True)
                and kinfo.get("module_option") is False and kinfo.get("calls")
                and _release(trace.get("warp")) < (1, 18)):
            add(_finding("backward_disabled",
                         f"kernel {kname(ev)} ({where(ev)}) enables backward but its module disables it; before "
                         f"Warp 1.18 the kernel option does not reach the functions it calls "
                         f"({', '.join(kinfo['calls'][:3])}), so they have no adjoint on Warp {trace.get('warp')}",
                         kernel=kname(ev), launch=ev["seq"], functions=kinfo["calls"]), ev["kernel"])
        if ev["tape"] == T and ev["epoch"] == E and not kinfo.get("enable_backward", True):
            add(_finding("backward_disabled",
                         f"kernel {kname(ev)} ({where(ev)}) lies on the param->loss path on tape {T} but was "
                         f"built with enable_backward=False",
                         kernel=kname(ev), launch=ev["seq"]), ev["kernel"])
    for (U, EU), seqs in sorted(other.items(), key=lambda kv: str(kv[0])):
        later = [x for x in backwards if x["tape"] == U and x["epoch"] == EU and x["seq"] > b["seq"]]
        if later or carried:
            continue
        handoff = sorted({a for s in seqs for a in events[s]["writes"] if a in path_arrays}, key=_label_key)
        if ("window_handoff", "all") in found:
            d = found[("window_handoff", "all")]["data"]
            d["pairs"].append([T, U])
            continue
        add(_finding("window_handoff",
                     f"the param->loss path of backward on {T} (event {b['seq']}) starts in launches recorded on "
                     + (f"tape {U}" if U is not None else "no tape (the state between the windows)")
                     + (f" (before its reset {EU})" if U == T else "") +
                     f" (events {seqs[:5]}); no later backward carries the adjoint of the state handed "
                     f"over ({', '.join(scan.array_name(a) for a in handoff[:5])}) into them",
                     tape=T, other_tape=U, other_epoch=EU, launches=seqs[:20], handoff=handoff[:20],
                     backward=b["seq"], pairs=[[T, U]]),
            "all")


@detector("duplicate_launch", scope="backward", evidence=("duplicate_launch",))
def _duplicate_launch(scan, b, view):
    """The same launch recorded twice on one tape."""
    kernels, found, add = scan.kernels, scan.found, scan.add
    T, on_rec = view["T"], view["on_rec"]
    groups = {}
    for ev in on_rec:
        groups.setdefault(_launch_signature(ev), []).append(ev["seq"])
    for sig, seqs in groups.items():
        if len(seqs) > 1 and ("duplicate_launch", sig[0]) not in found:
            add(_finding("duplicate_launch",
                         f"launch of {kernels.get(sig[0], {}).get('name', sig[0])} with the same arrays and the same "
                         f"input contents is recorded {len(seqs)} times on tape {T} (events {seqs})",
                         kernel=sig[0], launches=seqs, tape=T), sig[0])


@detector("zero_seed", scope="backward", evidence=("zero_seed",))
def _zero_seed(scan, b, view):
    """Every seed of a backward is zero."""
    add = scan.add
    T = view["T"]
    if b["seeds"] and all(x["constant"] == 0.0 for x in b["seeds"]):
        add(_finding("zero_seed",
                     f"backward (event {b['seq']}) on tape {T} is seeded only with zeros "
                     f"({', '.join(scan.array_name(x['seed'] or x['target']) for x in b['seeds'])}): a seed "
                     f"buffer zeroed "
                     f"earlier (consumed by a backward from Warp 1.13, or by tape.zero()) and not refilled "
                     f"gives a zero gradient",
                     seeds=[x["seed"] for x in b["seeds"]], targets=[x["target"] for x in b["seeds"]],
                     modes=[x["mode"] for x in b["seeds"]], backward=b["seq"]), b["seq"])


@detector("seeds", scope="backward", evidence=("seed_accumulated", "seed_scale"))
def _seeds(scan, b, view):
    """A seed buffer added to, or a constant seed that does not match the objective's reduction."""
    objective, rtol, events, add = scan.objective, scan.rtol, scan.events, scan.add
    for s in b["seeds"]:
        buf = s["seed"]
        acc = None
        if buf is not None:
            for ev in events[: b["seq"]]:
                if ev["kind"] == "launch":
                    for e in ev["args"]:
                        if e.get("array") == buf and e["writes"] and e["accumulates"]:
                            pre = e.get("pre") or {}
                            if pre.get("sum"):
                                acc = (ev["seq"], pre["sum"])
                if acc:
                    break
        factor = None
        red = None
        if s["constant"] and (s["target_size"] or 0) > 1 and objective is not None:
            c, S, M = s["constant"], s["target_sum"], s["target_mean"]
            if not _close(c * S, objective, rtol):
                if _close(M, objective, rtol):
                    red, factor = "mean", c * S / objective
                elif _close(S, objective, rtol):
                    red, factor = "sum", c
        if acc is not None:
            add(_finding("seed_accumulated",
                         f"the seed buffer of {scan.array_name(s['target'])} is added to by launch event {acc[0]} "
                         f"while "
                         f"it already held a sum of {acc[1]:g} (accumulated, not filled)",
                         seed=buf, target=s["target"], launch=acc[0], prior_sum=acc[1],
                         constant=s["constant"], factor=factor), buf)
        elif factor is not None:
            add(_finding("seed_scale",
                         f"backward (event {b['seq']}) seeds {scan.array_name(s['target'])} "
                         f"({s['target_size']} elements) "
                         f"with the constant {s['constant']:g} while the objective equals its {red}; the "
                         f"gradient is {factor:g} times the objective's",
                         target=s["target"], seed=buf, constant=s["constant"], size=s["target_size"],
                         reduction=red, factor=factor, objective=objective), s["target"])


def _integer_ratio(a: float, b: float, *, max_ratio: int = 16, tol: float = 1e-3) -> int:
    """The integer k in 2..``max_ratio`` that ``a / b`` (or ``b / a``) is within relative ``tol`` of,
    with ``a / b`` positive; 0 when there is none (also for zero, non-finite or overflowing ratios)."""
    if a == 0 or b == 0 or not (math.isfinite(a) and math.isfinite(b)):
        return 0
    try:
        r = abs(a / b)
        r = r if r >= 1 else 1.0 / r
    except (OverflowError, ZeroDivisionError):
        return 0
    if not math.isfinite(r) or (a / b) <= 0:
        return 0
    k = round(r)
    return k if 2 <= k <= max_ratio and abs(r - k) <= tol * k else 0


@detector("taped_loss", scope="backward", evidence=("taped_loss_not_objective",))
def _taped_loss(scan, b, view, *, max_ratio: int = 16, ratio_tol: float = 1e-3):
    """The one scalar loss backward seeds with 1 holds another value than objective() at the same point.

    The gradient a backward returns is the gradient of the value it seeds. When a call has a single
    backward seeding a one-element array with 1, that array's value when backward starts is the
    function being differentiated; when it is not the objective the program reports (relative
    difference above the trace's ``rtol``, default 1e-4), the gradient is the exact gradient of
    another function: another random draw, another data batch or another state than the one
    objective() evaluates. Several backwards (windows) or seeds (a sum of losses), a seed other than
    1 (the ``seed_scale`` detector's business) and an unknown objective are not judged.

    A taped value that is k or 1/k times the objective (k = 2..``max_ratio``, default 16, within
    relative ``ratio_tol``, default 1e-3) where k launches on the tape wrote the loss is not judged:
    the loss accumulated k times (a launch recorded twice), the duplicate-launch detector's
    business. Any other ratio is: k = N for a loss that sums N terms where objective() reports their
    mean is the classic seed mismatch.

    A correct program whose objective() adds a host-side term to the taped loss (a regulariser
    whose gradient it adds by hand) also shows this finding. A trace finding never sets the
    verdict (see :mod:`defects4warp.engines.reference`), so there it changes nothing; it can
    mis-rank such a program only when another defect makes its gradient wrong."""
    objective, rtol, add = scan.objective, scan.rtol, scan.add
    if objective is None or len(scan.backwards) != 1 or len(b["seeds"]) != 1:
        return
    s = b["seeds"][0]
    value = s.get("target_sum")
    if s.get("target_size") != 1 or s.get("constant") != 1.0 or value is None or _close(value, objective, rtol):
        return
    k = _integer_ratio(value, objective, max_ratio=max_ratio, tol=ratio_tol)
    if k:
        writers = sum(1 for ev in scan.events[scan.start:b["seq"]]
                      if ev["kind"] == "launch" and any(e.get("array") == s["target"] and e.get("writes")
                                                        for e in ev.get("args", ())))
        if writers == k:
            return  # k launches accumulated into the loss: a duplicate launch, not another function
    add(_finding("taped_loss_not_objective",
                 f"backward (event {b['seq']}) seeds {scan.array_name(s['target'])} (one element) with 1, but it holds "
                 f"{value:.6g} where objective() at the same point is {objective:.6g}: the gradient is the "
                 f"gradient of another value than the reported objective",
                 target=s["target"], taped=value, objective=objective, backward=b["seq"]), s["target"])


@detector("grad_nonzero_at_backward", scope="call", evidence=("grad_nonzero_at_backward",))
def _grad_nonzero_at_backward(scan):
    """A param's or on-path intermediate's .grad nonzero when the first backward starts, never zeroed."""
    events, params, plabel, add = scan.events, scan.params, scan.plabel, scan.add
    backwards, paths, zeroed = scan.backwards, scan.paths, scan.zeroed
    if not scan.backwards:
        return
    b0 = backwards[0]
    rec_on_T = set()
    for ev in events[: b0["seq"]]:
        if ev["kind"] == "launch" and ev["tape"] == b0["tape"] and ev["epoch"] == b0["epoch"]:
            rec_on_T |= set(ev["reads"])
    seeded = {x["target"] for x in b0["seeds"]}
    stale_mid = [a for a in sorted(paths[b0["seq"]][1], key=_label_key)
                 if a not in plabel and a not in seeded and b0["grad_nonzero"].get(a)
                 and not zeroed(a, scan.start - 1, b0["seq"])]
    if stale_mid:
        add(_finding("grad_nonzero_at_backward",
                     f"{len(stale_mid)} intermediate array(s) on the param->loss path "
                     f"({', '.join(scan.array_name(a) for a in stale_mid[:5])}) "
                     f"hold a nonzero .grad when backward (event {b0['seq']}) starts and nothing in the call "
                     f"zeroed them; their old adjoints flow into the params",
                     arrays=stale_mid, backward=b0["seq"]), "intermediates")
    for name, p in params.items():
        if b0["grad_nonzero"].get(p) and p in rec_on_T and not zeroed(p, scan.start - 1, b0["seq"]):
            add(_finding("grad_nonzero_at_backward",
                         f"param {name} has a nonzero .grad when backward (event {b0['seq']}) starts and "
                         f"nothing in the call zeroed it (no .grad.zero_(), tape.zero() or tape.reset())",
                         param=name, array=p, backward=b0["seq"]), p)


@detector("multiple_backward", scope="call", evidence=("multiple_backward",))
def _multiple_backward(scan):
    """Two backwards replay the same launch reading a param whose .grad is not zeroed between."""
    params, add, backwards, paths, zeroed = scan.params, scan.add, scan.backwards, scan.paths, scan.zeroed
    if not scan.backwards:
        return
    def replayed(bw):
        """On-path launches recorded on the backward's own tape: {signature: params they read}."""
        out = {}
        for ev in paths[bw["seq"]][0]:
            if ev["kind"] == "launch" and ev["tape"] == bw["tape"] and ev["epoch"] == bw["epoch"]:
                out.setdefault(_launch_signature(ev), set()).update(ev["reads"])
        return out

    for b1, b2 in zip(backwards, backwards[1:]):
        r1, r2 = replayed(b1), replayed(b2)
        # the same launch (same kernel, arrays and input contents) replayed by both backwards
        twice = set()
        for sig in set(r1) & set(r2):
            twice |= r1[sig]
        for name, p in params.items():
            if p in twice and not zeroed(p, b1["seq"], b2["seq"]):
                add(_finding("multiple_backward",
                             f"backward runs on tape {b1['tape']} (event {b1['seq']}) and again on tape "
                             f"{b2['tape']} (event {b2['seq']}) in one call; both replay the same launch reading "
                             f"param {name}, whose .grad is not zeroed in between",
                             param=name, backwards=[b1["seq"], b2["seq"]], tapes=[b1["tape"], b2["tape"]]),
                    (p, b2["seq"]))


@detector("stale_gradient_read", scope="call", evidence=("stale_gradient_read",))
def _stale_gradient_read(scan):
    """A param's .grad read before this call's backward, or a returned gradient that is not this backward's."""
    trace, events, params, plabel = scan.trace, scan.events, scan.params, scan.plabel
    add, backwards, paths = scan.add, scan.backwards, scan.paths
    if backwards:
        b0 = backwards[0]
        rec0 = {a for ev in paths[b0["seq"]][0] if ev["kind"] == "launch" and ev["tape"] == b0["tape"]
                for a in ev["reads"]}
        for ev in events[scan.start: b0["seq"]]:
            if ev["kind"] == "grad_numpy" and ev["array"] in plabel and ev["array"] in rec0:
                name = plabel[ev["array"]]
                add(_finding("stale_gradient_read",
                             f"the .grad of param {name} is read (.numpy(), event {ev['seq']}) before this call's "
                             f"backward (event {b0['seq']}) writes it: what is read is a previous iteration's gradient",
                             param=name, read=ev["seq"], backward=b0["seq"]), name)

    # returned grads
    grads = (trace.get("result") or {}).get("grads") or {}
    reads_before = [e["seq"] for e in events[scan.start:] if e["kind"] == "grad_read" and e["before_backward"]
                    and e["array"] in plabel]
    for name, r in grads.items():
        if backwards:
            # only a return that is demonstrably old counts: zeros where the backward wrote a gradient,
            # or the .grad as it was before this call's backward. Any other difference (a gradient
            # routed through another framework, a user-side transform) is not evidence.
            stale = (r["returned_zero"] and r["backward_nonzero"]) or r.get("matches_pre_backward")
            if not stale or r["matches_backward"] is not None:
                continue
            add(_finding("stale_gradient_read",
                         f"the gradient returned for {name} is not what this call's backward wrote into its .grad "
                         f"(returned sum {r['sum']:g}" + (", all zeros" if r["returned_zero"] else "") + ")",
                         param=name, returned_zero=r["returned_zero"], grad_reads_before_backward=reads_before), name)
        elif any(e["kind"] == "grad_read" and e["array"] == params.get(name) for e in events[scan.start:]):
            add(_finding("stale_gradient_read",
                         f"the gradient returned for {name} was read from .grad but no backward ran in this call",
                         param=name, returned_zero=r["returned_zero"], grad_reads_before_backward=reads_before), name)


@detector("returned_grad_overwritten", scope="call", evidence=("returned_grad_overwritten",))
def _returned_grad_overwritten(scan):
    """A returned gradient that is a view of a .grad buffer overwritten after the backward
    (:mod:`defects4warp.measure.aliasing`; the recorder stores the document's ``aliases``)."""
    from .aliasing import alias_findings

    for f in alias_findings(scan.trace):
        scan.add(_finding(f["id"], f["detail"], **f["data"]), f["data"]["param"])


@detector("tape_rerecorded", scope="call", evidence=("tape_rerecorded",))
def _tape_rerecorded(scan):
    """A tape recorded again without reset(): its backward replays launches of an earlier recording
    (:mod:`defects4warp.measure.tape_sessions`; the recorder stores ``sessions`` on backward events)."""
    from .tape_sessions import rerecord_findings

    for f in rerecord_findings(scan.trace):
        scan.add(_finding(f["id"], f["detail"], **f["data"]), f["data"]["tape"])


def trace_findings(trace, *, objective=None, rtol=1e-4):
    """Direct evidence in a trace document, as a list of findings: every
    registered detector (:data:`DETECTORS`) run over it.

    Parameters
    ----------
    trace : dict
        The document returned by :func:`defects4warp.measure.recorder.trace_call`.
    objective : float, optional
        ``problem.objective()`` at the same params; needed for ``seed_scale``
        (a constant seed of c over N > 1 elements is consistent only when the
        objective equals c times the seeded array's sum).
    rtol : float, default 1e-4
        Relative tolerance when matching the objective with a reduction of
        the seeded array (the candidate reductions differ by a factor N >= 2,
        so the tolerance only has to absorb float32 summation order).

    Returns
    -------
    list of dict
        ``{"id", "detail", "data"}`` per finding (ids in
        :mod:`defects4warp.measure.trace`), sorted by id then detail; ``[]``
        when nothing fires. Every finding is a fact measured in this run.
    """
    scan = _Scan(trace, objective, rtol)
    events = scan.events
    per_backward = [d for d in DETECTORS.values() if d.scope == "backward"]
    for b in scan.backwards:
        on, path_arrays = scan.paths[b["seq"]]
        T, E = b["tape"], b["epoch"]
        view = {"on": on, "path_arrays": path_arrays, "T": T, "E": E,
                "on_rec": [e for e in on if e["kind"] == "launch" and e["tape"] == T and e["epoch"] == E],
                "loss_seq": _last_write(events, {s["target"] for s in b["seeds"]}, b["seq"])}
        for d in per_backward:
            d.fn(scan, b, view)
    for d in DETECTORS.values():
        if d.scope == "call":
            d.fn(scan)
    found = scan.found
    for g in scan.groups_war.values():
        d = g["data"]
        seen = {}  # one entry per name: the arrays one kernel argument wrote step after step read as one
        for a in d["arrays"]:
            n = scan.array_name(a)
            seen[n] = seen.get(n, 0) + 1
        arr = (", ".join(n + (f" x{c}" if c > 1 else "") for n, c in list(seen.items())[:3])
               + (f" and {len(seen) - 3} more" if len(seen) > 3 else ""))
        if d["readers"]:
            g["detail"] += f" (arrays {arr}; {d['count']} instance(s), first read at event {d['readers'][0]}"
            g["detail"] += f", first write at event {d['writers'][0]})" if d["writers"] else ")"
        else:
            g["detail"] += f" ({d['count']} array(s): {arr})"
        found[(g["id"], id(g))] = g
    return sorted(found.values(), key=lambda f: (f["id"], f["detail"]))
