"""Trace state: what one runtime trace has recorded so far, and how a launch is recorded.

:class:`_Recorder` holds the arrays, tapes, kernels and events of the trace in
progress and turns a ``wp.launch`` into a launch event (argument roles from the
kernel access analysis of :mod:`defects4warp.kernel_access`, content digests,
snapshots of what it reads) and the finished trace into the document
:func:`defects4warp.measure.recorder.trace_call` returns. The wrappers that feed
it, the installation of those wrappers and the trace in progress live in
:mod:`defects4warp.measure.recorder`.

It runs inside the measurement worker subprocess, next to the user's
``problem.py``, and imports only the standard library, NumPy and Warp.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import math
import os
import sys

import numpy as np
import warp as wp

from ..kernel_access import _access_mask, _analyse_function, _index_info, _value_flows, _values_needed
from . import aliasing as _aliasing
from .dataflow import _last_write

_KERNEL_CACHE = {}  # id(kernel) -> (kernel, static info: source span, options, AST access maps)
_NEEDS_CACHE = {}  # (id(kernel), active argument paths) -> (kernel, paths whose values the adjoint reads)



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


def _capturing(a) -> bool:
    """True while ``a``'s CUDA device records a graph (``wp.ScopedCapture``): reading its values then (a
    device-to-host copy) is refused by CUDA and invalidates the script's capture (CUDA error 901 at its next
    copy), so the trace records such an event without values. False on the CPU and when Warp cannot say."""
    try:
        dev = a.device
        return bool(getattr(dev, "is_cuda", False) and dev.is_capturing)
    except Exception:  # noqa: BLE001 - an old release without the property, a freed array
        return False


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
        self.tracing = False  # True while its wrappers are installed (measure.recorder._run_patched)
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
        if not self.digests or a is None or _capturing(a):
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
        if _capturing(a):
            return None
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
        args, reads, writes, structs = self._launch_args(info["_argnames"], info["access"], inputs, outputs)
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
        self._launch_needs_and_flows(ev, kernel, info, args, reads, writes)
        return ev

    def _launch_args(self, argnames, access, inputs, outputs):
        """One launch's argument entries and the labels it reads and writes: ``(args, reads, writes, structs)``."""
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
            self._snapshot_read(entry, label, a)
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
        return args, reads, writes, structs

    def _snapshot_read(self, entry, label, a):
        """Copy the contents of an array the coming launch reads, within the snapshot budget."""
        if entry["reads"] and self.digests and (len(self.events), label) not in self.snaps:
            nbytes = int(getattr(a, "capacity", 0) or 0) or 8 * max(1, entry["pre"]["size"] if entry["pre"] else 1)
            if self.snap_bytes + nbytes <= self.max_snapshot_bytes:
                c = self.contents(a)
                if c is not None:
                    self.snaps[(len(self.events), label)] = c
                    self.snap_bytes += c.nbytes
            else:
                self.snapshots_complete = False

    def _launch_needs_and_flows(self, ev, kernel, info, args, reads, writes):
        """Set a launch event's ``needs`` (values its adjoint reads) and, when known, its ``flows``."""
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
