"""State of one run of the script under the capture: limits, internal reads, the :class:`_Run` record.

The base of the capture's phases (imports no other capture module but :mod:`.iteration`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

import numpy as np
import warp as wp

from ..measure import trace as _trace
from .iteration import ValueSnapshots
from .spec import format_site


#: Default wall-clock limit of one run of the script, seconds (discovery and each re-run).
DEFAULT_TIMEOUT_S = 120.0


#: Relative difference between two re-runs' objectives at the same params above which the
#: script is stochastic (the determinism probe's threshold, harness/probes/determinism.py).
JITTER_RTOL = 1e-6


#: Backwards the discovery run follows past the k-th one while the script has not used a gradient yet
#: (a loss assembled over several backwards: windows, a repeated backward) before it stops.
MAX_EXTRA_BACKWARDS = 64


_HERE = os.path.dirname(os.path.abspath(__file__))


_HARNESS = os.path.dirname(_HERE) + os.sep


_WARP = os.path.dirname(os.path.abspath(wp.__file__)) + os.sep


_INTEROP = ("from_torch", "to_torch", "from_jax", "to_jax", "from_paddle", "to_paddle", "from_dlpack", "to_dlpack")


#: gradient() points whose backward seeds a capture keeps (the most recent), for objective()'s
#: frozen seeds (:meth:`CapturedProblem._frozen_seed_objective`): the FD probe and the sweep work at
#: two points (the given and a perturbed one), so a few suffice.
MAX_SEED_POINTS = 8


#: Backwards the discovery run follows past the first backward of the next iteration (as first classified)
#: to see whether the updates that ended the modelled iteration belong to an inner solve (an iterate the
#: script starts afresh at each outer iteration); see :func:`defects4warp.capture.hooks._discover_backward`.
#: Inner solves (a settle, an IK) commonly take tens to hundreds of steps before the outer update, so the
#: bound is mostly the time one below; a solve longer than this before the outer update is modelled as
#: before (its iterate taken for the params) unless its updates happen while the outer tape records.
LOOKAHEAD_BACKWARDS = 256


#: Share of the discovery run's time up to that first backward the look ahead may take, and its floor in seconds.
#: The floor is a guard for slow programs, not the usual bound: a wall-clock bound makes the model depend on the
#: machine's load and on whether the kernels were cached (a 1 s floor cut a 3 x 120-step settle short on a busy
#: machine and took the settle's iterate for the params, 2026-12-04); 256 backwards of a small program take well
#: under 10 s, so for them the bound is the count above. When time cuts the look ahead the assumptions say so.
LOOKAHEAD_FRACTION = 0.5
LOOKAHEAD_MIN_S = 10.0


#: Bounds of the look ahead while every array updated so far was started afresh after its updates and no other
#: array was updated (:func:`defects4warp.capture.iteration.restarted_alone`): the look so far has seen only an
#: inner solve (one per outer iteration, or two: a state and an adjoint solve), whose outer update is still to
#: come. A training loop never restarts its params, so it never pays for these. Measured 2026-12-05: an
#: identification script with two 150-step settles per outer iteration (301 backwards) took each settle's
#: iterate for the params under the 256-backward bound. One settle per iteration longer than the usual bound
#: shows no restart before the outer update and is still taken for the optimisation iteration.
LOOKAHEAD_RESTARTED_BACKWARDS = 4096
LOOKAHEAD_RESTARTED_MIN_S = 60.0


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


def _ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


@contextlib.contextmanager
def _quiet(run=None):
    """Internal reads and writes: invisible to the runtime trace and to the capture's own hooks."""
    st = run.trace if run is not None else _trace.active("trace")
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

    ``mode``: ``discover`` | ``objective`` | ``gradient`` | ``train`` | ``observe`` | ``count`` | ``term`` (the
    loss of one earlier backward, ``term_n``, with the params set at its iteration's start, ``inject_step_at``) |
    ``point`` (the params' own values where a re-run sets them, then stop).
    """

    def __init__(self, cap, mode, inject=None, n_train=0, deadline=None):
        self.cap = cap
        self.mode = mode
        self.k = cap.k if mode != "discover" else None  # first backward of the modelled iteration
        self.inject = inject or {}  # param name -> ndarray to set at the k-th tape start
        self.n_train = n_train
        self.deadline = deadline
        self._init_tracking()
        self._init_backward_infos()
        self._init_steps_and_bounds()

    def _init_tracking(self):
        """Returns None; sets the run's allocation tracking, its injection schedule and its results, all empty
        (part of :meth:`__init__`, in the order the attributes were always set)."""
        self.counts = {}  # (file, line) -> constructions seen
        self.site_of = {}  # id(array) -> (file, line, occ)
        self.keep = []  # arrays kept alive so their ids stay valid
        self.rg = []  # arrays with requires_grad, in construction order
        self.latest = {}  # (file, line) -> last array constructed there
        self.depth = 0
        self.quiet = 0
        self.in_force = False  # True while this run's wrappers are installed (CapturedProblem._execute)
        self._trace_state = None  # the runtime trace recording this run (bind_trace), if one is
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

    def _init_backward_infos(self):
        """Returns None; sets the per-backward infos, the interop and launch bookkeeping and the output marks,
        all empty (part of :meth:`__init__`, after :meth:`_init_tracking`)."""
        self.snap = {}  # discovery: id(array) -> values at the k-th tape start (or at allocation after it)
        self.kth = None  # discovery: info about the k-th backward
        self.k_info = None  # every mode: _objective_at's info for the k-th backward of this run
        self.point = None  # point mode: {param name: values} where the params are set
        self.clone_src = None  # the source array of the wp.clone in progress (its allocation copies it)
        self.inject_step_at = None  # term mode: the hooked call before which the params are set (else cap's)
        self.term_n = None  # term mode: the backward whose loss is read (an earlier iteration's cached term)
        # re-runs: offset from k -> _objective_at's info, for each counted backward of the iteration
        self.term_infos = {}
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

    def _init_steps_and_bounds(self):
        """Returns None; sets the hooked-call counts, the discovery run's iteration bounds and cut, the run's
        start time and the gradient mode's consumption state (part of :meth:`__init__`, last)."""
        # hooked calls (launch, copy, clone, tape start, backward, allocation) counted alike in every run: a re-run
        # sets the params just before call ``cap.inject_step`` (the start of the modelled iteration)
        self.steps = 0
        self.step_seqs = []  # discovery: trace length when each hooked call began
        self.alloc_steps = {}  # discovery: id(array) -> index of the hooked call that allocated it
        self.alloc_seqs = []  # discovery: (trace length, shape, in a tape block, clone source label) per requires_grad
        # allocation
        self.iteration = 1  # discovery: the script's optimisation iteration the run is in
        self.marks = []  # discovery: per backward call {n, iteration, seq, tape, epoch, counted, why}
        self.iter_start_seq = {}  # discovery: iteration -> seq just after the last backward of the one before
        self.inner_updates = []  # discovery: updates inside an open outer recording (no iteration bound)
        self.nested = set()  # discovery: allocation sites (file, line) of inner-solve iterates (no iteration bound)
        self.recorded_updates = set()  # discovery: labels of arrays an update wrote inside a tape block
        self.alloc_site_seqs = {}  # discovery: (file, line) -> trace lengths at its requires_grad allocations
        self.stop_state = {}  # discovery: backward n -> state at a provisional first backward of iteration K+1
        self.look_t0 = None  # discovery: when the look past the first provisional stop began
        self.look_cut = None  # discovery: backwards looked past it when the time bound (not the count) ended it
        self.restarted = None  # discovery: restarted_alone() where the usual look-ahead bound was reached
        self.per_next = None  # discovery: backwards of iteration K+1, when the look saw iteration K+2 begin
        self.script_inits = 0  # discovery: the script's own wp.init() calls
        self.t0 = time.perf_counter()
        self.cut_at = None  # discovery: the backward where the run's record ends (set when no iteration K+1)
        self.cut_seq = None  # discovery: trace length at the first backward of iteration K+1 (record cut there)
        self.cut_out = None  # discovery: stdout length there
        self.values = ValueSnapshots()
        self.iter_value = 0.0  # the objective summed over the counted backwards of the current iteration
        self.first_injected = False
        self.grad_last = 0  # gradient mode: the backward after which .grad was last read
        self.hook_depth = 0  # hooked calls in progress: the calls they make are not counted
        # gradient mode: params whose gradient is read where the update consumes it (cap.consume), still to read
        self.consume_wait = {}
        self.consume_numpy = {}
        self.consume_missed = []  # params whose consumption the re-run did not meet where the discovery run did  # param name -> values a .numpy() of its gradient array returned in the window
        self.grad_backward = None  # gradient mode: the params' .grad right after the iteration's last backward

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

    def site_resets(self, events) -> dict:
        """``{(file, line): [seq]}``: where the arrays allocated at a site were started afresh in the discovery
        run: each ``requires_grad`` allocation there, and each ``zero_``/``fill_`` of such an array."""
        out = {k: list(v) for k, v in self.alloc_site_seqs.items()}
        st = self.trace
        if st is None:
            return out
        for ev in events:
            if ev["kind"] == "host" and ev.get("op") in ("zero_", "fill_") and ev.get("dest"):
                obj = st.by_label.get(ev["dest"])
                at = self.site_of.get(id(obj)) if obj is not None else None
                if at is not None and getattr(obj, "requires_grad", False):
                    out.setdefault(tuple(at[:2]), []).append(ev["seq"])
        return out

    # -- the trace recording the run ----------------------------------------------
    def bind_trace(self, st) -> None:
        """Make ``st`` (a :class:`defects4warp.measure.trace_state._Recorder`, or None) the trace this
        run reads its events from: the one in force when the run starts
        (:func:`defects4warp.measure.patches.active`)."""
        self._trace_state = st

    @property
    def trace(self):
        """The bound trace while it is still recording, else None (a trace that ended records nothing
        more, as when no trace is in force)."""
        st = self._trace_state
        return st if st is not None and st.tracing else None

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
            st = self.trace
            self.step_seqs.append(len(st.events) if st is not None else 0)
        elif not self.first_injected and self.steps == (self.inject_step_at if self.inject_step_at is not None
                                                         else self.cap.inject_step):
            self.do_inject()
        if self.consume_wait:
            self.read_consumed()
        self.steps += 1

    # -- the gradient where the update consumes it -------------------------------------
    def consumed_array(self, name, spec):
        """The array holding param ``name``'s gradient as the update reads it: its ``.grad`` (``spec["is_grad"]``),
        or the array allocated at ``spec["array_site"]`` (a copy, a buffer of summed gradients) most recently; None
        if absent. ``spec`` is a consume spec or one of its ``summed`` entries."""
        P = self.cap.params[name]
        if spec["is_grad"]:
            return _grad(P)
        want = spec["array_site"]
        for a in reversed(self.keep):
            if self.site_of.get(id(a)) == want:
                return a
        return None

    def read_consumed(self):
        """At hooked call ``self.steps`` (before it runs): read the gradients consumed by this call (``offset`` 0)
        or by a ``.numpy()`` since the previous call (``offset`` 1); raise :class:`_Stop` when none is left."""
        for name, spec in list(self.consume_wait.items()):
            if self.steps != spec["step"] + spec["offset"]:
                continue
            del self.consume_wait[name]
            if spec["offset"] == 0 and spec.get("site") is not None and tuple(self.site()) != tuple(spec["site"][:2]):
                self.consume_missed.append(name)  # another call than the discovery run's update: keep the .grad
                continue
            with _quiet(self):
                vals = self.consume_numpy.pop(name, None)
                if vals is None and spec.get("summed"):
                    # the update adds several gradient arrays (a cached prior's gradient and the data term's)
                    parts = [self.consumed_array(name, part) for part in spec["summed"]]
                    vals = None if any(a is None for a in parts) else sum(_np(a) for a in parts)
                elif vals is None:
                    a = self.consumed_array(name, spec)
                    vals = None if a is None else _np(a)
                if vals is not None and vals.shape == self.grad[name].shape:
                    self.grad[name] = vals
                else:
                    self.consume_missed.append(name)
        if not self.consume_wait:
            self.stopped = "gradient"
            raise _Stop()

    def note_numpy(self, arr, values):
        """A ``.numpy()`` call of the script returned ``values`` for ``arr``: kept when ``arr`` holds a param's
        gradient that the update consumes through ``.numpy()`` after the current hooked call."""
        for name, spec in self.consume_wait.items():
            if spec["offset"] == 1 and self.steps == spec["step"] + 1:
                with _quiet(self):
                    if self.consumed_array(name, spec) is arr:
                        self.consume_numpy[name] = np.array(values, copy=True)

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
            if self.mode == "point":
                # the script's own values of the params where a re-run sets them
                self.point = {name: _np(a) for name, a in self.found.items()}
                self.first_injected = True
                self.stopped = "point"
                raise _Stop()
            st = self.trace
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


