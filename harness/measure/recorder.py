"""Recorder: the runtime trace of one call, by wrapping Warp's public API while it runs.

:func:`trace_call` runs one callable (typically ``problem.gradient``) while
Warp's public names are wrapped, records what happened in order (launches
with the arrays they read and write and content summaries, tapes, seeds of
``backward()``, host writes, ``.grad`` reads, line coverage) and restores
every wrapped name afterwards, also when the callable raises
(:func:`restore_patches`). Which public names are touched, on which
releases, the overhead and the document it returns are described in
:mod:`defects4warp.measure.trace`. Which arrays a kernel reads and writes comes
from :mod:`defects4warp.kernel_access`; the findings read from the document
come from :mod:`defects4warp.measure.detectors`.

It runs inside the measurement worker subprocess, next to the user's
``problem.py``, and imports only the standard library, NumPy and Warp.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import os
import sys
import threading
import time

import numpy as np
import warp as wp

from ..kernel_access import _access_mask, _analyse_function, _index_info, _value_flows, _values_needed
from . import aliasing as _aliasing
from . import tape_sessions as _tape_sessions
from .detectors import _last_write

__all__ = ["trace_call", "restore_patches"]

_ACTIVE = None  # the _Recorder of the trace in progress
_KERNEL_CACHE = {}  # id(kernel) -> (kernel, static info: source span, options, AST access maps)
_NEEDS_CACHE = {}  # (id(kernel), active argument paths) -> (kernel, paths whose values the adjoint reads)
_LOCK = threading.Lock()


def _is_array(v):
    return isinstance(v, wp.array)


#: Folders whose frames are not the program's own: Warp's package (``warp.optim``, ``warp.sim`` launch on the
#: program's behalf), the recorder's and the script capture's wrappers.
_NOT_PROGRAM = tuple(os.path.dirname(os.path.abspath(p)) + os.sep for p in (
    wp.__file__, __file__, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "capture", "x")))


def _call_site(max_depth=64):
    """``[file, line]`` of the program's call that led to the current hook: the innermost frame outside
    :data:`_NOT_PROGRAM` (a ``wp.launch`` in ``train.py``, or the user's ``opt.step()`` for a launch Warp's
    optimizer makes), or ``None`` when every frame within ``max_depth`` is Warp's or the harness's."""
    f = sys._getframe(1)
    for _ in range(max_depth):
        if f is None:
            return None
        fn = f.f_code.co_filename
        if fn and not fn.startswith("<") and not os.path.abspath(fn).startswith(_NOT_PROGRAM):
            return [fn, f.f_lineno]
        f = f.f_back
    return None


def _struct_instance_class():
    """Warp's ``StructInstance`` base class (every ``@wp.struct`` instance is one
    on 1.0.2-1.19.0): ``warp._src.codegen`` from 1.10, ``warp.codegen`` before;
    None when neither has it."""
    import importlib

    for mod in ("warp._src.codegen", "warp.codegen"):
        try:
            cls = getattr(importlib.import_module(mod), "StructInstance", None)
        except Exception:  # noqa: BLE001 - a module a release does not have
            cls = None
        if isinstance(cls, type):
            return cls
    return None


_STRUCT_INSTANCE = []  # [StructInstance class or None], filled on first use


def _is_struct(v):
    """Whether ``v`` is a Warp struct instance.

    ``wp.types.is_struct`` exists from Warp 1.11 only; on 1.0.2-1.10.1 calling
    it raised ``AttributeError``, every struct argument was recorded as a plain
    value, and no struct field (``struct_write_after_read``,
    ``struct_field_rebound``) could be seen. There the test is
    ``isinstance(v, StructInstance)``, what ``is_struct`` does on 1.11-1.19.
    """
    is_struct = getattr(wp.types, "is_struct", None)
    if is_struct is not None:
        try:
            return bool(is_struct(v))
        except Exception:  # noqa: BLE001
            return False
    if not _STRUCT_INSTANCE:
        _STRUCT_INSTANCE.append(_struct_instance_class())
    return _STRUCT_INSTANCE[0] is not None and isinstance(v, _STRUCT_INSTANCE[0])


def _struct_fields(v):
    names = []
    for attr in ("_cls", "cls"):  # the warp Struct (holds .vars); public name first where it has them
        cls = getattr(v, attr, None)
        if isinstance(getattr(cls, "vars", None), dict):
            names = list(cls.vars)
            break
    return [(n, getattr(v, n, None)) for n in names]


def _is_float_dtype(dtype):
    scalar = getattr(dtype, "_wp_scalar_type_", dtype)
    return scalar in (wp.float16, wp.float32, wp.float64)


def _scalar_value(v):
    """A JSON value standing for a non-array launch argument (numbers, Warp scalars and vectors)."""
    if isinstance(v, (bool, int, float)) or v is None:
        return v
    inner = getattr(v, "value", None)
    if isinstance(inner, (bool, int, float)):
        return inner
    try:
        if len(v) <= 16:
            return [float(c) for c in v]
    except Exception:
        pass
    return type(v).__name__


def _dtype_name(dtype):
    return getattr(dtype, "__name__", None) or str(dtype)


class _Recorder:
    def __init__(self, params, digests, max_digest_bytes, result_rtol, max_snapshot_bytes=256 << 20):
        self.digests = digests
        self.max_digest_bytes = int(max_digest_bytes)
        self.result_rtol = float(result_rtol)
        self.events = []
        self.arrays = {}  # id -> record (with "_obj")
        self.tapes = {}  # id -> {"label", "created", "epoch", "_obj"}
        self.kernels = {}
        self._by_kernel = {}
        self.by_label = {}
        self.struct_refs = {}  # launch seq -> [(arg, struct instance)]
        self.launch_ctx = {}  # launch seq -> (kernel info, dims, scalar args)
        self.snaps = {}  # (launch seq, array label) -> contents before the launch
        self.snap_bytes = 0
        self.max_snapshot_bytes = int(max_snapshot_bytes)
        self.snapshots_complete = True
        self.errors = []
        self.pre_grads = {}  # param name -> .grad contents when the call's first backward started
        self.adjoint_launches = 0
        self.params = {}
        self.busy = 0
        self.host_depth = 0
        self.launch_depth = 0
        self.backward_depth = 0
        self.active = []
        self.current_launch = None
        self.current_host = None
        self.backward_count = 0
        self.post_grads = []  # per backward: {name: ndarray copy}
        self.start = 0  # seq of the first event of the measured call (mark_start)
        self._grad_get = None
        for name, a in (params or {}).items():
            if _is_array(a):
                self.params[name] = self.array(a, param=name)

    # -- helpers --------------------------------------------------------------
    def mark_start(self):
        """Begin the measured call at the next event: what came before is how the program got there.

        A script captured at its k-th ``backward()`` (``diagnose --iteration k``) is replayed
        through its iterations 1 .. k-1 inside every ``gradient()`` call; the capture calls this
        when the params are set for iteration k, so the document's ``start`` tells the detectors
        that the earlier backwards are not part of the gradient measured. Backward counting (the
        ``before_backward`` flags, the .grad at the first backward, the per-backward .grad copies
        the returned gradient is matched against) starts again here.
        """
        self.start = len(self.events)
        self.backward_count = 0
        self.pre_grads = {}
        self.post_grads = []

    def note(self, where, exc):
        """Remember an exception raised while recording (the user's call goes on untraced there)."""
        if len(self.errors) < 20:
            self.errors.append(f"{where}: {type(exc).__name__}: {exc}")

    def array(self, a, param=None, grad_of=None):
        rec = self.arrays.get(id(a))
        if rec is None:
            try:
                shape = [int(s) for s in a.shape]
            except Exception:
                shape = []
            rec = {
                "label": f"A{len(self.arrays)}",
                "shape": shape,
                "dtype": _dtype_name(a.dtype),
                "float": bool(_is_float_dtype(a.dtype)),
                "size": int(getattr(a, "size", 0) or 0),
                "requires_grad": bool(getattr(a, "requires_grad", False)),
                "param": param,
                "grad_of": grad_of,
                "_obj": a,
            }
            self.arrays[id(a)] = rec
            self.by_label[rec["label"]] = a
        else:
            if param is not None:
                rec["param"] = param
            if grad_of is not None and rec["grad_of"] is None:
                rec["grad_of"] = grad_of
        return rec["label"]

    def grad_of(self, a):
        self.busy += 1
        try:
            return self._grad_get(a)
        except Exception:
            return None
        finally:
            self.busy -= 1

    def summary(self, a):
        if not self.digests or a is None:
            return None
        self.busy += 1
        try:
            arr = np.ascontiguousarray(a.numpy())
            flat = arr.reshape(-1).view(np.uint8)
            if flat.size > self.max_digest_bytes > 0:
                step = int(math.ceil(flat.size / self.max_digest_bytes))
                sample = flat[::step]
            else:
                sample = flat
            h = hashlib.blake2b(sample.tobytes(), digest_size=8)
            h.update(str(arr.shape).encode())
            try:
                s = float(np.sum(arr, dtype=np.float64))
            except Exception:
                s = None
            return {"digest": h.hexdigest(), "sum": s, "size": int(arr.size)}
        except Exception:
            return None
        finally:
            self.busy -= 1

    def contents(self, a):
        self.busy += 1
        try:
            return np.array(a.numpy(), dtype=np.float64, copy=True)
        except Exception:
            return None
        finally:
            self.busy -= 1

    def tape(self, t):
        rec = self.tapes.get(id(t))
        if rec is None:
            rec = {"label": f"T{len(self.tapes)}", "created": None, "epoch": 0, "_obj": t}
            self.tapes[id(t)] = rec
        return rec

    def event(self, kind, **kw):
        ev = {"seq": len(self.events), "kind": kind}
        ev.update(kw)
        self.events.append(ev)
        return ev

    def kernel_info(self, kernel):
        cached = self._by_kernel.get(id(kernel))
        if cached is not None:
            return cached[1], cached[2]
        key = str(getattr(kernel, "key", None) or getattr(kernel, "__name__", "kernel"))
        if key in self.kernels:  # two kernel objects with one key: keep them apart
            key = f"{key}#{len(self.kernels)}"
        hit = _KERNEL_CACHE.get(id(kernel))
        if hit is not None and hit[0] is kernel:
            info = dict(hit[1])
            self.kernels[key] = info
            self._by_kernel[id(kernel)] = (kernel, key, info)
            return key, info
        pyfunc = getattr(kernel, "func", None)
        try:
            lines, start = inspect.getsourcelines(pyfunc)
            span = [int(start), int(start + len(lines) - 1)]
            fname = os.path.realpath(inspect.getsourcefile(pyfunc) or "")
        except (OSError, TypeError):
            span, fname = None, None
        opts = getattr(kernel, "options", None) or {}
        eb = opts.get("enable_backward")
        if eb is None:
            mod = getattr(kernel, "module", None)
            eb = (getattr(mod, "options", None) or {}).get("enable_backward")
        if eb is None:
            eb = getattr(wp.config, "enable_backward", True)
        try:
            argnames = list(inspect.signature(pyfunc).parameters)
        except (TypeError, ValueError):
            argnames = []
        access = _analyse_function(pyfunc) if pyfunc is not None else None
        index = _index_info(pyfunc) if pyfunc is not None else None
        mod_opts = getattr(getattr(kernel, "module", None), "options", None) or {}
        info = {
            "name": getattr(pyfunc, "__name__", key),
            "module": getattr(getattr(kernel, "module", None), "name", None),
            "file": fname,
            "lines": span,
            "enable_backward": bool(eb),
            "access": access,
            "kernel_option": opts.get("enable_backward"),
            "module_option": mod_opts.get("enable_backward"),
            "calls": list((index or {}).get("calls", [])),
            "rng": bool((index or {}).get("rng")),
            "rmw": list((index or {}).get("rmw", [])),
            "_argnames": argnames,
            "_index": index,
            "_flows": _value_flows(pyfunc) if pyfunc is not None else None,
        }
        self.kernels[key] = info
        self._by_kernel[id(kernel)] = (kernel, key, info)
        _KERNEL_CACHE[id(kernel)] = (kernel, dict(info))
        return key, info

    # -- launches ----------------------------------------------------------
    def begin_launch(self, kernel, dim, inputs, outputs, record_tape, tiled):
        key, info = self.kernel_info(kernel)
        argnames = info["_argnames"]
        access = info["access"]
        args, reads, writes, structs = [], [], [], []

        def add_array(arg, field, a, role):
            path = field or arg
            fl = (access or {}).get(path)
            if access is None:
                fl = {"reads": True, "writes": True, "accumulates": False}
            elif fl is None:
                fl = {"reads": False, "writes": False, "accumulates": False}
            w = bool(fl["writes"]) or role == "output"
            label = self.array(a)
            entry = {
                "arg": arg,
                "field": field,
                "array": label,
                "role": role,
                "reads": bool(fl["reads"]),
                "writes": w,
                "accumulates": bool(fl["accumulates"]) and not (role == "output" and not fl["writes"]),
                "pre": self.summary(a),
            }
            if entry["reads"] and self.digests and (len(self.events), label) not in self.snaps:
                nbytes = int(getattr(a, "capacity", 0) or 0) or 8 * max(1, entry["pre"]["size"] if entry["pre"] else 1)
                if self.snap_bytes + nbytes <= self.max_snapshot_bytes:
                    c = self.contents(a)
                    if c is not None:
                        self.snaps[(len(self.events), label)] = c
                        self.snap_bytes += c.nbytes
                else:
                    self.snapshots_complete = False
            args.append(entry)
            if entry["reads"] and label not in reads:
                reads.append(label)
            if w and label not in writes:
                writes.append(label)

        def add_struct(arg, path, s, role, depth=0):
            for fname, fv in _struct_fields(s):
                p = f"{path}.{fname}"
                if _is_array(fv):
                    add_array(arg, p, fv, role)
                elif _is_struct(fv) and depth < 4:
                    add_struct(arg, p, fv, role, depth + 1)
                else:
                    args.append({"arg": arg, "field": p, "value": _scalar_value(fv)})

        values = [(v, "input") for v in (inputs or [])] + [(v, "output") for v in (outputs or [])]
        for i, (v, role) in enumerate(values):
            arg = argnames[i] if i < len(argnames) else f"arg{i}"
            if _is_array(v):
                add_array(arg, None, v, role)
            elif _is_struct(v):
                add_struct(arg, arg, v, role)
                structs.append((arg, v))
            else:
                args.append({"arg": arg, "value": _scalar_value(v)})
        try:
            dims = [int(d) for d in dim] if isinstance(dim, (list, tuple)) else [int(dim)]
        except Exception:
            dims = [str(dim)]
        ev = self.event(
            "launch",
            kernel=key,
            dim=dims,
            tiled=bool(tiled),
            record_tape=bool(record_tape),
            tape=None,
            epoch=None,
            active_tape=self.active[-1] if self.active else None,
            after_loss=None,
            site=_call_site(),
            args=args,
            reads=reads,
            writes=writes,
        )
        if structs:
            self.struct_refs[ev["seq"]] = structs
        scalars = {e["arg"]: e["value"] for e in args if "value" in e and e.get("field") is None}
        self.launch_ctx[ev["seq"]] = (info, dims, scalars)
        active = frozenset((e["field"] or e["arg"]) for e in args if "array" in e
                           and self.arrays[id(self.by_label[e["array"]])]["requires_grad"])
        ck = (id(kernel), active)
        if ck not in _NEEDS_CACHE:
            pyfunc = getattr(kernel, "func", None)
            needs = _values_needed(pyfunc, active) if pyfunc is not None else None
            _NEEDS_CACHE[ck] = (kernel, sorted(needs) if needs is not None else None)
        ev["needs"] = _NEEDS_CACHE[ck][1]
        try:
            flows = self._launch_flows(info.get("_flows"), args, reads, writes)
        except Exception:  # noqa: BLE001 - extra facts must never lose the trace
            flows = None
        if flows is not None:
            ev["flows"] = flows
        return ev

    @staticmethod
    def _launch_flows(flows, args, reads, writes):
        """{written label: [read labels whose values reach it]} of one launch, from the kernel's
        :func:`~defects4warp.kernel_access._value_flows` (None when that is unknown); a written
        array the analysis has no entry for depends on every read (conservative)."""
        if flows is None:
            return None
        def within(path, root):  # a struct passed whole ("s") covers its array fields ("s.q")
            return path == root or path.startswith(root + ".")

        paths = [(e["field"] or e["arg"], e["array"]) for e in args if "array" in e]
        out = {}
        for e in args:
            if "array" not in e or e["array"] not in writes:
                continue
            path = e["field"] or e["arg"]
            keys = [k for k in flows if within(path, k)]
            if not keys:
                out.setdefault(e["array"], set()).update(reads)
                continue
            got = out.setdefault(e["array"], set())
            for src in set().union(*(flows[k] for k in keys)):
                got.update(lab for p_, lab in paths if within(p_, src))
            if e["array"] in reads and e.get("accumulates"):
                got.add(e["array"])
        return {k: sorted(v) for k, v in out.items()}

    def end_launch(self, ev):
        """Forget the snapshots of a launch that no tape recorded."""
        if ev["tape"] is None:
            for e in ev["args"]:
                c = self.snaps.pop((ev["seq"], e.get("array")), None)
                if c is not None:
                    self.snap_bytes -= c.nbytes

    def read_changes(self, ev, now_cache):
        """{array label: {"changed", "read", "self_overlap"}} for the arrays launch ``ev`` read:
        how many of the elements it read differ now from when it ran (None without a
        snapshot), how many it read, and whether it also stored to elements it read."""
        info, dims, scalars = self.launch_ctx.get(ev["seq"], (None, [], {}))
        index = (info or {}).get("_index")
        out = {}
        for e in ev["args"]:
            if "array" not in e or not e["reads"]:
                continue
            A = e["array"]
            path = e["field"] or e["arg"]
            shape = self.arrays[id(self.by_label[A])]["shape"]
            snap = self.snaps.get((ev["seq"], A))
            rec = {"changed": None, "read": None, "self_overlap": None}
            try:
                if index is not None and path in index["reads"]:
                    rmask = _access_mask(shape, dims, index["reads"][path], index["tids"], scalars, index["locals"])
                else:
                    rmask = np.ones(tuple(shape), dtype=bool)
                rec["read"] = int(rmask.sum())
                if index is not None and e["writes"]:
                    if path in index["writes"]:
                        wmask = _access_mask(shape, dims, index["writes"][path], index["tids"], scalars, index["locals"])
                        rec["self_overlap"] = bool(np.any(wmask & rmask))
                elif index is not None:
                    rec["self_overlap"] = False
                if snap is not None:
                    now = now_cache.get(A)
                    if now is None:
                        now = now_cache[A] = self.contents(self.by_label[A])
                    if now is not None and now.shape == snap.shape:
                        diff = ~((now == snap) | (np.isnan(now) & np.isnan(snap)))
                        if diff.ndim > len(shape):
                            diff = diff.reshape(tuple(shape) + (-1,)).any(axis=-1)
                        rec["changed"] = int(np.count_nonzero(diff & rmask))
                        nz = snap != 0
                        if nz.ndim > len(shape):
                            nz = nz.reshape(tuple(shape) + (-1,)).any(axis=-1)
                        rec["changed_set_before"] = int(np.count_nonzero(diff & rmask & nz))
            except Exception:
                pass
            out[A] = rec
        return out

    def struct_bindings(self, arg, s, path=None, depth=0):
        """{field path: array label} of a struct instance now."""
        out = {}
        for fname, fv in _struct_fields(s):
            p = f"{path or arg}.{fname}"
            if _is_array(fv):
                out[p] = self.array(fv)
            elif _is_struct(fv) and depth < 4:
                out.update(self.struct_bindings(arg, fv, p, depth + 1))
        return out

    # -- finishing -----------------------------------------------------------
    def document(self, wall, error, result, coverage, functions):
        for ev in self.events:
            if ev["kind"] == "launch":
                ev["after_loss"] = None
        backwards = [e for e in self.events if e["kind"] == "backward"]
        for b in backwards:
            targets = {s["target"] for s in b["seeds"]}
            last = _last_write(self.events, targets, b["seq"])
            for ev in self.events[: b["seq"]]:
                if ev["kind"] == "launch" and ev["after_loss"] is None and ev["tape"] == b["tape"]:
                    ev["after_loss"] = last is not None and ev["seq"] > last
        arrays = {}
        for rec in self.arrays.values():
            arrays[rec["label"]] = {k: v for k, v in rec.items() if not k.startswith("_")}
        kernels = {k: {kk: vv for kk, vv in v.items() if not kk.startswith("_")} for k, v in self.kernels.items()}
        if coverage is not None:
            for info in kernels.values():
                f, span = info.get("file"), info.get("lines")
                if f in coverage and span:
                    coverage[f] = sorted(set(coverage[f]) | set(range(span[0], span[1] + 1)))
        return {
            "version": 1,
            "warp": str(getattr(wp.config, "version", "")),
            "python": sys.version.split()[0],
            "wall_s": wall,
            "error": error,
            "digests": bool(self.digests),
            "snapshots_complete": bool(self.snapshots_complete),
            "trace_errors": list(self.errors),
            "params": dict(self.params),
            "start": int(self.start),
            "arrays": arrays,
            "kernels": kernels,
            "tapes": {r["label"]: {"created": r["created"]} for r in self.tapes.values()},
            "events": self.events,
            "result": self.result_check(result),
            "aliases": _aliasing.returned_aliases(result, self, rtol=self.result_rtol),
            "coverage": coverage,
            "functions": functions,
        }

    def result_check(self, result):
        if not isinstance(result, dict):
            return {"grads": None}
        out = {}
        last = self.post_grads[-1] if self.post_grads else {}
        for name in self.params:
            if name not in result:
                continue
            try:
                r = np.asarray(result[name], dtype=np.float64)
            except Exception:
                continue
            match = None
            for i, snap in enumerate(self.post_grads):
                s = snap.get(name)
                if s is not None and s.shape == r.shape and np.allclose(r, s, rtol=self.result_rtol, atol=0.0,
                                                                                 equal_nan=True):
                    match = i
            ratio = None
            s = last.get(name)
            if s is not None and s.shape == r.shape and np.any(s != 0) and np.all(np.isfinite(s)):
                c = float(np.vdot(r.ravel(), s.ravel()) / np.vdot(s.ravel(), s.ravel()))
                if np.allclose(r, c * s, rtol=self.result_rtol, atol=self.result_rtol * float(np.max(np.abs(s)))):
                    ratio = c
            pre = self.pre_grads.get(name)
            out[name] = {
                "matches_pre_backward": bool(pre is not None and pre.shape == r.shape and np.any(pre != 0)
                                             and np.allclose(r, pre, rtol=self.result_rtol, atol=0.0)
                                             and not (s is not None and np.allclose(r, s, rtol=self.result_rtol,
                                                                                    atol=0.0))),
                "sum": float(np.sum(r)),
                "size": int(r.size),
                "matches_backward": match,
                "ratio": ratio,
                "returned_zero": bool(not np.any(r != 0)),
                "backward_nonzero": bool(s is not None and np.any(s != 0)),
            }
        return {"grads": out}


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


def _wrap_launch(orig, tiled, launch_sig):
    def launch(*args, **kwargs):
        st = _ACTIVE
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


def _host_op(op, orig):
    def wrapper(*args, **kwargs):
        st = _ACTIVE
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


def _install(st):
    """Wrap the public API; return a list of (owner, name, original) to restore."""
    saved = []

    def patch(owner, name, new):
        had = name in owner.__dict__ if isinstance(owner, type) else hasattr(owner, name)
        saved.append((owner, name, owner.__dict__[name] if isinstance(owner, type) and had else getattr(owner, name, None), had))
        setattr(owner, name, new)

    orig_launch = wp.launch
    launch_sig = [p for p in inspect.signature(orig_launch).parameters]
    patch(wp, "launch", _wrap_launch(orig_launch, False, launch_sig))
    if hasattr(wp, "launch_tiled"):
        patch(wp, "launch_tiled", _wrap_launch(wp.launch_tiled, True, launch_sig))
    patch(wp, "copy", _host_op("copy", wp.copy))
    patch(wp, "clone", _host_op("clone", wp.clone))
    A = wp.array
    for op in ("zero_", "fill_", "assign"):
        if op in A.__dict__:
            patch(A, op, _host_op(op, A.__dict__[op]))

    if "numpy" in A.__dict__:
        o_numpy = A.__dict__["numpy"]

        def numpy(self, *a, **k):
            s = _ACTIVE
            if s is not None and not (s.busy or s.host_depth or s.launch_depth or s.backward_depth):
                rec = s.arrays.get(id(self))
                if rec is not None and rec["grad_of"] is not None:
                    s.event("grad_numpy", array=rec["grad_of"], grad=rec["label"],
                            before_backward=s.backward_count == 0)
            return o_numpy(self, *a, **k)

        patch(A, "numpy", numpy)

    prop = A.__dict__.get("grad")
    if isinstance(prop, property) and prop.fget is not None:
        fget = prop.fget
        st._grad_get = fget

        def grad_get(self):
            g = fget(self)
            s = _ACTIVE
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
            s = _ACTIVE
            if s is None or s.busy or s.host_depth or s.launch_depth or s.backward_depth or not _is_array(value):
                return
            try:
                owner = s.array(self)
                s.event("grad_assign", array=owner, grad=s.array(value, grad_of=owner),
                        before_backward=s.backward_count == 0)
            except Exception as exc:  # noqa: BLE001
                s.note("grad", exc)

        patch(A, "grad", property(grad_get, grad_set if fset is not None else None, prop.fdel, prop.__doc__))
    else:
        st._grad_get = lambda a: getattr(a, "grad", None)

    T = wp.Tape
    o_init, o_enter, o_exit = T.__dict__["__init__"], T.__dict__["__enter__"], T.__dict__["__exit__"]
    o_rl, o_rf = T.__dict__["record_launch"], T.__dict__["record_func"]
    o_bw, o_zero, o_reset = T.__dict__["backward"], T.__dict__["zero"], T.__dict__["reset"]

    def __init__(self, *a, **k):
        o_init(self, *a, **k)
        s = _ACTIVE
        if s is not None and not s.busy:
            r = s.tape(self)
            r["created"] = len(s.events)
            s.event("tape_init", tape=r["label"])

    def __enter__(self, *a, **k):
        res = o_enter(self, *a, **k)
        s = _ACTIVE
        if s is not None and not s.busy:
            r = s.tape(self)
            s.active.append(r["label"])
            s.event("tape_enter", tape=r["label"])
            _tape_sessions.on_enter(r, self)
        return res

    def __exit__(self, *a, **k):
        try:
            return o_exit(self, *a, **k)
        finally:
            s = _ACTIVE
            if s is not None and not s.busy:
                r = s.tape(self)
                if r["label"] in s.active:
                    s.active.remove(r["label"])
                s.event("tape_exit", tape=r["label"])

    def record_launch(self, *a, **k):
        s = _ACTIVE
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

    def record_func(self, backward, arrays, *a, **k):
        s = _ACTIVE
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

    def _tape_op(kind, orig):
        def op(self, *a, **k):
            s = _ACTIVE
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

    def backward(self, loss=None, grads=None, *a, **k):
        s = _ACTIVE
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

    patch(T, "__init__", __init__)
    patch(T, "__enter__", __enter__)
    patch(T, "__exit__", __exit__)
    patch(T, "record_launch", record_launch)
    patch(T, "record_func", record_func)
    patch(T, "backward", backward)
    patch(T, "zero", _tape_op("tape_zero", o_zero))
    patch(T, "reset", _tape_op("tape_reset", o_reset))
    return saved


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



def restore_patches(saved) -> None:
    """Undo attribute patches recorded as ``(owner, name, original, had_attribute)``
    tuples, newest first: the original is set back, or the attribute removed
    where the owner had none (shared with :mod:`defects4warp.capture`)."""
    for owner, name, orig, had in reversed(saved):
        if had:
            setattr(owner, name, orig)
        else:
            try:
                delattr(owner, name)
            except AttributeError:
                pass
            if name == "__new__" and isinstance(owner, type):
                _reinherit_new(owner)


def _reinherit_new(cls) -> None:
    """Make ``cls(...)`` construct again after a patched ``__new__`` was deleted from a class that had none.

    CPython leaves the deleted slot calling ``object.__new__`` with the constructor's arguments,
    which raises "object.__new__() takes exactly one argument" for every later ``cls(x)`` (seen
    with ``wp.array`` on Warp 1.0.2, which defines no ``__new__``: every ``wp.array(data)`` after
    a capture run failed). The inherited ``__new__`` is set back explicitly: the next one in the
    MRO, called without the arguments when it is ``object.__new__``.
    """
    base_new = next((k.__dict__["__new__"] for k in cls.__mro__[1:] if "__new__" in k.__dict__), object.__new__)
    if base_new is object.__new__:
        def __new__(c, *args, **kwargs):
            return object.__new__(c)
    else:
        fn = base_new.__func__ if isinstance(base_new, staticmethod) else base_new

        def __new__(c, *args, **kwargs):
            return fn(c, *args, **kwargs)
    cls.__new__ = staticmethod(__new__)


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
    global _ACTIVE
    with _LOCK:
        if _ACTIVE is not None:
            raise RuntimeError("trace_call: a trace is already in progress in this process")
        st = _Recorder(params, digests, max_digest_bytes, result_rtol, max_snapshot_bytes)
        _ACTIVE = st
    saved = []
    cov = None
    error = None
    result = None
    exc = None
    t0 = time.perf_counter()
    try:
        saved = _install(st)
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
        restore_patches(saved)
        with _LOCK:
            _ACTIVE = None
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
