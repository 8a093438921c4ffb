"""Recorder: the runtime trace of one call, by wrapping Warp's public API while it runs.

:func:`trace_call` runs one callable (typically ``problem.gradient``) while
Warp's public names are wrapped, records what happened in order (launches
with the arrays they read and write and content summaries, tapes, seeds of
``backward()``, host writes, ``.grad`` reads, line coverage) and restores
every wrapped name afterwards, also when the callable raises
(:func:`defects4warp.measure.patches.restore_patches`). Which public names are touched, on which
releases, the overhead and the document it returns are described in
:mod:`defects4warp.measure.trace`. Which arrays a kernel reads and writes comes
from :mod:`defects4warp.kernel_access`; the findings read from the document
come from :mod:`defects4warp.measure.detectors`. What the trace has recorded so
far (:class:`~defects4warp.measure.trace_state._Recorder`) lives in
:mod:`defects4warp.measure.trace_state`; this module wraps the API and feeds it.

It runs inside the measurement worker subprocess, next to the user's
``problem.py``, and imports only the standard library, NumPy and Warp.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import time

import numpy as np
import warp as wp

from . import tape_sessions as _tape_sessions
from .patches import Patches, active
from .trace_state import _is_array, _Recorder

__all__ = ["trace_call"]

_LOCK = threading.Lock()  # held while a trace is taken into force or out of it


# ----------------------------------------------------------------------------
# wrappers
# ----------------------------------------------------------------------------


def _bind(names, args, kwargs):
    """The launch arguments by name (``names``: wp.launch's parameter names, in order)."""
    if len(args) > len(names) or "kernel" not in names:
        return None
    out = dict(zip(names, args))
    out.update(kwargs)
    if "kernel" not in out or "dim" not in out:
        return None
    return out


def _wrap_launch(orig, tiled, launch_sig, trace_st):
    def launch(*args, **kwargs):
        st = trace_st if trace_st.tracing else None
        if st is None or st.busy or st.launch_depth:
            return orig(*args, **kwargs)
        if st.backward_depth or st.host_depth:
            if st.backward_depth:
                st.adjoint_launches += 1
            return orig(*args, **kwargs)
        a = _bind(launch_sig, args, kwargs)
        if a is None or a.get("adjoint"):
            return orig(*args, **kwargs)
        try:
            ev = st.begin_launch(a["kernel"], a["dim"], a.get("inputs"), a.get("outputs"),
                                 a.get("record_tape", True), tiled)
        except Exception as exc:  # noqa: BLE001 - tracing never breaks the user's launch
            st.note("launch", exc)
            return orig(*args, **kwargs)
        st.launch_depth += 1
        st.current_launch = ev
        try:
            return orig(*args, **kwargs)
        finally:
            st.launch_depth -= 1
            st.current_launch = None
            try:
                st.end_launch(ev)
            except Exception as exc:  # noqa: BLE001
                st.note("launch", exc)

    launch.__wrapped__ = orig
    return launch


def _host_op(op, orig, trace_st):
    def wrapper(*args, **kwargs):
        st = trace_st if trace_st.tracing else None
        if st is None or st.busy or st.host_depth or st.backward_depth or st.launch_depth:
            return orig(*args, **kwargs)
        try:
            ev, dest = _begin_host(st, op, args, kwargs)
        except Exception as exc:  # noqa: BLE001 - tracing never breaks the user's call
            st.note(op, exc)
            return orig(*args, **kwargs)
        st.host_depth += 1
        prev, st.current_host = st.current_host, ev
        try:
            res = orig(*args, **kwargs)
        finally:
            st.host_depth -= 1
            st.current_host = prev
        try:
            if op == "clone" and _is_array(res):
                ev["dest"] = st.array(res)
                dest = res
            if _is_array(dest):
                ev["post"] = st.summary(dest)
        except Exception as exc:  # noqa: BLE001
            st.note(op, exc)
        return res

    wrapper.__wrapped__ = orig
    return wrapper


def _begin_host(st, op, args, kwargs):
    """Record a host write (before it runs); returns (event, destination array)."""
    dest = src = None
    value = None
    if op in ("zero_", "fill_", "assign"):
        dest = args[0]
        if op == "fill_":
            v = args[1] if len(args) > 1 else kwargs.get("value", 0)
            try:
                value = float(v)
            except (TypeError, ValueError):
                value = None
        if op == "assign":
            s = args[1] if len(args) > 1 else kwargs.get("src")
            src = s if _is_array(s) else None
    elif op == "copy":
        dest = args[0] if args else kwargs.get("dest")
        s = args[1] if len(args) > 1 else kwargs.get("src")
        src = s if _is_array(s) else None
    elif op == "clone":
        s = args[0] if args else kwargs.get("src")
        src = s if _is_array(s) else None
    ev = st.event(
        "host",
        op=op,
        dest=st.array(dest) if _is_array(dest) else None,
        src=st.array(src) if src is not None else None,
        value=value,
        active_tape=st.active[-1] if st.active else None,
        tape=None,
        epoch=None,
        pre=st.summary(dest) if _is_array(dest) else None,
        post=None,
    )
    return ev, dest


def _install(st, patches):
    """Wrap the public API for the trace ``st`` through ``patches`` (a :class:`Patches` of layer
    ``"trace"``); every wrapper closes over ``st`` and records only while ``st.tracing``."""
    patch = patches.patch

    orig_launch = wp.launch
    launch_sig = [p for p in inspect.signature(orig_launch).parameters]
    patch(wp, "launch", _wrap_launch(orig_launch, False, launch_sig, st))
    if hasattr(wp, "launch_tiled"):
        patch(wp, "launch_tiled", _wrap_launch(wp.launch_tiled, True, launch_sig, st))
    patch(wp, "copy", _host_op("copy", wp.copy, st))
    patch(wp, "clone", _host_op("clone", wp.clone, st))
    A = wp.array
    for op in ("zero_", "fill_", "assign"):
        if op in A.__dict__:
            patch(A, op, _host_op(op, A.__dict__[op], st))

    if "numpy" in A.__dict__:
        patch(A, "numpy", _wrap_numpy(A.__dict__["numpy"], st))

    prop = A.__dict__.get("grad")
    if isinstance(prop, property) and prop.fget is not None:
        st._grad_get = prop.fget
        patch(A, "grad", _wrap_grad_property(prop, st))
    else:
        st._grad_get = lambda a: getattr(a, "grad", None)

    _patch_tape(patch, st)


def _wrap_numpy(o_numpy, trace_st):
    """``wp.array.numpy`` that records a read of a ``.grad`` array's contents. The read is a host operation:
    Warp's own calls inside it (a CUDA array's device-to-host ``wp.clone``/``wp.copy``; a CPU array returns a
    view) are not recorded, so a CUDA trace holds the same events as the CPU trace of the same program."""
    def numpy(self, *a, **k):
        s = trace_st if trace_st.tracing else None
        if s is None:
            return o_numpy(self, *a, **k)
        if not (s.busy or s.host_depth or s.launch_depth or s.backward_depth):
            rec = s.arrays.get(id(self))
            if rec is not None and rec["grad_of"] is not None:
                s.event("grad_numpy", array=rec["grad_of"], grad=rec["label"],
                        before_backward=s.backward_count == 0)
        s.host_depth += 1
        try:
            return o_numpy(self, *a, **k)
        finally:
            s.host_depth -= 1

    return numpy


def _wrap_grad_property(prop, trace_st):
    """The ``wp.array.grad`` property, recording reads and assignments of ``.grad``."""
    fget = prop.fget

    def grad_get(self):
        g = fget(self)
        s = trace_st if trace_st.tracing else None
        if s is None or s.busy or s.host_depth or s.launch_depth or s.backward_depth or g is None:
            return g
        try:
            owner = s.array(self)
            s.array(g, grad_of=owner)
            s.event("grad_read", array=owner, grad=s.array(g), before_backward=s.backward_count == 0)
        except Exception as exc:  # noqa: BLE001
            s.note("grad", exc)
        return g

    fset = prop.fset

    def grad_set(self, value):
        fset(self, value)
        s = trace_st if trace_st.tracing else None
        if s is None or s.busy or s.host_depth or s.launch_depth or s.backward_depth or not _is_array(value):
            return
        try:
            owner = s.array(self)
            s.event("grad_assign", array=owner, grad=s.array(value, grad_of=owner),
                    before_backward=s.backward_count == 0)
        except Exception as exc:  # noqa: BLE001
            s.note("grad", exc)

    return property(grad_get, grad_set if fset is not None else None, prop.fdel, prop.__doc__)


def _patch_tape(patch, trace_st):
    """Wrap ``wp.Tape``'s methods with ``patch``, every original read before the first is replaced."""
    T = wp.Tape
    o_init, o_enter, o_exit = T.__dict__["__init__"], T.__dict__["__enter__"], T.__dict__["__exit__"]
    o_rl, o_rf = T.__dict__["record_launch"], T.__dict__["record_func"]
    o_bw, o_zero, o_reset = T.__dict__["backward"], T.__dict__["zero"], T.__dict__["reset"]
    patch(T, "__init__", _wrap_tape_init(o_init, trace_st))
    patch(T, "__enter__", _wrap_tape_enter(o_enter, trace_st))
    patch(T, "__exit__", _wrap_tape_exit(o_exit, trace_st))
    patch(T, "record_launch", _wrap_record_launch(o_rl, trace_st))
    patch(T, "record_func", _wrap_record_func(o_rf, trace_st))
    patch(T, "backward", _wrap_backward(o_bw, trace_st))
    patch(T, "zero", _tape_op("tape_zero", o_zero, trace_st))
    patch(T, "reset", _tape_op("tape_reset", o_reset, trace_st))


def _wrap_tape_init(o_init, trace_st):
    """``wp.Tape.__init__`` that records the tape's creation."""
    def __init__(self, *a, **k):
        o_init(self, *a, **k)
        s = trace_st if trace_st.tracing else None
        if s is not None and not s.busy:
            r = s.tape(self)
            r["created"] = len(s.events)
            s.event("tape_init", tape=r["label"])

    return __init__


def _wrap_tape_enter(o_enter, trace_st):
    """``wp.Tape.__enter__`` that records the tape becoming active."""
    def __enter__(self, *a, **k):
        res = o_enter(self, *a, **k)
        s = trace_st if trace_st.tracing else None
        if s is not None and not s.busy:
            r = s.tape(self)
            s.active.append(r["label"])
            s.event("tape_enter", tape=r["label"])
            _tape_sessions.on_enter(r, self)
        return res

    return __enter__


def _wrap_tape_exit(o_exit, trace_st):
    """``wp.Tape.__exit__`` that records the tape ending."""
    def __exit__(self, *a, **k):
        try:
            return o_exit(self, *a, **k)
        finally:
            s = trace_st if trace_st.tracing else None
            if s is not None and not s.busy:
                r = s.tape(self)
                if r["label"] in s.active:
                    s.active.remove(r["label"])
                s.event("tape_exit", tape=r["label"])

    return __exit__


def _wrap_record_launch(o_rl, trace_st):
    """``wp.Tape.record_launch`` that marks the launch or host call in progress as recorded."""
    def record_launch(self, *a, **k):
        s = trace_st if trace_st.tracing else None
        if s is not None and not s.busy and not s.backward_depth:
            r = s.tape(self)
            if s.current_launch is not None:
                s.current_launch["tape"] = r["label"]
                s.current_launch["epoch"] = r["epoch"]
            elif s.current_host is not None:
                s.current_host["tape"] = r["label"]
                s.current_host["epoch"] = r["epoch"]
        if s is not None:
            s.busy += 1
        try:
            return o_rl(self, *a, **k)
        finally:
            if s is not None:
                s.busy -= 1

    return record_launch


def _wrap_record_func(o_rf, trace_st):
    """``wp.Tape.record_func`` that records the host call a tape keeps."""
    def record_func(self, backward, arrays, *a, **k):
        s = trace_st if trace_st.tracing else None
        if s is not None and not s.busy and not s.backward_depth:
            r = s.tape(self)
            labels = [s.array(x) for x in (arrays or []) if _is_array(x)]
            host = s.current_host
            if host is not None:
                host["tape"] = r["label"]
                host["epoch"] = r["epoch"]
            s.event("record_func", tape=r["label"], epoch=r["epoch"], arrays=labels,
                    host=host["seq"] if host is not None else None)
        if s is not None:
            s.busy += 1
        try:
            return o_rf(self, backward, arrays, *a, **k)
        finally:
            if s is not None:
                s.busy -= 1

    return record_func


def _tape_op(kind, orig, trace_st):
    """``wp.Tape.zero``/``reset`` recording the call as a ``kind`` event (a reset starts a new epoch)."""
    def op(self, *a, **k):
        s = trace_st if trace_st.tracing else None
        if s is None or s.busy or s.host_depth or s.backward_depth:
            return orig(self, *a, **k)
        r = s.tape(self)
        labels = []
        for key in list(getattr(self, "gradients", {}) or {}):
            if _is_array(key):
                labels.append(s.array(key))
        s.event(kind, tape=r["label"], arrays=labels)
        s.host_depth += 1
        try:
            return orig(self, *a, **k)
        finally:
            s.host_depth -= 1
            if kind == "tape_reset":
                r["epoch"] += 1

    return op


def _wrap_backward(o_bw, trace_st):
    """``wp.Tape.backward`` that records the seeds, the state before and the .grad after."""
    def backward(self, loss=None, grads=None, *a, **k):
        s = trace_st if trace_st.tracing else None
        if s is None or s.busy or s.backward_depth or s.host_depth or s.launch_depth:
            return o_bw(self, loss, grads, *a, **k)
        try:
            r = s.tape(self)
            ev = _begin_backward(s, r, loss, grads)
            _tape_sessions.on_backward(s, r, self, ev)  # launches carried over from an earlier recording
        except Exception as exc:  # noqa: BLE001 - tracing never breaks the user's backward
            s.note("backward", exc)
            return o_bw(self, loss, grads, *a, **k)
        s.backward_count += 1
        s.backward_depth += 1
        s.adjoint_launches = 0
        try:
            return o_bw(self, loss, grads, *a, **k)
        finally:
            s.backward_depth -= 1
            try:
                _end_backward(s, ev)
            except Exception as exc:  # noqa: BLE001
                s.note("backward", exc)

    return backward


def _end_backward(s, ev):
    """After a backward: adjoint launch count, params' .grad and the seed buffers."""
    ev["adjoint_launches"] = s.adjoint_launches
    snaps, post = {}, {}
    for name, label in s.params.items():
        p = _obj(s, label)
        g = s.grad_of(p) if p is not None else None
        if g is not None:
            snaps[name] = s.contents(g)
            post[name] = s.summary(g)
    s.post_grads.append(snaps)
    ev["post_grads"] = post
    for seed in ev["seeds"]:
        buf = _obj(s, seed["seed"]) if seed.get("seed") else None
        summ = s.summary(buf) if buf is not None else None
        seed["post_sum"] = summ["sum"] if summ else None


def _obj(st, label):
    return st.by_label.get(label)


def _seed_entry(st, mode, target, seed_arr, constant_one=False):
    tsum = st.summary(target) if target is not None else None
    tc = st.contents(target) if target is not None else None
    entry = {"mode": mode, "target": st.array(target) if target is not None else None,
             "seed": st.array(seed_arr) if seed_arr is not None else None,
             "target_sum": float(np.sum(tc)) if tc is not None else (tsum or {}).get("sum"),
             "target_mean": float(np.mean(tc)) if tc is not None and tc.size else None,
             "target_size": int(tc.size) if tc is not None else None}
    if constant_one:
        n = int(getattr(target, "size", 1) or 1)
        entry.update(size=n, sum=float(n), min=1.0, max=1.0, all_ones=True, constant=1.0)
        return entry
    sc = st.contents(seed_arr) if seed_arr is not None else None
    if sc is None or sc.size == 0:
        entry.update(size=0, sum=None, min=None, max=None, all_ones=False, constant=None)
        return entry
    mn, mx = float(np.min(sc)), float(np.max(sc))
    entry.update(size=int(sc.size), sum=float(np.sum(sc)), min=mn, max=mx,
                 all_ones=bool(mn == 1.0 and mx == 1.0), constant=mn if mn == mx else None)
    return entry


def _begin_backward(st, r, loss, grads):
    label, epoch = r["label"], r["epoch"]
    on_tape = []
    for ev in st.events:
        if ev["kind"] == "launch" and ev["tape"] == label and ev["epoch"] == epoch:
            for e in ev["args"]:
                if "array" in e and e["array"] not in on_tape:
                    on_tape.append(e["array"])
    seeds = []
    if loss is not None and _is_array(loss):
        seeds.append(_seed_entry(st, "loss", loss, None, constant_one=True))
    if grads:
        for a, g in grads.items():
            if _is_array(a):
                seeds.append(_seed_entry(st, "grads", a, g if _is_array(g) else None))
    if st.backward_count == 0:
        for name, lab in st.params.items():
            g = st.grad_of(_obj(st, lab))
            if g is not None:
                st.pre_grads[name] = st.contents(g)
    grad_nonzero, req = {}, {}
    for rec in list(st.arrays.values()):
        a = rec["_obj"]
        req[rec["label"]] = bool(getattr(a, "requires_grad", False))
        if rec["grad_of"] is not None:
            continue
        g = st.grad_of(a)
        if g is not None:
            st.array(g, grad_of=rec["label"])
            c = st.contents(g)
            grad_nonzero[rec["label"]] = bool(c is not None and np.any(c != 0))
    if loss is None and not grads:
        attached = {e["array"] for e in st.events if e["kind"] == "grad_assign"}
        for lab in on_tape:
            a = _obj(st, lab)
            if st.arrays[id(a)]["param"] is None and (grad_nonzero.get(lab) or lab in attached):
                seeds.append(_seed_entry(st, "preset", a, st.grad_of(a)))
    pre = {lab: st.summary(_obj(st, lab)) for lab in on_tape}
    rebound = []
    for ev in st.events:
        if ev["kind"] != "launch" or ev["tape"] != label or ev["epoch"] != epoch:
            continue
        then = {e["field"]: e["array"] for e in ev["args"] if e.get("field") and "array" in e}
        for arg, sobj in st.struct_refs.get(ev["seq"], []):
            for path, now in st.struct_bindings(arg, sobj).items():
                if path in then and then[path] != now:
                    rebound.append({"launch": ev["seq"], "field": path, "then": then[path], "now": now})
    first_read, writers = {}, {}
    for ev in st.events:
        if ev["kind"] == "launch" and ev["tape"] == label and ev["epoch"] == epoch:
            for lab in ev["reads"]:
                first_read.setdefault(lab, ev["seq"])
    for ev in st.events:
        if ev["kind"] == "launch":
            written, how = ev["writes"], ("recorded launch" if ev["tape"] == label and ev["epoch"] == epoch
                                          else "unrecorded launch")
        elif ev["kind"] == "host" and ev.get("dest"):
            written, how = [ev["dest"]], ("recorded host call" if ev.get("tape") == label else "host call")
        else:
            continue
        for lab in written:
            if lab in first_read and ev["seq"] >= first_read[lab]:
                writers.setdefault(lab, []).append({"event": ev["seq"], "by": how})
    now_cache, read_changes = {}, {}
    for ev in st.events:
        if ev["kind"] == "launch" and ev["tape"] == label and ev["epoch"] == epoch:
            read_changes[str(ev["seq"])] = st.read_changes(ev, now_cache)
    return st.event("backward", tape=label, epoch=epoch, rebound=rebound, read_changes=read_changes,
                    writers=writers,
                    loss=st.array(loss) if _is_array(loss) else None, seeds=seeds, pre=pre,
                    grad_nonzero=grad_nonzero, requires_grad=req, adjoint_launches=0, post_grads=None)


# ----------------------------------------------------------------------------
# coverage
# ----------------------------------------------------------------------------


class _Coverage:
    """Executed lines of .py files under one folder, with sys.monitoring or settrace."""

    def __init__(self, root):
        self.root = os.path.realpath(str(root)) + os.sep
        self.lines = {}
        self.functions = {}
        self._inside = {}
        self._mon = None
        self._old = None
        self._old_thread = None

    def _under(self, filename):
        r = self._inside.get(filename)
        if r is None:
            real = os.path.realpath(filename) if filename and not filename.startswith("<") else ""
            r = real if real.startswith(self.root) and real.endswith(".py") else ""
            self._inside[filename] = r
        return r

    def _enter(self, code, line):
        f = self._under(code.co_filename)
        if not f:
            return None
        name = getattr(code, "co_qualname", code.co_name)
        self.functions.setdefault((f, name, code.co_firstlineno), None)
        return f

    def start(self):
        mon = getattr(sys, "monitoring", None)
        if mon is not None:
            for tool in (3, 4, 5):  # 0-2 are reserved for debuggers, coverage and profilers
                try:
                    mon.use_tool_id(tool, "defects4warp-trace")
                except ValueError:
                    continue
                self._mon = tool
                break
        if self._mon is not None:
            mon = sys.monitoring
            E = mon.events

            def py_start(code, offset):
                if self._enter(code, code.co_firstlineno) is None:
                    return mon.DISABLE
                return None

            def line(code, lineno):
                f = self._under(code.co_filename)
                if not f:
                    return mon.DISABLE
                self.lines.setdefault(f, set()).add(lineno)
                return None

            mon.register_callback(self._mon, E.PY_START, py_start)
            mon.register_callback(self._mon, E.LINE, line)
            mon.set_events(self._mon, E.PY_START | E.LINE)
            return
        self._old = sys.gettrace()
        self._old_thread = getattr(threading, "gettrace", lambda: None)()

        def local(frame, event, arg):
            if event == "line":
                self.lines.setdefault(self._under(frame.f_code.co_filename), set()).add(frame.f_lineno)
            return local

        def glob(frame, event, arg):
            if event != "call":
                return None
            f = self._enter(frame.f_code, frame.f_lineno)
            if f is None:
                return None
            return local

        self._glob = glob
        threading.settrace(glob)
        sys.settrace(glob)
        # frames already running (the caller's) are not traced; fn's own frame is new

    def stop(self):
        if self._mon is not None:
            mon = sys.monitoring
            mon.set_events(self._mon, 0)
            mon.register_callback(self._mon, mon.events.PY_START, None)
            mon.register_callback(self._mon, mon.events.LINE, None)
            mon.free_tool_id(self._mon)
            mon.restart_events()
            return
        sys.settrace(self._old)
        threading.settrace(self._old_thread)

    def result(self):
        cov = {f: sorted(v) for f, v in self.lines.items() if f}
        funcs = [{"file": f, "name": n, "line": ln} for (f, n, ln) in sorted(self.functions)]
        return cov, funcs


# ----------------------------------------------------------------------------
# public entry points
# ----------------------------------------------------------------------------



def _run_patched(st, patches, fn, coverage_root):
    """Call ``fn()`` with the API wrapped for ``st`` through ``patches``, then unwrap and end the trace:
    ``(result, exc, error, cov)``."""
    cov = None
    error = None
    result = None
    exc = None
    try:
        st.tracing = True
        _install(st, patches)
        if coverage_root is not None and os.path.isdir(str(coverage_root)):
            cov = _Coverage(coverage_root)
            cov.start()
        try:
            result = fn()
        finally:
            if cov is not None:
                cov.stop()
    except BaseException as e:  # noqa: BLE001 - restored below, re-raised on request
        exc = e
        error = f"{type(e).__name__}: {e}"
    finally:
        st.tracing = False  # a wrapper the program kept a reference to records nothing from now on
        with _LOCK:
            patches.restore()
    return result, exc, error, cov


def trace_call(fn, *, params=None, digests=True, coverage_root=None, max_digest_bytes=1 << 20,
               max_snapshot_bytes=256 << 20, reraise=True, result_rtol=1e-6):
    """Run ``fn()`` with Warp's public API wrapped and return its result and a trace.

    Parameters
    ----------
    fn : callable
        Called with no arguments, e.g. ``problem.gradient``.
    params : dict[str, wp.array], optional
        The problem's ``params``; they get the first array labels and mark the
        sources of the param->loss dataflow path.
    digests : bool, default True
        Digest array contents (blake2b-64 of the bytes) before every launch,
        around every host write and before every ``backward()``, and keep the
        element snapshots. Without them write-after-read findings rely on
        write events alone (a trajectory array extended step by step is then
        reported, measured on tests/programs/trace_trajectory) and
        ``seed_accumulated`` cannot be told from ``seed_scale``.
    coverage_root : str or path, optional
        When a folder, record executed lines of ``.py`` files under it
        (``sys.monitoring`` on Python >= 3.12, ``sys.settrace`` and
        ``threading.settrace`` before) and the Python functions entered.
    max_digest_bytes : int, default 1 MiB
        Above this many bytes an array is digested on an evenly strided
        sample of this many bytes (its float64 sum is still exact).
    max_snapshot_bytes : int, default 256 MiB
        Budget for full copies of the arrays each recorded launch reads, taken
        just before it runs; with them a write-after-read counts only when an
        element the launch read (its index expressions evaluated with the
        launch's dim and integer arguments) differs at ``backward()``. Past the
        budget the whole-array digest decides (``trace["snapshots_complete"]``
        is then False).
    reraise : bool, default True
        Re-raise an exception of ``fn`` after restoring Warp (the trace is
        attached to it as ``exc.trace``); when False return ``(None, trace)``
        with ``trace["error"]`` set.
    result_rtol : float, default 1e-6
        Relative tolerance (``np.allclose``) for comparing returned gradients
        with the ``.grad`` contents each ``backward()`` left.

    Returns
    -------
    tuple
        ``(fn(), trace)``; ``trace`` is the document described in the module
        docstring.

    Raises
    ------
    RuntimeError
        If a trace is already in progress in this process.
    Exception
        Whatever ``fn`` raised, when ``reraise``.
    """
    with _LOCK:
        if active("trace") is not None:
            raise RuntimeError("trace_call: a trace is already in progress in this process")
        st = _Recorder(params, digests, max_digest_bytes, result_rtol, max_snapshot_bytes)
        patches = Patches("trace", st)  # in force from here: a second trace_call is refused
    t0 = time.perf_counter()
    result, exc, error, cov = _run_patched(st, patches, fn, coverage_root)
    wall = time.perf_counter() - t0
    coverage, functions = cov.result() if cov is not None else (None, [])
    doc = st.document(wall, error, result if exc is None else None, coverage, functions)
    if exc is not None:
        if reraise or not isinstance(exc, Exception):
            try:
                exc.trace = doc
            except Exception:
                pass
            raise exc
        return None, doc
    return result, doc
