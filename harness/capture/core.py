"""Capture a Problem from a running training script (issue 15).

:func:`capture_problem` runs the user's script unmodified in this process
(``runpy`` as ``__main__``, ``sys.argv = [entry, *args]``, the working
directory and the first ``sys.path`` entry set to the variant folder) with a
few of Warp's public names wrapped, and returns a :class:`CapturedProblem`
that satisfies the Problem protocol of docs/case-format.md.

How it works
------------
1. **Discovery run**, under the runtime trace (:func:`defects4warp.measure.trace.trace_call`,
   which wraps ``wp.launch``, ``wp.Tape``, host writes and ``.grad``): every
   ``wp.array`` construction is tagged with its allocation site (the first
   frame outside Warp and the harness: ``file, line``) and occurrence (the
   n-th construction at that line in the run). The run goes on past the
   script's k-th ``Tape.backward()`` until its (k+1)-th backward starts (or the
   script ends), so that what the script does with ``.grad`` is seen.
2. **Params**: arrays with ``requires_grad=True`` read by a launch recorded on
   the k-th backward's tape, written by none of them, from which the loss is
   reachable, and whose ``.grad`` the script consumes after that backward
   (reads the property, passes it to a launch or a host copy, calls
   ``.numpy()`` on it). ``ScriptSpec.params`` overrides the choice.
3. **Re-runs** (``objective()``, ``gradient()``, ``train(n)``): the script
   runs again in the same process (modules stay loaded, kernels stay built;
   the variant folder's own modules are imported afresh). The construction
   at a param's site returns the *same* array object as before (filled with
   what the script's construction produced, ``.grad`` zeroed as in a fresh
   allocation), so ``params`` keeps its identity across runs and the trace of
   a re-run labels it as a param. At the first ``Tape.__enter__`` after the
   (k-1)-th backward the params are set to the values ``params`` held when
   the call started; the objective is read at the k-th backward, before it
   runs (``loss`` summed, or ``sum(seed * array)`` over a ``grads={...}``
   seed dict or over the ``.grad`` the script set by hand on arrays a launch
   on the tape wrote); ``gradient()`` copies the params' ``.grad`` right
   after it. The script is then stopped by a private ``BaseException`` raised
   from the wrapper and caught here; the params are restored.
4. **The reported loss.** When the script seeds ``grads={...}`` (or ``.grad``)
   and the loss it prints matches no seed-weighted sum, the objective is the
   printed loss where it can be identified: the mean or sum of a single
   seeded array, or a weighted sum of several seeded arrays' sums fitted to
   the prints of a few re-runs (:func:`_fit_reported_weights`).
5. **State carried across iterations.** When a param's ``.grad`` is still
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

import contextlib
import dataclasses
import io
import math
import os
import re
import runpy
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import warp as wp

from ..measure import trace as _trace
from .iteration import ValueSnapshots, handed_over, injection_step, updated_owners
from .screen import screen_iterations
from .spec import CaptureError, ScriptSpec, format_site, site_matches
from .targets import module_file

__all__ = ["CapturedProblem", "capture_problem", "CaptureError", "DEFAULT_TIMEOUT_S", "JITTER_RTOL"]

#: Default wall-clock limit of one run of the script, seconds (discovery and each re-run).
DEFAULT_TIMEOUT_S = 120.0

#: Relative difference between two re-runs' objectives at the same params above which the
#: script is stochastic (the determinism probe's threshold, harness/probes/determinism.py).
JITTER_RTOL = 1e-6

#: Backwards the discovery run follows past the k-th one while the script has not used a gradient yet
#: (a loss assembled over several backwards: windows, a repeated backward) before it stops.
MAX_EXTRA_BACKWARDS = 64

#: Relative tolerance when comparing the seed-weighted objective with a loss the script prints.
PRINT_RTOL = 1e-3

_HERE = os.path.dirname(os.path.abspath(__file__))
_HARNESS = os.path.dirname(_HERE) + os.sep
_WARP = os.path.dirname(os.path.abspath(wp.__file__)) + os.sep
_INTEROP = ("from_torch", "to_torch", "from_jax", "to_jax", "from_paddle", "to_paddle", "from_dlpack", "to_dlpack")
#: gradient() points whose backward seeds a capture keeps (the most recent), for objective()'s
#: frozen seeds (:meth:`CapturedProblem._frozen_seed_objective`): the FD probe and the sweep work at
#: two points (the given and a perturbed one), so a few suffice.
MAX_SEED_POINTS = 8

#: Words on a printed line that say it reports the loss (the seed check reads numbers on such lines only).
_LOSS_WORDS = re.compile(r"loss|objective|cost|error|\bmse\b|\brmse\b|\bmae\b|energy|residual|misfit", re.I)
_NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


#: User frames above the allocating one kept per allocation site in the discovery run, to name a param made by a
#: helper after the variable its caller assigns (a helper of a helper is two).
CALLER_DEPTH = 3


class _Stop(BaseException):
    """Raised from a wrapper to stop the script once what was needed is read."""


class _Limit(BaseException):
    """A limit hit inside the script (a BaseException, so ``except Exception`` in the user's code
    does not swallow it); turned into :class:`CaptureError` at the boundary."""


class _Timeout(BaseException):
    pass


_ACTIVE_RUN = None
#: Variant folders captured in this process (their modules are purged before every run of any capture).
_FOLDERS: set = set()


def _ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


@contextlib.contextmanager
def _quiet(run=None):
    """Internal reads and writes: invisible to the runtime trace and to the capture's own hooks."""
    st = _trace._ACTIVE
    if st is not None:
        st.busy += 1
    if run is not None:
        run.quiet += 1
    try:
        yield
    finally:
        if st is not None:
            st.busy -= 1
        if run is not None:
            run.quiet -= 1


def _grad(a):
    """``a.grad`` read without the trace's property wrapper noticing (call under :func:`_quiet`)."""
    return getattr(a, "grad", None)


def _np(a) -> np.ndarray:
    return np.array(a.numpy(), copy=True)


class _Run:
    """State of one execution of the script.

    ``mode``: ``discover`` | ``objective`` | ``gradient`` | ``train``.
    """

    def __init__(self, cap, mode, inject=None, n_train=0, deadline=None):
        self.cap = cap
        self.mode = mode
        self.k = cap.k if mode != "discover" else None  # first backward of the modelled iteration
        self.inject = inject or {}  # param name -> ndarray to set at the k-th tape start
        self.n_train = n_train
        self.deadline = deadline
        self.counts = {}  # (file, line) -> constructions seen
        self.site_of = {}  # id(array) -> (file, line, occ)
        self.keep = []  # arrays kept alive so their ids stay valid
        self.rg = []  # arrays with requires_grad, in construction order
        self.latest = {}  # (file, line) -> last array constructed there
        self.depth = 0
        self.quiet = 0
        self.reusing = None  # (param name, array) being re-initialised by __init__
        self.next_site = {}  # id(new object) -> its site, from __new__ to __init__
        self.backwards = 0  # backward() calls completed (or reached, for the stop)
        self.injected = False
        # gradient() continuing the script (a .grad carried across iterations): the param values are set again
        # at the first tape start after each of these backward counts, and the .grad is read after backward
        # ``grad_target`` (``None``: the single-iteration re-run)
        self.inject_after = set()
        self.injected_at = set()
        self.grad_target = None
        self.chain_reached = 0  # iterations of the chain whose gradient was read
        self.pending = {}  # name -> values, params not yet allocated when the injection happened
        self.found = {}  # param name -> array this run
        self.losses = []
        self.grad = None
        self.objective = None
        self.stopped = None
        self.snap = {}  # discovery: id(array) -> values at the k-th tape start (or at allocation after it)
        self.kth = None  # discovery: info about the k-th backward
        self.k_info = None  # every mode: _objective_at's info for the k-th backward of this run
        self.next_backward_grads = None  # discovery: params' .grad when the (k+1)-th backward started
        self.next_objective = None
        self.next_info = None  # discovery: _objective_at's info for the backward it stopped at
        self.stop_seeds = set()  # discovery: trace labels of the seed buffers of the backward it stopped at  # discovery: the objective of the (k+1)-th backward (a print may follow an update)
        self.interop = []  # [(function, site)]
        self.interop_ids = set()
        self.in_interop = 0
        self.launch_sites = {}  # trace event seq -> (file, line) of the wp.launch call
        self.out_mark = None
        self.out = None  # the run's stdout buffer
        self.tapes = 0
        self.launches = 0
        self.callers = {}  # discovery: allocation site -> [(file, line)] of the user frames that called it
        # hooked calls (launch, copy, clone, tape start, backward, allocation) counted alike in every run: a re-run
        # sets the params just before call ``cap.inject_step`` (the start of the modelled iteration)
        self.steps = 0
        self.step_seqs = []  # discovery: trace length when each hooked call began
        self.alloc_steps = {}  # discovery: id(array) -> index of the hooked call that allocated it
        self.alloc_seqs = []  # discovery: (trace length, shape) of each requires_grad allocation
        self.iteration = 1  # discovery: the script's optimisation iteration the run is in
        self.marks = []  # discovery: per backward call {n, iteration, seq, tape, epoch, counted, why}
        self.values = ValueSnapshots()
        self.iter_value = 0.0  # the objective summed over the counted backwards of the current iteration
        self.first_injected = False
        self.grad_last = 0  # gradient mode: the backward after which .grad was last read
        self.hook_depth = 0  # hooked calls in progress: the calls they make are not counted

    def grad_arrays(self):
        """The arrays this run saw allocated that have ``requires_grad=True`` now, in construction order.

        Holds those allocated with ``requires_grad=True`` (``self.rg``) and those whose flag the script set
        afterwards (``x.requires_grad = True``, e.g. ``model.joint_q`` made by ``builder.finalize()`` in
        Warp's example_inverse_kinematics.py): a param of either kind needs its value at the k-th tape start.

        Returns
        -------
        list of wp.array
            No duplicates; arrays in ``self.rg`` first.
        """
        out, ids = list(self.rg), {id(a) for a in self.rg}
        for a in self.keep:
            if id(a) not in ids and bool(getattr(a, "requires_grad", False)):
                out.append(a)
                ids.add(id(a))
        return out

    def callers_of(self, depth=CALLER_DEPTH):
        """(file, line) of the user frames (in the variant folder) outside the first one, innermost first, at
        most ``depth``: a param made by a helper is named after the variable its caller assigns."""
        out, first = [], True
        root = str(self.cap.folder) + os.sep
        f = sys._getframe(1)
        while f is not None and len(out) < depth:
            fn = f.f_code.co_filename
            if fn and not fn.startswith("<") and not fn.startswith(_WARP):
                ab = os.path.abspath(fn)
                if not ab.startswith(_HARNESS):
                    if not first and ab.startswith(root):
                        out.append((ab, f.f_lineno))
                    first = False
            f = f.f_back
        return out

    # -- sites ------------------------------------------------------------------
    def site(self):
        """(file relative to the variant folder or absolute, line) of the first user frame."""
        f = sys._getframe(1)
        while f is not None:
            fn = f.f_code.co_filename
            if fn and not fn.startswith("<") and not fn.startswith(_WARP) and not os.path.abspath(fn).startswith(_HARNESS):
                return self.cap.rel(fn), f.f_lineno
            f = f.f_back
        return "<unknown>", 0

    def check_time(self):
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _Timeout()

    def step(self):
        """One hooked call of the script (a launch, ``wp.copy``/``wp.clone``, a tape start, a backward, an
        allocation), counted alike in every run: the runs agree call for call up to the point where a re-run
        sets the params, since everything before it is the script at the same values. A re-run sets the params
        just before call ``cap.inject_step``; the discovery run notes the trace length at each call."""
        self.check_time()
        if self.hook_depth:
            return  # inside another hooked call (the copy inside assign, the adjoint launches of a backward)
        if self.mode == "discover":
            st = _trace._ACTIVE
            self.step_seqs.append(len(st.events) if st is not None else 0)
        elif not self.first_injected and self.steps == self.cap.inject_step:
            self.do_inject()
        self.steps += 1

    # -- injection ----------------------------------------------------------------
    def do_inject(self):
        self.injected = True
        self.injected_at.add(self.backwards)
        with _quiet(self):
            if self.mode == "discover":
                for a in self.grad_arrays():
                    if id(a) not in self.snap:
                        try:
                            self.snap[id(a)] = _np(a)
                        except Exception:  # noqa: BLE001
                            pass
                return
            st = _trace._ACTIVE
            if st is not None and self.mode == "gradient" and self.cap.iteration > 1 and not self.first_injected:
                # every gradient() call replays iterations 1 .. k-1 first: the trace measures iteration k
                st.mark_start()
            self.first_injected = True
            for name, vals in self.inject.items():
                a = self.found.get(name)
                if a is None:
                    self.pending[name] = vals
                else:
                    a.assign(vals)


def _install(run):
    """Wrap the names this run needs; returns the restore list."""
    saved = []

    def patch(owner, name, new):
        had = name in owner.__dict__ if isinstance(owner, type) else hasattr(owner, name)
        orig = (owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)) if had else None
        saved.append((owner, name, orig, had))
        setattr(owner, name, new)

    A = wp.array
    o_init = A.__dict__["__init__"]
    o_new = A.__dict__.get("__new__")
    cap = run.cap

    def __new__(cls, *args, **kwargs):
        r = _ACTIVE_RUN
        st = _trace._ACTIVE
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
        r = _ACTIVE_RUN
        if r is None or r.quiet or r.depth:
            return o_init(self, *args, **kwargs)
        if r.reusing is not None and r.reusing[1] is self:
            name, P = r.reusing
            r.reusing = None
            site = r.next_site.pop(id(P), None)
            tmp = object.__new__(A)
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
                st = _trace._ACTIVE
                r.alloc_seqs.append((len(st.events) if st is not None else 0, tuple(self.shape)))
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

    T = wp.Tape
    # wrap what is installed now (the trace's wrappers during a traced call), not the originals
    cur_enter, cur_bw = T.__enter__, T.backward

    def __enter__(self, *a, **k):
        r = _ACTIVE_RUN
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
        r = _ACTIVE_RUN
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
        per = r.cap.per_iteration
        if r.mode == "train" and n >= r.k + r.n_train * per:
            r.stopped = "backward"
            raise _Stop()
        if r.mode == "observe" and n > r.cap.grad_after:
            # the seeded arrays of the next backward too: a script often prints the loss after its update,
            # computed at the params the next backward starts from
            try:
                r.next_info = _objective_at(r, loss, grads, n, self)[1]
            except _Limit:
                r.next_info = None
            r.stopped = "backward"
            raise _Stop()
        if r.mode == "gradient" and n > r.k and (n - 1) in r.inject_after and (n - 1) not in r.injected_at:
            # a continued iteration whose tape started before the params could be set again: its gradient
            # would be at the point the script's update reached, not at the requested one
            r.stopped = f"no tape start before backward {n}"
            raise _Stop()
        if n < r.k:
            r.backwards = n
            return _nested(r, cur_bw, self, loss, grads, *a, **k)
        if n == r.k and not r.first_injected:
            raise _Limit(f"the re-run reached backward {n} before the point where the capture sets the params (the "
                         f"start of iteration {r.cap.iteration}, hooked call {r.cap.inject_step}): the script does "
                         f"not repeat its own run; use --iteration or write a make_problem adapter")
        if n == r.k and r.pending:
            raise _Limit(f"param(s) {sorted(r.pending)} were not allocated again before backward {n} of the "
                         f"re-run (allocated at import time of a module outside the variant folder?): write a "
                         f"make_problem adapter, or allocate them in the script")
        off = (n - r.k) % per if r.mode == "train" else n - r.k
        counted = r.cap.obj_offsets
        if off in counted and (r.mode == "train" or n - r.k < per):
            value, info = _objective_at(r, loss, grads, n, self)
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
        res = _nested(r, cur_bw, self, loss, grads, *a, **k)
        r.backwards = n
        if r.mode == "gradient" and n >= r.cap.grad_after and (n - r.cap.grad_after) % per == 0:
            with _quiet(r):
                r.grad = {}
                for name, P in r.cap.params.items():
                    g = _grad(P)
                    r.grad[name] = np.zeros(P.shape, dtype=_np(P).dtype) if g is None else _np(g)
            r.chain_reached += 1
            r.grad_last = n
            if r.grad_target is None or n >= r.grad_target:
                r.stopped = "gradient"
                raise _Stop()
        return res

    patch(T, "__enter__", __enter__)
    patch(T, "backward", backward)

    def counted(owner, fname):
        cur = owner.__dict__[fname] if isinstance(owner, type) else getattr(owner, fname)

        def call(*args, **kwargs):
            r = _ACTIVE_RUN
            st = _trace._ACTIVE
            if r is None or r.quiet or r.depth or (st is not None and st.busy):
                return cur(*args, **kwargs)
            if not r.hook_depth and fname == "launch":
                r.launches += 1
                if r.mode == "discover" and st is not None:
                    r.launch_sites[len(st.events)] = r.site()
            r.step()
            r.hook_depth += 1
            try:
                return cur(*args, **kwargs)
            finally:
                r.hook_depth -= 1

        patch(owner, fname, call)

    for fname in ("launch", "copy", "clone"):
        counted(wp, fname)
    for fname in ("assign", "zero_", "fill_"):
        if fname in A.__dict__:
            counted(A, fname)

    def limit(msg):
        def refuse(*a, **k):
            r = _ACTIVE_RUN
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

    for fname in _INTEROP:
        if not hasattr(wp, fname):
            continue
        orig = getattr(wp, fname)

        def interop(*a, __orig=orig, __name=fname, **k):
            r = _ACTIVE_RUN
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
    return saved


def _package_hint(cap, exc) -> str | None:
    """How to run a script that sits inside a package, when ``exc`` is a ModuleNotFoundError for that package
    (``from pkg.model import X`` in ``pkg/train.py`` run as a file), else None."""
    if cap.spec.module or not isinstance(exc, ImportError):
        return None
    entry = Path(cap.entry).resolve()
    if isinstance(exc, ModuleNotFoundError) and getattr(exc, "name", None):
        top = exc.name.split(".")[0]
    elif "relative import" in str(exc) and (entry.parent / "__init__.py").is_file():
        pkg = entry.parent  # `from .model import X`: the outermost folder with an __init__.py is the package
        while (pkg.parent / "__init__.py").is_file():
            pkg = pkg.parent
        top = pkg.name
    else:
        return None
    for up in entry.parents:
        if up.name == top and (up.parent / top).is_dir():
            rel = entry.relative_to(up.parent).with_suffix("")
            mod = ".".join(rel.parts)
            return (f"The script sits inside the package {top}/ and imports it by name: run it as a module from "
                    f"the folder that holds {top}/, as `python -m {mod}` would: cd {up.parent} && defects4warp "
                    f"diagnose -m {mod}" + (f" -- {' '.join(cap.spec.args)}" if cap.spec.args else ""))
    return None


def _nested(r, fn, *a, **k):
    """``fn(*a, **k)`` as a hooked call in progress (the hooked calls it makes are not counted)."""
    r.hook_depth += 1
    try:
        return fn(*a, **k)
    finally:
        r.hook_depth -= 1


def _live_grads(st) -> dict:
    """``{grad label: owner label}`` of the live trace ``st``."""
    return {rec["label"]: rec["grad_of"] for rec in st.arrays.values() if rec.get("grad_of") is not None}


def _discover_backward(r, tape, loss, grads, n) -> None:
    """The discovery run at its n-th backward call, before the backward runs: which optimisation iteration it
    belongs to (a new one when an update of some array happened since the previous backward,
    :func:`defects4warp.capture.iteration.updated_owners`), whether it adds to that iteration's objective (a
    backward seeded by an adjoint handed over from an earlier backward, or a repeat on the same tape recording,
    does not), the objective's value and the params' values at the modelled iteration's first backward. Raises
    :class:`_Stop` at the first backward of the iteration after the modelled one (or
    :data:`MAX_EXTRA_BACKWARDS` into it)."""
    st = _trace._ACTIVE
    K = r.cap.iteration
    events = st.events if st is not None else []
    seed_labels = set()
    if st is not None and grads:
        seed_labels = {st.arrays[id(v)]["label"] for v in grads.values() if id(v) in st.arrays}
    glabs = _live_grads(st) if st is not None else {}
    upd = set()
    if st is not None and r.marks:
        def changed(lab):
            return r.values.changed(lab, st.by_label.get(lab))

        with _quiet(r):
            upd = updated_owners(events, r.marks[-1]["seq"], glabs, seed_labels, changed, r.alloc_seqs)
        if upd:
            r.iteration += 1
    trec = st.tapes.get(id(tape)) if st is not None else None
    mark = {"n": n, "iteration": r.iteration, "seq": len(events), "tape": id(tape),
            "epoch": trec.get("epoch") if trec else None, "updated": sorted(upd), "counted": True, "why": None}
    same = [m for m in r.marks if m["iteration"] == r.iteration]
    if any(m["tape"] == mark["tape"] and m["epoch"] == mark["epoch"] for m in same):
        mark.update(counted=False, why="a repeated backward of the same tape recording")
    elif same and seed_labels and st is not None:
        if handed_over(events, same[0]["seq"], glabs, seed_labels):
            mark.update(counted=False, why="seeded by an adjoint an earlier backward of the iteration produced")
    r.marks.append(mark)
    if r.iteration > K or (r.k is not None and n > r.k + MAX_EXTRA_BACKWARDS):
        # the first backward of the next iteration: what the script carried over
        with _quiet(r):
            r.next_backward_grads = {}
            for P in r.grad_arrays():
                g = _grad(P)
                r.next_backward_grads[id(P)] = None if g is None else _np(g)
        try:
            r.next_objective, r.next_info = _objective_at(r, loss, grads, n, tape)
        except _Limit:
            r.next_objective = None
        if st is not None and grads:
            r.stop_seeds = set(seed_labels)
        r.stopped = "next iteration's backward"
        raise _Stop()
    if r.iteration == K:
        if r.k is None:
            r.k = n
            r.do_inject()  # the values of the params at the iteration's start (not changed within it)
        if mark["counted"]:
            value, info = _objective_at(r, loss, grads, n, tape)
            r.iter_value += value
            r.objective = r.iter_value
            if r.kth is None:
                r.kth = info
                r.kth["seq"] = len(events)
                r.k_info = info
    if st is not None:
        with _quiet(r):
            r.values.take([(st.arrays[id(a)]["label"], a) for a in r.grad_arrays() if id(a) in st.arrays])


_STDLIB = os.path.dirname(os.path.abspath(os.__file__)) + os.sep


def _from_user(run) -> bool:
    """Whether the call comes from the script's own files (the nearest frame outside Warp, the harness and the
    standard library lies in the variant folder): a library that starts a helper process on its own (a font
    cache, a compiler) is not the script starting one."""
    root = str(run.cap.folder) + os.sep
    f = sys._getframe(2)
    while f is not None:
        fn = os.path.abspath(f.f_code.co_filename or "")
        if f.f_code.co_filename.startswith("<") or fn.startswith(_WARP) or fn.startswith(_HARNESS) or (
                fn.startswith(_STDLIB) and "site-packages" not in fn):
            f = f.f_back
            continue
        return fn.startswith(root)
    return False


_restore = _trace.restore_patches


def _user_frame(run, frame):
    """(file, line, source text) of the innermost frame of ``frame``'s stack in the script's own files (outside
    Warp, the harness and the standard library), else of the innermost one outside Warp and the harness; None
    when there is none."""
    import linecache

    first_outside = None
    f = frame
    while f is not None:
        fn = f.f_code.co_filename or ""
        ab = os.path.abspath(fn)
        if not fn.startswith("<") and not ab.startswith(_WARP) and not ab.startswith(_HARNESS):
            hit = (run.cap.rel(fn), f.f_lineno, linecache.getline(fn, f.f_lineno).strip())
            if ab.startswith(str(run.cap.folder) + os.sep):
                return hit
            if first_outside is None:
                first_outside = hit
        f = f.f_back
    return first_outside


def _tb_site(run, tb):
    """(file, line, source text) of the innermost entry of traceback ``tb`` in the script's own files (outside
    Warp and the harness), else of the innermost one outside Warp and the harness; None when there is none.

    The line is the traceback's (``tb_lineno``: the statement running when the exception passed), not the
    frame's ``f_lineno``, which after the exception has left the frame reports wherever its cleanup code
    stopped."""
    import linecache

    user = other = None
    root = str(run.cap.folder) + os.sep
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename or ""
        ab = os.path.abspath(fn)
        if not fn.startswith("<") and not ab.startswith(_WARP) and not ab.startswith(_HARNESS):
            hit = (run.cap.rel(fn), tb.tb_lineno, linecache.getline(fn, tb.tb_lineno).strip())
            if ab.startswith(root):
                user = hit
            else:
                other = hit
        tb = tb.tb_next
    return user or other


def _at(site) -> str:
    """`` at FILE:LINE (source)`` for a (file, line, source) site, else an empty string."""
    if not site:
        return ""
    return f" at {format_site(site[0], site[1])}" + (f" ({site[2]})" if site[2] else "")


def _dtype(dt) -> str:
    return getattr(dt, "__name__", str(dt))


def _tape_arrays(tape):
    """The ``wp.array`` arguments (inputs and outputs) of the launches recorded on ``tape``, in order, once each
    (``Tape.launches`` entries ``[kernel, dim, max_blocks, inputs, outputs, ...]`` on 1.12.1 to 1.19.0; recorded
    functions and other entries are skipped)."""
    out = {}
    for e in getattr(tape, "launches", None) or []:
        if isinstance(e, (list, tuple)) and len(e) >= 5:
            for a in list(e[3] or []) + list(e[4] or []):
                if isinstance(a, wp.array) and id(a) not in out:
                    out[id(a)] = a
    return list(out.values())


def _hand_seeds(r, tape, n):
    """The seeds of a ``backward()`` given neither a loss nor ``grads=``: the arrays a launch on ``tape`` wrote
    whose ``.grad`` the script set by hand (nonzero when the backward is called). In the discovery run "wrote"
    comes from the runtime trace; a re-run takes the arrays allocated at the sites the discovery run found."""
    arrays = [a for a in _tape_arrays(tape) if getattr(a, "requires_grad", False) and _grad(a) is not None]
    if r.mode == "discover":
        st = _trace._ACTIVE
        if st is None:
            return []
        written = {lab for ev in st.events if ev["kind"] == "launch" for lab in ev["writes"]}
        # a .grad attached by assignment counts also when it holds zeros (a buffer emptied since it was set)
        attached = {ev["array"] for ev in st.events if ev["kind"] == "grad_assign"}
        labels = {id(a): (st.arrays.get(id(a)) or {}).get("label") for a in arrays}
        seeds = [a for a in arrays if labels[id(a)] in written
                 and (labels[id(a)] in attached or np.any(np.asarray(_grad(a).numpy()) != 0))]
    else:
        want = r.cap.hand_seed_sites
        seeds = [a for a in arrays if r.site_of.get(id(a)) in want]
    return seeds


def _objective_at(r, loss, grads, n, tape=None):
    """(value, info) of the objective a backward differentiates, read before it runs."""
    with _quiet(r):
        hand = None
        if loss is None and not grads and tape is not None:
            hand = _hand_seeds(r, tape, n)
            if hand:
                grads = {a: _grad(a) for a in hand}
        if loss is not None and not grads:
            if not isinstance(loss, wp.array):
                raise _Limit(f"backward {n} was given loss={type(loss).__name__}, not a wp.array")
            if loss.size != 1:
                raise _Limit(f"backward {n} was called on a non-scalar array (shape {tuple(loss.shape)}) without "
                             f"seeds: Warp's Tape.backward(loss) needs a single-element loss. Reduce it to a scalar "
                             f"in the script, pass grads={{array: seed}}, or write a make_problem adapter")
            v = float(np.sum(np.asarray(loss.numpy(), dtype=np.float64)))
            return v, {"kind": "loss", "arrays": [loss], "seeds": None}
        if grads:
            total = 0.0
            arrays, seeds, pairs = [], [], []
            for y, s in grads.items():
                if not isinstance(y, wp.array) or not isinstance(s, wp.array):
                    raise _Limit(f"backward {n}: a grads={{...}} entry is not a pair of wp.array")
                yv = np.asarray(y.numpy(), dtype=np.float64)
                sv = np.asarray(s.numpy(), dtype=np.float64)
                if yv.size != sv.size:
                    raise _Limit(f"backward {n}: seed of shape {sv.shape} for an array of shape {yv.shape}")
                total += float(np.sum(yv.ravel() * sv.ravel()))
                pairs.append((yv.ravel().copy(), sv.ravel().copy()))  # numpy() of a CPU array is a view
                arrays.append(y)
                seeds.append({"sum": float(np.sum(sv)), "size": int(sv.size),
                              "constant": float(sv.ravel()[0]) if sv.size and np.all(sv == sv.ravel()[0]) else None,
                              "array_sum": float(np.sum(yv)), "array_mean": float(np.mean(yv)) if yv.size else None})
            wts = getattr(r.cap, "objective_weights", None)
            weighted = wts is not None and len(wts) == len(seeds)
            if weighted:
                # the loss the script reports: sum_i w_i * sum(array_i), not the seed-weighted sum
                total = float(sum(w * sd["array_sum"] for w, sd in zip(wts, seeds)))
            info = {"kind": "seeded", "arrays": arrays, "seeds": seeds}
            if not weighted:
                info["pairs"] = pairs  # (array values, seed values) of the seed-weighted sum, flat float64
            # the seed buffers as the backward will read them: the .grad set by hand, or the grads={...} values
            # (Warp attaches such a value itself as the .grad of an array that has none)
            info["buffers"] = [(s, _np(s)) for s in grads.values()]
            info["buffer_sites"] = [r.site_of.get(id(y)) for y in grads]
            if hand:
                info["hand"] = True
                info["hand_sites"] = [r.site_of.get(id(a)) for a in hand]
            return total, info
        raise _Limit(f"backward {n} was called without a loss or grads={{...}}, and no array written by a launch on "
                     f"its tape has a nonzero .grad set by hand: the backward has no seed. Pass the loss to "
                     f"backward(loss) or the seeds as grads={{array: seed}}, or write a make_problem adapter")


class CapturedProblem:
    """A Problem (docs/case-format.md) captured from a running script.

    Attributes
    ----------
    params : dict[str, wp.array]
        The script's own param arrays (the same objects in every re-run), at the
        values they held when the k-th iteration's tape started recording.
    stochastic : bool
        True when two re-runs at the same params gave different objectives.
    spec : ScriptSpec
    folder : pathlib.Path
    """

    def __init__(self, folder, spec: ScriptSpec, device: str = "cpu", timeout_s: float = DEFAULT_TIMEOUT_S):
        self.folder = Path(folder).resolve()
        self.spec = spec
        self.device = device
        self.timeout_s = float(timeout_s)
        self.iteration = spec.iteration  # the script's optimisation iteration modelled (from 1)
        self.k = spec.iteration  # the first backward of that iteration (set by the discovery run)
        self.inject_step = 0  # a re-run sets the params just before this hooked call (the iteration's start)
        self.obj_offsets = [0]  # backwards of the iteration (from k) whose objectives sum to the loss
        if spec.module:
            found = module_file(self.folder, spec.entry)
            if found is None:
                raise CaptureError(f"-m {spec.entry}: no such module under {self.folder}")
            self.entry = found
        else:
            entry = Path(spec.entry)
            self.entry = entry if entry.is_absolute() else self.folder / entry
        if not self.entry.is_file():
            raise CaptureError(f"{self.entry}: entry point not found (ScriptSpec.entry {spec.entry!r} is relative to "
                               f"{self.folder})")
        self.params = {}
        self.by_site = {}  # (file, line, occ) -> param name
        self.sites = {}  # name -> (file, line, occ)
        self.stochastic = False
        self.grad_after = self.k  # gradient() copies .grad after this backward (where the script first uses it)
        self.per_iteration = 1  # backwards per iteration of the script (grad_after - k + 1)
        self.carried = []  # params whose .grad the script carries into its next iteration (never zeroed)
        self.chain = None  # (point, calls so far) of consecutive gradient() calls at one point, when carried
        self.chain_short = None  # calls the script's own iterations could serve, when it ended first
        self.hand_seed_sites = set()  # sites of the arrays whose .grad the script sets by hand as the seeds
        self.stale_seed = False  # the hand-set seed buffer of backward k is reused, changed, at backward k+1
        self.objective_weights = None  # per seeded array: the weight of its sum in the reported loss
        self.objective_reduction = None  # "mean" | "sum": the reported loss of a single seeded array, when it
        # is identified from what the script prints and differs from the seed-weighted sum
        self.summary = {}
        self.reruns = []  # seconds per re-run
        self.seed_points = []  # [(params point, [seed values])] of the gradient() calls, for a seed-weighted sum
        self.max_seed_points = MAX_SEED_POINTS
        self._rel = {}

    # -- paths ------------------------------------------------------------------------
    def rel(self, fn: str) -> str:
        r = self._rel.get(fn)
        if r is None:
            p = os.path.abspath(fn)
            root = str(self.folder) + os.sep
            r = p[len(root):] if p.startswith(root) else p
            self._rel[fn] = r
        return r

    # -- running ------------------------------------------------------------------------
    def _execute(self, run: _Run, silent: bool = True):
        """Run the script once with ``run``'s hooks; returns (stdout text or None, stopped how)."""
        global _ACTIVE_RUN
        if _ACTIVE_RUN is not None:
            raise CaptureError("a capture run is already in progress in this process")
        argv, cwd, path0 = sys.argv[:], os.getcwd(), list(sys.path)
        main_mod = sys.modules.get("__main__")
        self._purge()
        sys.argv = [str(self.entry)] + list(self.spec.args)
        sys.path.insert(0, str(self.folder))
        run.deadline = time.perf_counter() + self.timeout_s
        out = io.StringIO()
        sink = out if silent else _Tee(out, sys.stdout)
        run.out = out
        run.err = io.StringIO()  # the script's stderr (an argparse usage error), kept as well as passed on
        err_sink = run.err if silent else _Tee(run.err, sys.stderr)
        old_alarm = None
        use_alarm = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
        saved = []
        error = None
        try:
            saved = _install(run)
            _ACTIVE_RUN = run
            if use_alarm:
                def on_alarm(signum, frame):
                    run.hang_at = _user_frame(run, frame)
                    raise _Timeout()
                old_alarm = signal.signal(signal.SIGALRM, on_alarm)
                signal.setitimer(signal.ITIMER_REAL, self.timeout_s)
            os.chdir(self.folder)
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(err_sink), \
                    wp.ScopedDevice(self.device):
                if self.spec.module:
                    runpy.run_module(self.spec.entry, run_name="__main__", alter_sys=True)
                else:
                    runpy.run_path(str(self.entry), run_name="__main__")
            run.stopped = run.stopped or "end"
        except _Stop:
            pass
        except _Timeout:
            error = ("timeout", None)
        except _Limit as exc:
            error = ("limit", exc)
        except SystemExit as exc:
            run.stopped = f"exit {exc.code}"
            run.exit_at = _tb_site(run, exc.__traceback__)
        except BaseException as exc:  # noqa: BLE001 - the script's own error
            error = ("raised", exc)
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                if old_alarm is not None:
                    signal.signal(signal.SIGALRM, old_alarm)
            _ACTIVE_RUN = None
            _restore(saved)
            os.chdir(cwd)
            sys.argv = argv
            sys.path[:] = path0
            if main_mod is not None:
                sys.modules["__main__"] = main_mod
        if error is not None and error[1] is not None:
            run.error_at = _tb_site(run, error[1].__traceback__)
        if error is not None and (run.kth is not None or (run.mode == "train" and run.losses)):
            # the script failed after the capture had what it needed (a plot, a video, a save at the end)
            kind, exc = error
            run.stopped = (f"{kind} after the needed backward" + (f": {type(exc).__name__}: {exc}" if exc else "")
                           + _at(getattr(run, "error_at", None)))
            error = None
        if error is not None:
            kind, exc = error
            what = _ordinal(self.k) + " Tape.backward()"
            if kind == "timeout":
                ran = (f"by then it had allocated {sum(run.counts.values())} array(s), entered {run.tapes} tape "
                       f"block(s)" + (f", made {run.launches} launch(es)" if run.mode == "discover" else "")
                       + f" and finished {run.backwards} backward(s)")
                at = getattr(run, "hang_at", None)
                if at is not None:
                    ran += f"; it was running {format_site(at[0], at[1])}" + (f" ({at[2]})" if at[2] else "")
                raise CaptureError(f"{self.spec.entry}: no {what} was reached in {self.timeout_s:g} s (the time "
                                   f"limit of one run of the script: diagnose and run give it 80% of --timeout, at "
                                   f"most --timeout less 10 s); {ran}. Make the run reach its backward sooner (fewer steps through "
                                   f"the script's own arguments after --), lower --iteration, give the capture "
                                   f"more time (--timeout), or write a make_problem adapter")
            at = getattr(run, "error_at", None)
            if kind == "limit":
                raise CaptureError(f"{self.spec.entry}: {exc}" + (f" (the call{_at(at)})" if at else "")) from None
            if isinstance(exc, KeyboardInterrupt):
                raise exc
            hint = _package_hint(self, exc)
            if hint:
                raise CaptureError(f"{self.spec.entry} raised {type(exc).__name__}{_at(at)}: {exc}. {hint}") from exc
            raise CaptureError(f"{self.spec.entry} raised {type(exc).__name__}{_at(at)}: {exc} (before the capture "
                               f"had what it needed from its {what})") from exc
        return out.getvalue(), run.stopped

    def _purge(self):
        """Forget the variant folder's own modules so a re-run imports them afresh (module-level state
        is then as in a fresh run; their kernels are found in the kernel cache), and those of every folder
        captured before in this process, so that a script importing ``model`` does not get another
        variant's ``model`` (two captures in one process: tests, a survey over a corpus)."""
        from ..paths import is_program_file

        _FOLDERS.add(self.folder)
        for name, mod in list(sys.modules.items()):
            f = getattr(mod, "__file__", None)
            # installed packages under the folder (a .venv next to the script) are not the user's modules:
            # purging NumPy from a venv there makes its re-import fail ("cannot load module more than once")
            if f and any(is_program_file(f, d) for d in _FOLDERS):
                del sys.modules[name]

    def _rerun(self, mode, n_train=0, chain=1):
        vals = {k: _np(a) for k, a in self.params.items()}
        run = _Run(self, mode, inject=vals, n_train=n_train)
        if chain > 1:
            per = self.per_iteration
            run.inject_after = {self.k - 1 + j * per for j in range(1, chain)}
            run.grad_target = self.grad_after + (chain - 1) * per
        t0 = time.perf_counter()
        _, stopped = self._execute(run)
        self.reruns.append(time.perf_counter() - t0)
        missing = [n for n in self.params if n not in run.found]
        if missing and mode != "train":
            raise CaptureError(f"{self.spec.entry}: the re-run did not allocate param(s) "
                               + ", ".join(f"{n} ({format_site(*self.sites[n])})" for n in missing)
                               + " again (allocated at import time of a module outside the variant folder, or the "
                                 "script allocates differently from run to run); name the params with --param or "
                                 "write a make_problem adapter")
        return run, stopped, vals

    def objective(self) -> float:
        """The loss the script computes at ``params``: its k-th backward's loss (or seed-weighted sum),
        read before that backward runs. Params are left unchanged.

        Raises
        ------
        CaptureError
            When the re-run does not reach its k-th backward.
        """
        run, stopped, vals = self._rerun("objective")
        self._restore(vals)
        if run.objective is None:
            raise CaptureError(f"{self.spec.entry}: the re-run ended ({stopped}) before its {_ordinal(self.k)} "
                               f"Tape.backward(); lower --iteration")
        return float(self._frozen_seed_objective(run, vals))

    def _note_seeds(self, run, point) -> None:
        """Keep the seeds of a gradient() call's k-th backward (a seed-weighted sum) with its point."""
        pairs = (run.k_info or {}).get("pairs")
        if pairs:
            self.seed_points.append((point, [sv.copy() for _, sv in pairs]))
            del self.seed_points[:-self.max_seed_points]

    def _frozen_seed_objective(self, run, point) -> float:
        """The k-th backward's objective at ``point`` (the run's params), with the seeds of a
        seed-weighted sum taken from the nearest point where gradient() ran.

        When the backward is seeded (``grads={y: s}`` or a ``.grad`` set by hand) and the reported
        objective is the seed-weighted sum ``s . y``, the gradient a backward returns at x0 is
        ``J(x0)^T s(x0)``. A script that computes the seed from the forward's output (the adjoint of
        its loss kernel launched by hand, ``2 (d - t) / N``: Warp's example_fluid_checkpoint.py)
        makes ``s`` a function of the params, and finite differences of ``s(x) . y(x)`` are not
        that gradient. Weighting ``y(x)`` with ``s(x0)`` is: ``d/dx [s(x0) . y(x)] = J(x0)^T s(x0)``
        at x0. x0 is the gradient() point nearest to ``point`` (Euclidean over all params); finite
        differences and sweeps sit within a step of one. With no gradient() call yet, or seeds that
        do not change with the params, the run's own seeds are used (the same value).

        What this checks is the tape's Jacobian, given the seeds: a seed the script computes wrongly
        (half the loss's adjoint) is the gradient of another function, and agrees here. Before, the
        seed-weighted sum disagreed on correct and wrong seeds alike (a bug verdict on Warp's own
        example); the capture's assumptions say that the seeds are not checked."""
        pairs = (run.k_info or {}).get("pairs")
        if not pairs or not self.seed_points:
            return run.objective

        def dist(p):
            return sum(float(np.sum((np.asarray(p[k], dtype=np.float64) - np.asarray(point[k], dtype=np.float64)) ** 2))
                       for k in point if k in p)

        _, seeds = min(self.seed_points, key=lambda e: dist(e[0]))
        if len(seeds) != len(pairs) or any(sv.shape != s0.shape for (_, sv), s0 in zip(pairs, seeds)):
            return run.objective
        if all(np.array_equal(sv, s0) for (_, sv), s0 in zip(pairs, seeds)):
            return run.objective
        if "frozen_seeds" not in self.summary:
            self.summary["frozen_seeds"] = True
            self.summary.setdefault("assumptions", []).append(
                "the backward's seeds change with the params (computed from the forward's output): objective() "
                "weights the seeded arrays with the seeds of the nearest point where gradient() ran, the function "
                "whose gradient the backward returns there; the seeds themselves are not checked against the loss "
                "the script reports (a wrong hand-computed seed is not seen)")
        return float(sum(float(np.sum(yv * s0)) for (yv, _), s0 in zip(pairs, seeds)))

    def gradient(self) -> dict:
        """The params' ``.grad`` right after the script's own k-th backward, copied at that moment,
        ``{name: ndarray of the param's numpy() shape}``. Params are left unchanged.

        When the script carries a param's ``.grad`` into its next iteration (the capture saw it
        nonzero when backward k+1 started, after the script had used it: ``carried``), repeated
        calls at the same point continue the script instead of restarting it: the m-th consecutive
        call at one point returns the ``.grad`` after the script's own m-th iteration from k, with
        the params set to the point again when each of those iterations' tape starts recording.
        What the script does with ``.grad`` between its iterations (zeroing nothing, zeroing part,
        scaling) is then in the result, as it would be in a loop that calls the gradient m times.
        A call at another point starts again from the k-th iteration. When the script ends (or
        starts no tape before a continued backward) first, the call returns the ``.grad`` after
        the last iteration it reached and ``chain_short`` records how many calls were served.

        Raises
        ------
        CaptureError
            When the re-run does not reach its k-th backward.
        """
        if not (self.carried or self.stale_seed):
            run, stopped, vals = self._rerun("gradient")
            self._restore(vals)
            if run.grad is None:
                raise CaptureError(f"{self.spec.entry}: the re-run ended ({stopped}) before its {_ordinal(self.k)} "
                                   f"Tape.backward() finished; lower --iteration")
            self._note_seeds(run, vals)
            return run.grad
        point = {k: _np(a) for k, a in self.params.items()}
        m = 1
        if self.chain is not None and all(np.array_equal(point[k], v) for k, v in self.chain[0].items()):
            m = self.chain[1] + 1
        run, stopped, vals = self._rerun("gradient", chain=m)
        self._restore(vals)
        if run.grad is None:
            raise CaptureError(f"{self.spec.entry}: the re-run ended ({stopped}) before its {_ordinal(self.k)} "
                               f"Tape.backward() finished; lower --iteration")
        if run.chain_reached < m:
            self.chain_short = run.chain_reached if self.chain_short is None else min(self.chain_short,
                                                                                      run.chain_reached)
            self.summary.setdefault("assumptions", []).append(
                f"gradient() call {m} at one point should continue the script to its {_ordinal(m)} iteration from "
                f"{self.k}, but the run stopped ({stopped}) after {run.chain_reached}: the call returned the .grad "
                f"after that iteration")
        self.chain = (point, m)
        self._note_seeds(run, vals)
        return run.grad

    def train(self, iterations: int) -> list:
        """Let the script run ``iterations`` iterations from ``params`` (its backwards k .. k+n-1 and the
        updates after them); return the loss at each of those backwards. ``params`` then hold the values
        the script reached (fewer losses when the script ends first).

        Parameters
        ----------
        iterations : int
            Backwards of the script's own loop, >= 1.
        """
        run, stopped, vals = self._rerun("train", n_train=max(1, int(iterations)))
        with _quiet():
            for name, P in self.params.items():
                latest = run.latest.get(self.sites[name][:2])
                if latest is not None and latest is not P and tuple(latest.shape) == tuple(P.shape):
                    wp.copy(P, latest)
        return [float(v) for v in run.losses]

    def _restore(self, vals):
        with _quiet():
            for name, v in vals.items():
                self.params[name].assign(v)

    def capture_summary(self) -> dict:
        """What was captured (see :func:`capture_problem`): ``entry``, ``args``, ``iteration``,
        ``params`` (``[{"name", "site", "dtype", "shape", "chosen_by"}]``), ``objective``
        (``{"kind": "loss"|"seeded", "description", "array_site", "produced_at", "kernel", "value",
        "seeds"}``), ``tapes``, ``launches``, ``backwards_seen``, ``rerun_s`` (median seconds of one
        re-run), ``capture_s``, ``stochastic`` (with ``stochastic_objectives``), ``candidates``
        (requires_grad leaves not chosen, and why), ``files`` (the script's own files that ran: the entry and the
        modules it loaded from its folder), ``assumptions`` (list of str), ``findings``
        (``[{"id", "classes", "detail", "data"}]``) and ``warp``."""
        s = dict(self.summary)
        if self.reruns:
            s["rerun_s"] = float(np.median(self.reruns))
        s["stochastic"] = bool(self.stochastic)
        return s


class _Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, s):
        for st in self.streams:
            st.write(s)
        return len(s)


def _consumed_since(st, seq) -> bool:
    """Whether the script used any gradient (a ``.grad`` read, ``.numpy()`` on one, one passed to a launch or
    a host copy) in the live trace ``st`` after event ``seq``."""
    if seq is None:
        return True
    grads = {rec["label"] for rec in st.arrays.values() if rec.get("grad_of") is not None}
    for ev in st.events[seq + 1:]:
        k = ev["kind"]
        if k in ("grad_read", "grad_numpy"):
            return True
        if k == "launch" and grads & set(ev.get("reads") or []):
            return True
        if k == "host" and ev.get("src") in grads:
            return True
    return False


def _consumed(events, label, start, stop, arrays=None):
    """How the script used the .grad of array ``label`` in ``events[start:stop]``: ``(sorted list of str,
    seq of the first use)``, or ``(None, None)``. A ``.grad`` read whose only use is zeroing or filling it
    does not count. ``arrays`` (the trace's array table) names the grad arrays known before
    (``tape.gradients[a]``)."""
    grads = {lab for lab, info in (arrays or {}).items() if info.get("grad_of") == label}
    how, zeroed, first = set(), False, None
    for ev in events[start:stop]:
        k = ev["kind"]
        use = None
        if k in ("grad_read", "grad_assign", "grad_numpy") and ev.get("array") == label:
            grads.add(ev["grad"])
            use = ".grad.numpy()" if k == "grad_numpy" else ".grad read"
        elif k == "grad_numpy" and ev.get("grad") in grads:
            use = ".grad.numpy()"
        elif k == "launch" and grads & set(ev.get("reads") or []):
            use = "passed to a launch"
        elif k == "host" and ev.get("src") in grads:
            use = f"wp.{ev['op']}"
        elif k == "host" and ev.get("dest") in grads and ev.get("op") in ("zero_", "fill_"):
            zeroed = True
        if use is not None:
            how.add(use)
            if first is None:
                first = ev["seq"]
    if not how or (how == {".grad read"} and zeroed):
        return None, None
    return sorted(how), first


def _carried(events, label, start, arrays, later_seeds=()):
    """Whether the .grad of ``label`` (or a copy of it) seeds a backward after ``start``: an adjoint handed
    from one window's tape to the previous one, not a parameter's gradient."""
    derived = {lab for lab, info in (arrays or {}).items() if info.get("grad_of") == label}
    for ev in events[start:]:
        if ev["kind"] in ("grad_read", "grad_numpy") and ev.get("array") == label:
            derived.add(ev["grad"])
        elif ev["kind"] == "host" and ev.get("src") in derived and ev.get("dest"):
            derived.add(ev["dest"])
        elif ev["kind"] == "backward" and any(sd.get("seed") in derived for sd in ev.get("seeds") or []):
            return True
    return bool(derived & set(later_seeds))


def _reachable(events, sinks, before):
    """Arrays from which one of ``sinks`` is reachable through the launches and host copies before ``before``."""
    needed = set(sinks)
    for ev, r, w in reversed(_trace._edges(events, before)):
        if w & needed:
            needed |= r
    return needed


def _var_name(path, line):
    """The assigned name on a source line ``NAME = ...`` (for a readable param key), else None."""
    try:
        with open(path) as f:
            text = f.readlines()[line - 1]
    except (OSError, IndexError):
        return None
    m = re.match(r"\s*(?:self\.)?([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)", text)
    return m.group(1) if m else None


def _assigns_list(path, line):
    """Whether source line ``line`` assigns a list built in place (``NAME = [...]``, a list comprehension), so
    that the n-th array allocated there is the list's element n - 1."""
    try:
        with open(path) as f:
            text = f.readlines()[line - 1]
    except (OSError, IndexError):
        return False
    return bool(re.match(r"\s*(?:self\.)?[A-Za-z_]\w*\s*(?::[^=]+)?=(?!=)\s*\[", text))


def _printed_losses(text):
    """Numbers on printed lines that mention a loss or an objective."""
    out = []
    for line in text.splitlines():
        if _LOSS_WORDS.search(line):
            for m in _NUM.finditer(line):
                tok = m.group(0)
                if "." in tok or "e" in tok.lower():
                    try:
                        out.append((float(tok), tok))
                    except ValueError:
                        pass
    return out


def _matches_printed(value, tok):
    x = float(tok)
    decimals = len(tok.split(".")[1].split("e")[0].split("E")[0]) if "." in tok else 0
    tol = max(PRINT_RTOL * max(abs(value), abs(x)), 0.5 * 10 ** (-decimals) if "e" not in tok.lower() else 0.0)
    return abs(value - x) <= tol


def _iteration_assumptions(cap) -> list:
    """What the capture assumed about the modelled iteration's bounds, in words (see :func:`capture_problem`)."""
    K, k, last = cap.iteration, cap.k, cap.grad_after
    out = []
    at = f" (before the launch at {format_site(*cap.inject_at)})" if getattr(cap, "inject_at", None) else ""
    start = "their allocation" if K == 1 else f"the update of iteration {K - 1}"
    out.append(f"iteration {K} runs from {start} to the update that consumes the params' .grad after backward "
               f"{last}: objective(p) re-runs the script to the iteration's start, sets the params to p there{at}, "
               f"before any launch of the iteration, taped or not, and reads the loss at its backward(s); "
               f"--iteration K models another iteration")
    if cap.per_iteration > 1:
        marks = getattr(cap, "iteration_marks", None) or []
        skipped = [f"backward {m['n']} ({m['why']})" for m in marks if not m["counted"]]
        out.append(f"iteration {K} calls backward {cap.per_iteration} times (backward {k} to {last}): gradient() "
                   f"is the params' .grad after the last of them, the sum the script's update consumes, and the "
                   f"objective is the sum of the losses of backward " + ", ".join(str(k + o) for o in cap.obj_offsets)
                   + (f"; not counted in it: {', '.join(skipped)}" if skipped else ""))
    return out


def _iteration_reads_writes(events, bK, w0, w1):
    """``(reads, writes, unrecorded copies)`` of one iteration: the arrays read by every launch and host copy
    between ``w0`` and ``w1`` (taped or not: work before ``with tape:`` that maps the params to an intermediate
    belongs to the iteration) and by the launches the iteration's tapes recorded; the arrays those recorded
    launches write, and those an unrecorded launch inside a tape block writes for a later recorded launch
    (a solver whose adjoint the script registers with ``tape.record_func``, as in Warp's
    example_fluid_checkpoint_custom_backward.py). ``wp.clone``/``wp.copy`` inside a tape block carry the
    params to the loss in the script's intent also when the tape does not record them (Warp 1.0.2 records
    none; 1.1.0 to 1.19.0 only one whose source and destination both have a ``.grad``): their source is read,
    their destination written, and the unrecorded ones are returned to be said in the assumptions."""
    reads, writes, unrecorded = set(), set(), []
    for e in events[w0:w1]:
        if e["kind"] == "launch":
            reads |= set(e["reads"])
        elif e["kind"] == "host" and e.get("src"):
            reads.add(e["src"])
    for bb in bK:
        T, E = bb["tape"], bb["epoch"]
        rec = [e for e in events[: bb["seq"]] if e["kind"] == "launch" and e["tape"] == T and e["epoch"] == E]
        reads |= {a for e in rec for a in e["reads"]}
        writes |= {a for e in rec for a in e["writes"]}
        last_reset = max([e["seq"] for e in events[: bb["seq"]] if e["kind"] == "tape_reset" and e.get("tape") == T]
                         or [-1])
        for e in events[: bb["seq"]]:
            if e["kind"] == "launch" and e.get("tape") is None and e.get("active_tape") == T and e["seq"] > last_reset:
                writes |= {a for a in e["writes"] if any(r["seq"] > e["seq"] and a in r["reads"] for r in rec)}
        for e in events[: bb["seq"]]:
            if e["kind"] != "host" or e.get("op") not in ("clone", "copy"):
                continue
            if e.get("tape") == T and e.get("epoch") == E:
                pass
            elif e.get("tape") is None and e.get("active_tape") == T and e["seq"] > last_reset:
                if e not in unrecorded:
                    unrecorded.append(e)
            else:
                continue
            if e.get("src"):
                reads.add(e["src"])
            if e.get("dest"):
                writes.add(e["dest"])
    return reads, writes, unrecorded


def _param_candidates(events, rec_arrays, objs, site_of, labels, needed, w1, run):
    """``(candidates, [])``: the requires_grad float arrays among ``labels``, each with ``why_not`` (None for a
    param: the loss depends on it, the script uses its ``.grad`` after the iteration's last backward at ``w1``,
    and that ``.grad`` seeds no later backward)."""
    candidates = []
    for lab in sorted(labels, key=_trace._label_key):
        info = rec_arrays.get(lab, {})
        o = objs.get(lab)
        if o is None or not info.get("float") or not bool(getattr(o, "requires_grad", False)):
            continue
        site = site_of.get(lab)
        why = None
        how, first = _consumed(events, lab, w1, len(events), rec_arrays)
        if lab not in needed:
            why = "the loss does not depend on it"
        elif how is None:
            why = "its .grad is not used after the backward"
        elif _carried(events, lab, w1 + 1, rec_arrays, run.stop_seeds):
            why = "its .grad seeds a later backward (an adjoint handed from one tape to another)"
        elif site is None:
            why = "its allocation was not seen (allocated before the script ran)"
        candidates.append({"label": lab, "site": site, "consumed": how, "first_use": first, "why_not": why, "obj": o})
    return candidates, []


def _override_params(spec, objs, site_of, used_labels, k):
    """The params named by ``--param`` sites (``spec.params``); CaptureError when a site allocates no array the
    iteration uses, or one without requires_grad."""
    chosen = []
    for want in spec.params:
        hit = [(lab, o) for lab, o in objs.items() if site_of.get(lab) and site_matches(want, *site_of[lab])]
        if not hit:
            # only arrays the iteration's launches used: a kernel's annotation `wp.array(dtype=...)` also
            # constructs an array (no data) at its `def` line, which is no allocation a user could mean
            used = sorted({site_of[lab] for lab in used_labels if site_of.get(lab)})
            seen = [format_site(*s) + (" (requires_grad)" if any(
                site_of.get(lab) == s and getattr(objs.get(lab), "requires_grad", False) for lab in used_labels)
                else "") for s in used][:16]
            raise CaptureError(f"{spec.entry}: --param {want}: the script allocates no array at "
                               f"{want} that the launches of iteration {spec.iteration} (from backward {k}) "
                               f"use (they use arrays allocated at: {', '.join(seen) or 'none seen'})")
        lab, o = hit[0]
        if not getattr(o, "requires_grad", False):
            raise CaptureError(f"{spec.entry}: --param {want}: the array allocated there has requires_grad=False")
        chosen.append({"label": lab, "site": site_of[lab], "consumed": None, "obj": o, "chosen_by": "--param"})
    return chosen


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
        For iteration 1: also check later iterations of the script's own loop
        (:func:`defects4warp.capture.screen.screen_iterations`, within
        :data:`SCREEN_BUDGET_FRACTION` of ``timeout_s``) and return the capture of
        the first later one whose gradient disagrees with a central difference
        when iteration 1's agrees; the summary's ``iterations`` says what was checked.

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
        run.by_label = _trace._ACTIVE.by_label if _trace._ACTIVE is not None else {}
        return cap._execute(run, silent=False)

    (text, stopped), tr = _trace.trace_call(go, params=None, digests=False)
    files = _program_modules(cap)
    kth = run.kth
    k = spec.iteration
    if kth is None:
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
    events = tr["events"]
    rec_arrays = tr["arrays"]
    backs = [e for e in events if e["kind"] == "backward"]
    itK = [m for m in run.marks if m["iteration"] == spec.iteration]
    k = cap.k = itK[0]["n"]
    cap.grad_after, cap.per_iteration = itK[-1]["n"], len(itK)
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
    needed = _reachable(events, sinks, w1)
    objs = _label_objects(tr, run)
    site_of = {lab: run.site_of.get(id(o)) for lab, o in objs.items()}
    candidates, chosen = _param_candidates(events, rec_arrays, objs, site_of, reads - writes, needed, w1, run)
    if spec.params:
        chosen = _override_params(spec, objs, site_of, reads | writes, k)
    else:
        chosen = [dict(c, chosen_by="capture") for c in candidates if c["why_not"] is None]
    if not chosen:
        cands = "; ".join(f"{format_site(*c['site']) if c['site'] else c['label']} ({c['why_not']})"
                          for c in candidates[:8]) or "none"
        raise CaptureError(f"{spec.entry}: no parameter found: no array with requires_grad=True is read in "
                           f"iteration {spec.iteration} (backward {k}" + (f" to {cap.grad_after}" if cap.grad_after > k
                                                                         else "")
                           + f" and the launches before them since the previous update), written by none of the "
                           f"launches its tapes recorded, and has its .grad used by the script afterwards "
                           f"(requires_grad leaves seen: {cands}). Name the params with --param FILE.py:LINE, or "
                           f"write a make_problem adapter")
    grads = {lab: info["grad_of"] for lab, info in rec_arrays.items() if info.get("grad_of") is not None}
    alloc = {c["label"]: run.alloc_steps[id(c["obj"])] for c in chosen if id(c["obj"]) in run.alloc_steps}
    cap.inject_step, first_read_step, first_read_seq = injection_step(
        events, w0, w1, [c["label"] for c in chosen], grads, run.step_seqs, alloc)
    cap.inject_at = run.launch_sites.get(first_read_seq) if first_read_seq is not None else None
    bad = [c for c in chosen if id(c["obj"]) in run.interop_ids]
    if bad:
        fn = ", ".join(sorted({f"wp.{a}" for a, _ in run.interop}))
        raise CaptureError(f"{spec.entry}: the param allocated at {format_site(*bad[0]['site'])} comes from or goes "
                           f"to another framework ({fn}): torch/JAX owns the loop and its gradients. Write a "
                           f"make_problem adapter around the Warp part")
    # names: the variable the allocation's line assigns, else the one its caller's line assigns (a helper
    # `return wp.array(...)`); params allocated one after another by one list statement are NAME[i]
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
    # the given point: the values when the k-th tape started recording
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
    cap.hand_seed_sites = {s for s in (kth.get("hand_sites") or []) if s is not None}
    cap.summary = _summary(cap, tr, run, b, chosen, candidates, text, stopped, objs, site_of)
    cap.summary["files"] = files
    for e in unrecorded:
        at = site_of.get(e.get("dest")) if e["op"] == "clone" else None
        src = site_of.get(e.get("src"))
        cap.summary["assumptions"].append(
            f"wp.{e['op']}" + (f" at {format_site(*at)}" if at else "") + " of the array allocated at "
            + (format_site(*src) if src else str(e.get("src"))) + f" ran inside the tape block of backward {k}, "
            f"but the tape does not record it (Warp {wp.config.version}; Warp 1.0.2 records no copy, later releases "
            f"only one whose source and destination both have a .grad): no adjoint flows back through it, as in "
            f"the script")
    cap.carried = [f["data"]["param"] for f in cap.summary["findings"] if f["id"] == "grad_carried"]
    if cap.carried:
        cap.summary["assumptions"].append(
            f"the script carries the .grad of {', '.join(cap.carried)} into its next iteration: repeated "
            f"gradient() calls at one point continue the script (call m returns the .grad after its m-th "
            f"iteration from {k}, the params set to the point when each iteration's tape starts)")
    cap.summary["capture_s"] = time.perf_counter() - t0
    mism = [f for f in cap.summary["findings"] if f["id"] == "seed_objective_mismatch"]
    if mism and cap.objective_weights is None and len(kth["seeds"]) >= 2:
        _fit_reported_weights(cap, mism[0])
    if cap.objective_weights is not None:
        run.objective = float(sum(w * sd["array_sum"] for w, sd in zip(cap.objective_weights, kth["seeds"])))
        cap.summary["objective"]["value"] = run.objective
    if check_determinism:
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
    if screen and spec.iteration == 1 and not cap.stochastic:
        return _screened(cap, folder, spec, device, timeout_s)
    return cap


#: Share of the capture's time limit the look along the trajectory may take (counting run and later captures).
SCREEN_BUDGET_FRACTION = 0.5


def _count_iterations(cap, budget_s):
    """Length of the script's loop in iterations: one untraced run to its end (within ``budget_s``) counting
    backward calls, divided by the backwards per iteration; a lower bound when the budget ends the run."""
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
            f"iteration 1's gradient agrees with a central difference and iteration {chosen.iteration}'s does not "
            f"(iterations that disagree: {', '.join(map(str, bad))}): the problem is iteration {chosen.iteration} "
            f"of the script's own loop (--iteration 1 to diagnose the first)")
    return chosen


#: Observations (re-runs to the first loss the script prints after its k-th backward) beyond the number of
#: seeded arrays when the weights of the reported loss are fitted, and the relative perturbation of their points.
WEIGHT_FIT_EXTRA = 3
WEIGHT_FIT_PERTURB = 0.1


def _first_printed_loss(text):
    """(value, token) of the first number after a loss word on the first line that has one, else None."""
    for line in text.splitlines():
        m = _LOSS_WORDS.search(line)
        if not m:
            continue
        for t in _NUM.finditer(line, m.end()):
            tok = t.group(0)
            if "." in tok or "e" in tok.lower():
                return float(tok), tok
    return None


def _printed_digits_tol(tok: str) -> float:
    """Half a unit in the last digit of a printed number (``"1.234e-02"`` -> 5e-06, ``"8.568925"`` -> 5e-07),
    plus 1e-9 relative for the float arithmetic behind it."""
    mant, _, exp = tok.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    unit = 10.0 ** (-decimals) * (10.0 ** int(exp) if exp else 1.0)
    return 0.5 * unit + 1e-9 * abs(float(tok))


def _fit_reported_weights(cap, finding, extra=WEIGHT_FIT_EXTRA, perturb=WEIGHT_FIT_PERTURB):
    """Weights ``w_i`` with ``printed loss = sum_i w_i * sum(array_i)`` over the arrays seeded at the k-th backward
    (or, for a loss printed after the update, at the next backward), from the first loss the script prints after
    that backward at ``len(seeds) + extra`` points (the given one and
    points ``x0 + perturb * (|x0| + 0.1 max|x0|) * N(0, 1)``, seed 0). Accepted only when the fit reproduces every
    printed value to the digits printed (:func:`_printed_digits_tol`); each weight is then, in turn, set to its seed's
    constant, ``1 / size`` or 1, else rounded to the fewest significant digits, where that still reproduces them. Sets ``cap.objective_weights`` and
    records the fit on the capture summary and on ``finding``; leaves everything as it was when the fit fails."""
    x0 = {k: _np(a) for k, a in cap.params.items()}
    rng = np.random.default_rng(0)
    rows, printed, meta = [], [], None
    want = len(cap.summary["objective"].get("seeds") or []) + extra
    try:
        for j in range(want):
            if j > 0:
                with _quiet():
                    for k, v in x0.items():
                        sc = np.abs(v) + 0.1 * (float(np.max(np.abs(v))) if v.size else 0.0)
                        cap.params[k].assign((v + perturb * sc * rng.standard_normal(v.shape)).astype(v.dtype))
            run, stopped, vals = cap._rerun("observe")
            if run.kth is None or run.kth.get("kind") != "seeded":
                return
            got = _first_printed_loss(run.out.getvalue()[run.out_mark or 0:])
            if got is None:
                return
            meta = run.kth["seeds"]
            nxt = (run.next_info or {}).get("seeds")
            rows.append(([sd["array_sum"] for sd in meta],
                         [sd["array_sum"] for sd in nxt] if nxt and len(nxt) == len(meta) else None))
            printed.append(got)
    finally:
        cap._restore(x0)
    P = np.array([v for v, _ in printed])
    A = w = None
    # the printed loss is of the k-th backward's point, or of the next backward's (printed after the update);
    # a fit must reproduce every printed value to the digits printed (:func:`_printed_digits_tol`)
    tol = np.array([_printed_digits_tol(tok) for _, tok in printed])
    for which in (0, 1):
        if any(r[which] is None for r in rows):
            continue
        A_try = np.array([r[which] for r in rows], dtype=np.float64)
        if np.linalg.matrix_rank(A_try) < A_try.shape[1]:
            continue
        w_try = np.linalg.lstsq(A_try, P, rcond=None)[0]
        if np.all(np.abs(A_try @ w_try - P) <= tol):
            A, w = A_try, w_try
            break
    if w is None:
        return

    def fits(ws):
        return bool(np.all(np.abs(A @ ws - P) <= tol))

    def solve(fixed):
        """The weights with ``fixed`` ({index: value}) held and the others fitted by least squares."""
        ws = np.zeros(A.shape[1])
        free = [i for i in range(A.shape[1]) if i not in fixed]
        for i, v in fixed.items():
            ws[i] = v
        if free:
            ws[free] = np.linalg.lstsq(A[:, free], P - A @ ws, rcond=None)[0]
        return ws

    # each weight in turn: its seed's constant, 1 / size or 1, else the shortest decimal, the first that still
    # reproduces every print with the weights not yet chosen fitted again
    fixed = {}
    for i, sd in enumerate(meta):
        simple = [c for c in (sd["constant"], 1.0 / sd["size"] if sd["size"] else None, 1.0) if c is not None]
        for c in simple + [float(f"{w[i]:.{d - 1}e}") for d in range(1, 8)]:
            trial = solve({**fixed, i: c})
            if fits(trial):
                fixed[i] = c
                w = trial
                break
    seeded = [sd["constant"] if sd["constant"] is not None else sd["sum"] / max(sd["size"], 1) for sd in meta]
    cap.objective_weights = [float(x) for x in w]
    obj = cap.summary["objective"]
    obj["reported"] = "weighted"
    obj["weights"] = cap.objective_weights
    obj["description"] = ("the loss the script prints, sum_i w_i * sum(array_i) over the arrays seeded at the "
                          f"{_ordinal(cap.k)} backward with w = " + ", ".join(f"{x:.6g}" for x in w)
                          + f" (fitted to the printed loss at {len(P)} points); the backward seeds "
                          + ", ".join(f"{x:.6g}" for x in seeded))
    finding["data"]["weights"] = cap.objective_weights
    finding["data"]["seeded_weights"] = seeded
    finding["detail"] += (f"; the printed loss is sum_i w_i * sum(array_i) with w = "
                          + ", ".join(f"{x:.6g}" for x in w) + " where the seeds weight "
                          + ", ".join(f"{x:.6g}" for x in seeded))
    assumptions = cap.summary["assumptions"]
    assumptions[:] = [a for a in assumptions if not a.startswith("the objective is the seed-weighted sum")]
    assumptions.append(f"the objective is the loss the script prints, fitted as a weighted sum of the seeded arrays' "
                       f"sums at {len(P)} points (it matches every printed value; the seed-weighted sum does not)")


def _program_modules(cap) -> list:
    """The script's own files that ran in the discovery run: the entry point and every module loaded from the
    variant folder (outside installed packages, environments and hidden folders), relative to the folder, sorted.
    Sibling scripts that were never imported and vendored package copies the script did not load are not in it."""
    from ..paths import is_program_file

    out = {cap.rel(str(cap.entry))}
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if f and f.endswith(".py") and is_program_file(f, cap.folder):
            out.add(cap.rel(os.path.abspath(f)))
    return sorted(out)


def _label_objects(tr, run):
    """Trace label -> array object, from the recorder the discovery run kept."""
    return dict(getattr(run, "by_label", {}) or {})


def _summary(cap, tr, run, b, chosen, candidates, text, stopped, objs, site_of):
    events = tr["events"]
    k = cap.k
    kernels = tr.get("kernels") or {}
    targets = [s["target"] for s in b["seeds"] if s["target"]]

    def produced(lab):
        for ev in reversed(events[: b["seq"]]):
            if ev["kind"] == "launch" and lab in ev["writes"]:
                kinfo = kernels.get(ev["kernel"], {})
                at = run.launch_sites.get(ev["seq"])
                return {"launch_site": format_site(*at) if at else None, "kernel": kinfo.get("name", ev["kernel"]),
                        "kernel_file": cap.rel(kinfo["file"]) if kinfo.get("file") else None,
                        "kernel_line": (kinfo.get("lines") or [None])[0]}
        return None

    info = run.kth
    obj = {"kind": info["kind"], "value": run.objective}
    arrays = []
    for lab in targets:
        st = site_of.get(lab)
        arrays.append({"array_site": format_site(*st) if st else None, "shape": tr["arrays"].get(lab, {}).get("shape"),
                       "dtype": tr["arrays"].get(lab, {}).get("dtype"), "produced_by": produced(lab)})
    obj["arrays"] = arrays
    first = arrays[0] if arrays else {}
    pb = first.get("produced_by") or {}
    obj["produced_at"] = pb.get("launch_site")
    obj["kernel"] = pb.get("kernel")
    if info["kind"] == "loss":
        obj["description"] = (f"the array passed to backward(loss) at the {_ordinal(k)} backward "
                              f"(allocated at {first.get('array_site')})")
    else:
        obj["seeds"] = info["seeds"]
        obj["description"] = ("the seed-weighted sum sum(seed * array) over the "
                              + (".grad set by hand before the " if info.get("hand") else "grads={...} of the ")
                              + f"{_ordinal(k)} backward: " + ", ".join(
                                  f"{a['array_site']} (seed " + (f"{s['constant']:g}" if s['constant'] is not None
                                                                 else f"sum {s['sum']:g}") + ")"
                                  for a, s in zip(arrays, info["seeds"])))
    findings, assumptions = [], []
    if info["kind"] == "seeded":
        printed = _printed_losses(text)
        mine = [v for v in (run.objective, run.next_objective) if v is not None]
        if printed and not any(_matches_printed(v, tok) for v in mine for _, tok in printed):
            vals = [v for v, _ in printed][:10]
            alt = None
            s0 = info["seeds"][0]
            # the printed loss at the k-th backward's point, or at the next backward's (a loss printed after
            # the update, from a forward at the new params)
            n0 = ((run.next_info or {}).get("seeds") or [None])
            nxt_seed = n0[0] if len(n0) == 1 else None
            if len(info["seeds"]) == 1 and s0["constant"] is not None:
                for red in ("array_mean", "array_sum"):
                    cands = [sd.get(red) for sd in (s0, nxt_seed) if sd is not None]
                    if any(v is not None and _matches_printed(v, tok) for v in cands for _, tok in printed):
                        alt = red.split("_")[1]
                        break
            if alt is not None:
                cap.objective_reduction = alt
                cap.objective_weights = [1.0 / s0["size"] if alt == "mean" else 1.0]
                obj["reported"] = alt
                obj["description"] = (f"the {alt} of the array seeded at the {_ordinal(k)} backward "
                                      f"({arrays[0]['array_site']}): the loss the script prints; the backward "
                                      f"differentiates the seed-weighted sum instead")
            findings.append({
                "id": "seed_objective_mismatch", "classes": ["seed_mismatch"],
                "detail": (f"backward {k} is seeded so that it differentiates {run.objective:.6g} (the seed-weighted "
                           f"sum), but the loss the script prints is {', '.join(f'{v:.6g}' for v in vals[:3])}"
                           + (f", the {alt} of the seeded array" if alt else "")),
                "data": {"weighted_sum": run.objective, "printed": vals, "matches": alt}})
        if cap.objective_reduction is None:
            assumptions.append("the objective is the seed-weighted sum of the arrays seeded by grads={...} "
                               "(the function whose gradient that backward computes)")
        else:
            assumptions.append(f"the objective is the loss the script prints, the {cap.objective_reduction} of "
                               f"the seeded array (it matches the printed value; the seed-weighted sum does not)")
    nxt = run.next_info or {}
    for (buf, before), a_site in zip(info.get("buffers") or [], info.get("buffer_sites") or []):
        for buf2, now in nxt.get("buffers") or []:
            if buf2 is buf and not np.array_equal(before, now):
                cap.stale_seed = True
                where = format_site(*a_site) if a_site else "?"
                findings.append({
                    "id": "seed_buffer_reused", "classes": ["stale_gradient_read"],
                    "detail": (f"the seed buffer of the array allocated at {where} "
                               + ("(its .grad set by hand) " if info.get("hand") else "(a grads={...} value) ")
                               + f"seeds backward {k} and the same buffer, changed since (sum {float(np.sum(before)):.6g} -> "
                               f"{float(np.sum(now)):.6g}), seeds backward {k + cap.per_iteration}: the next "
                               f"iteration reads what this one left in it"),
                    "data": {"array_site": where, "seed_sum_before": float(np.sum(before)),
                             "seed_sum_next": float(np.sum(now))}})
    if cap.stale_seed:
        assumptions.append(f"the seed buffer of backward {k} is reused, changed, by the next iteration: repeated "
                           f"gradient() calls at one point continue the script (call m returns the .grad after its "
                           f"m-th iteration from {k}, the params set to the point when each iteration's tape starts)")
    if run.next_backward_grads:
        for c in chosen:
            g = run.next_backward_grads.get(id(c["obj"]))
            if g is not None and np.any(g != 0) and c.get("consumed"):
                findings.append({
                    "id": "grad_carried", "classes": ["missing_tape_zero"],
                    "detail": (f"the .grad of param {c['name']} ({format_site(*c['site'])}) is used after backward "
                               f"{k} and still nonzero when backward {k + 1} starts: nothing zeroed it, so the next "
                               f"iteration's gradient adds onto the old one"),
                    "data": {"param": c["name"], "grad_sum": float(np.sum(g))}})
    params = []
    for c in chosen:
        a = c["obj"]
        params.append({"name": c["name"], "site": format_site(*c["site"]), "file": c["site"][0], "line": c["site"][1],
                       "occurrence": c["site"][2], "dtype": _dtype(a.dtype), "shape": [int(s) for s in a.shape],
                       "chosen_by": c.get("chosen_by"), "grad_used_by": c.get("consumed")})
    if any(c.get("chosen_by") == "capture" for c in chosen):
        assumptions.append("params: the requires_grad arrays the recorded launches read and never write, that the "
                           "loss depends on, and whose .grad the script uses after the backward (override with "
                           "--param FILE.py:LINE)")
    assumptions.extend(_iteration_assumptions(cap))
    if stopped and " after the needed backward" in stopped:
        assumptions.append(f"the script stopped with an exception after backward {k} ({stopped.split(': ', 1)[-1]}"
                           f"): the capture stopped at that exception, with what it needed from backward {k}")
    other = [{"site": format_site(*c["site"]) if c["site"] else None, "why_not": c["why_not"]}
             for c in candidates if c["why_not"] is not None]
    return {
        "entry": cap.spec.entry, "args": list(cap.spec.args), "iteration": cap.iteration, "first_backward": k,
        "backwards_per_iteration": cap.per_iteration, "objective_backwards": [k + o for o in cap.obj_offsets],
        "params_set_at": format_site(*cap.inject_at) if getattr(cap, "inject_at", None) else None,
        "device": cap.device,
        "params": params, "objective": obj,
        "tapes": len(tr.get("tapes") or {}),
        "launches": sum(1 for e in events[: b["seq"]] if e["kind"] == "launch"),
        "recorded_launches": sum(1 for e in events[: b["seq"]] if e["kind"] == "launch" and e["tape"] == b["tape"]
                                 and e["epoch"] == b["epoch"]),
        "backwards_seen": sum(1 for e in events if e["kind"] == "backward"),
        "gradient_after_backward": cap.grad_after,
        "stopped": stopped,
        "candidates": other,
        "assumptions": assumptions,
        "findings": findings,
        "interop": sorted({f"wp.{a}" for a, _ in run.interop}),
        "warp": str(wp.config.version),
    }
