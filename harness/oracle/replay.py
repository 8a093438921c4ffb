"""The oracle's own replay of a training script: a Problem from a *replay record*.

A script variant has no ``problem.py``: its Problem is the k-th optimisation iteration of the user's script
(docs/diagnose.md, "The iteration"). Which arrays are the params, where that iteration starts, which
backwards carry its loss and where the update takes the gradient over is the capture's reading of the
script; the orchestration hands it to the oracle as data (``defects4warp.capture.record``: the record's
fields are listed in docs/oracle.md, "Script variants"). This module runs the script itself, with its own
small instrumentation of Warp's public API, and shares no code with the capture or the engine: it imports
the standard library, NumPy, Warp and :mod:`defects4warp.paths` only.

Counted calls
    The record places events by counting the script's *calls*: ``wp.launch``, ``wp.copy``, ``wp.clone``,
    ``wp.array.assign`` / ``zero_`` / ``fill_``, ``Tape.__enter__``, ``Tape.backward`` and each
    ``wp.array`` constructed with ``requires_grad=True``, made by the script itself (a call made while
    another counted call or an array construction is running is not counted), numbered from 0 in the order
    they start.
Allocation sites
    Each ``wp.array`` the script constructs (not one constructed inside another's construction) is named
    ``(file, line, occurrence)``: the innermost frame outside Warp and this package (the file relative to
    the variant folder) and the count of constructions at that line so far in the run.

One run of the script (``runpy`` as ``__main__`` in its folder, ``sys.argv = [entry, *args]``, the folder
first on ``sys.path`` and its own modules imported afresh) sets the params to the requested point just
before counted call ``inject_step`` (a param constructed later gets the values when it is constructed),
reads the objective at the counted backwards of the iteration before each runs, and reads the gradient the
update consumes; a private exception then stops the script. :class:`ReplayProblem` checks at the record's
point that it reproduces the record's objective and gradient (:data:`REPRODUCE_RTOL`) and raises
:class:`ReplayError`, naming the script and the event, when it does not.

Reference gradient
    A record with ``reference`` (the path of a case's ``script.reference`` file, added by the orchestration
    for the oracle only) gives the Problem ``reference_gradient()``: that file's
    ``reference_gradient(params)`` at the current params (``{name: float64 ndarray}``), so the oracle judges
    a deliberate surrogate (a straight-through estimator) against its analytic gradient, as it does an
    adapter's ``reference_gradient()``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import runpy
import sys
import traceback

import numpy as np
import warp as wp

from ..paths import is_program_file

#: Relative tolerance of the reproduction check at the record's point: ``|mine - record| <= REPRODUCE_RTOL *
#: max(|record|)`` for the objective and for each param's gradient (the same program, inputs and release
#: give the same floating-point operations; a replay that sets the params or reads the loss at another
#: event gives a different value, not one within 1e-6).
REPRODUCE_RTOL = 1e-6

#: gradient() points whose backward seeds are kept for a seed-weighted objective (the most recent ones).
SEED_POINTS = 8


class ReplayError(RuntimeError):
    """The replay could not stand for the script: the record does not fit this run of it (a param site not
    constructed, the iteration's backward reached before its start, no loss) or the replay does not reproduce
    the record's objective or gradient at its point. The message names the script and the event."""


class _Halt(BaseException):
    """Raised from a wrapper to stop the script once what is needed has been read."""


class _Broken(BaseException):
    """A :class:`ReplayError` raised inside the script (a BaseException, so that the script's own
    ``except Exception`` does not swallow it); turned into a ReplayError when the run returns."""


_ACTIVE = None  # the _Pass in progress


def _warp_dir(wp) -> str:
    return os.path.dirname(os.path.abspath(wp.__file__)) + os.sep


_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class _Pass:
    """One run of the script: counters, the arrays it constructed, what it read."""

    def __init__(self, rp, mode, point=None, repeat_injection=(), grad_target=None, term=None):
        self.rp = rp
        self.rec = rp.record
        self.mode = mode  # "objective" | "gradient" | "term" | "until_backward"
        self.term = term  # term mode: {"n", "inject_step"} of an earlier backward whose loss is read
        # the counted call before which the params are set: the iteration's start (or the term's own iteration's)
        self.start_call = rp.record.get("inject_step", -1) if term is None else term["inject_step"]
        self.point = point or {}  # name -> values to set
        self.repeat_injection = set(repeat_injection)  # backward counts after which a tape start sets them again
        self.grad_target = grad_target
        self.calls = 0  # counted calls started
        self.backwards = 0  # backward calls finished
        self.busy = 0  # counted calls running
        self.building = 0  # array constructions running
        self.quiet = 0  # this module's own Warp calls
        self.per_line = {}  # (file, line) -> constructions
        self.site_of = {}  # id(array) -> (file, line, occurrence)
        self.kept = []  # the constructed arrays (their ids stay valid)
        self.found = {}  # param name -> its array in this run
        self.pending = {}  # param name -> values for a param not constructed yet
        self.set_once = False
        self.set_at = set()  # backward counts at which the params were set
        self.loss = None  # the objective summed over the counted backwards
        self.first_seeds = None  # (array values, seed values) pairs of the first counted backward, or None
        self.grad = None
        self.iterations_read = 0
        self.waiting = {}  # name -> where the update consumes its gradient, still to read
        self.from_numpy = {}
        self.ended = None

    # -- sites ---------------------------------------------------------------------
    def user_site(self):
        f = sys._getframe(2)
        while f is not None:
            fn = f.f_code.co_filename or ""
            if not fn.startswith("<"):
                ab = os.path.abspath(fn)
                if not ab.startswith(self.rp.warp_dir) and not ab.startswith(_PKG_DIR):
                    root = str(self.rp.folder) + os.sep
                    return (ab[len(root):] if ab.startswith(root) else ab), f.f_lineno
            f = f.f_back
        return "<unknown>", 0

    # -- counted calls -------------------------------------------------------------
    def count(self):
        """A counted call starts: set the params at the iteration's start, read a consumed gradient."""
        if self.busy:
            return
        if not self.set_once and self.calls == self.start_call:
            self.set_params()
        if self.waiting:
            self.read_consumed()
        self.calls += 1

    def set_params(self):
        self.set_once = True
        self.set_at.add(self.backwards)
        if self.mode == "until_backward":
            return
        todo = dict(self.point)
        with self.silent():
            for name in [n for n in todo if n in self.found]:
                self.found[name].assign(todo.pop(name))
        self.pending.update(todo)

    def constructed(self, arr, site):
        self.site_of[id(arr)] = site
        self.kept.append(arr)
        name = self.rp.param_at.get(site)
        if name is not None:
            self.found[name] = arr
        if bool(getattr(arr, "requires_grad", False)):
            self.count()
        if name is not None and name in self.pending:
            with self.silent():
                arr.assign(self.pending.pop(name))

    @contextlib.contextmanager
    def inside(self):
        self.busy += 1
        try:
            yield
        finally:
            self.busy -= 1

    @contextlib.contextmanager
    def silent(self):
        self.quiet += 1
        try:
            yield
        finally:
            self.quiet -= 1

    def call_site_is(self, site) -> bool:
        here = self.user_site()
        return (here[0], here[1]) == (site[0], site[1])

    # -- the gradient where the update consumes it ------------------------------------
    def holder(self, name, how):
        """The array the update reads param ``name``'s gradient from: its ``.grad`` or the latest array
        constructed at ``how["array_site"]``."""
        if how["is_grad"]:
            return getattr(self.found.get(name), "grad", None)
        want = tuple(how["array_site"])
        for a in reversed(self.kept):
            if self.site_of.get(id(a)) == want:
                return a
        return None

    def read_consumed(self):
        for name, how in list(self.waiting.items()):
            if self.calls != how["step"] + how["offset"]:
                continue
            del self.waiting[name]
            if how["offset"] == 0 and how.get("site") is not None and not self.call_site_is(how["site"]):
                continue  # another call than the recorded update: the .grad after the backward stands
            with self.silent():
                vals = self.from_numpy.pop(name, None)
                parts = how.get("summed") or [how]  # the update may add several gradient arrays
                if vals is None:
                    hs = [self.holder(name, part) for part in parts]
                    vals = None if any(h is None for h in hs) else sum(np.array(h.numpy(), copy=True) for h in hs)
                if vals is not None and vals.shape == self.grad[name].shape:
                    self.grad[name] = vals
        if not self.waiting:
            self.ended = "gradient consumed"
            raise _Halt()

    def saw_numpy(self, arr, values):
        """A ``.numpy()`` of the script returned ``values`` for ``arr``: kept when ``arr`` holds a gradient that
        the update consumes through ``.numpy()`` after the current counted call."""
        if not self.waiting or self.quiet or self.building:
            return
        for name, how in self.waiting.items():
            if how["offset"] == 1 and self.calls == how["step"] + 1:
                with self.silent():
                    if self.holder(name, how) is arr:
                        self.from_numpy[name] = np.array(values, copy=True)

    # -- tapes and backwards -------------------------------------------------------
    def tape_entered(self, tape, go, a, k):
        """``Tape.__enter__``: a counted call; in a continued chain the params are set again here."""
        self.count()
        if self.backwards in self.repeat_injection and self.backwards not in self.set_at:
            self.set_params()
        return go()

    def backward_called(self, tape, go, a, k):
        """``Tape.backward(loss=None, grads=None)``: a counted call; the loss read before, the gradient after."""
        loss = a[0] if len(a) > 0 else k.get("loss")
        grads = a[1] if len(a) > 1 else k.get("grads")
        self.count()
        n = self.backwards + 1
        self.before_backward(tape, loss, grads)
        with self.inside():
            res = go()
        self.after_backward(n)
        return res

    def before_backward(self, tape, loss, grads):
        """At a backward call (counted already): what the replay reads before it runs; raises _Halt to stop."""
        rec = self.rec
        n = self.backwards + 1
        if self.mode == "until_backward":
            if n >= rec.get("first_backward", 1):
                self.ended = f"backward {n}"
                raise _Halt()
            return
        if self.mode == "term":
            if n < self.term["n"]:
                return
            if not self.set_once:
                raise _Broken(f"{rec['entry']}: the replay reached backward {n} before counted call "
                              f"{self.term['inject_step']}, where the record sets the params to read the loss of "
                              f"backward {self.term['n']}")
            self.loss = self.objective_at(tape, loss, grads, n)[0]
            self.ended = "term"
            raise _Halt()
        k, per = rec["first_backward"], rec["backwards_per_iteration"]
        if self.mode == "gradient" and n > k and (n - 1) in self.repeat_injection and (n - 1) not in self.set_at:
            self.ended = f"no tape started before backward {n}"
            raise _Halt()
        if n < k:
            return
        if n == k and not self.set_once:
            raise _Broken(f"{rec['entry']}: the replay reached backward {n} before counted call "
                              f"{rec['inject_step']}, where the record starts iteration {rec['iteration']} "
                              f"(it made {self.calls} counted calls)")
        if n == k and self.pending:
            raise _Broken(f"{rec['entry']}: param(s) {sorted(self.pending)} were not constructed at their "
                              f"sites before backward {n}")
        off = n - k
        offs = rec["objective_offsets"]
        if off in offs and off < per:
            tw = rec.get("term_weights")
            value, pairs = self.objective_at(tape, loss, grads, n, None if tw is None else tw.get(str(off)))
            if off == offs[0]:
                self.loss = 0.0
                self.first_seeds = pairs
            self.loss += value
            if off == offs[-1] and self.mode == "objective":
                self.ended = "objective"
                raise _Halt()

    def after_backward(self, n):
        rec = self.rec
        self.backwards = n
        after, per = rec["gradient_after_backward"], rec["backwards_per_iteration"]
        if self.mode != "gradient" or n < after or (n - after) % per:
            return
        with self.silent():
            self.grad = {}
            for name, a in self.found.items():
                g = getattr(a, "grad", None)
                self.grad[name] = (np.zeros_like(np.array(a.numpy())) if g is None
                                   else np.array(g.numpy(), copy=True))
        self.iterations_read += 1
        if self.grad_target is None and rec["consume"] and n == after:
            self.waiting = {k: v for k, v in rec["consume"].items()}
            return
        if self.grad_target is None or n >= self.grad_target:
            self.ended = "gradient"
            raise _Halt()

    def objective_at(self, tape, loss, grads, n, weights=None):
        """(value, seed pairs or None) of the loss backward ``n`` differentiates, read before it runs; with
        ``weights`` (one per seeded array, or one for a ``backward(loss)``) the weighted sum of the seeded arrays'
        sums (or the weighted loss), the loss the script reports."""
        entry = self.rec["entry"]
        with self.silent():
            if loss is None and not grads and tape is not None:
                want = {tuple(s) for s in self.rec["hand_seed_sites"]}
                seen, hand = set(), []
                for e in getattr(tape, "launches", None) or []:
                    if isinstance(e, (list, tuple)) and len(e) >= 5:
                        for a in list(e[3] or []) + list(e[4] or []):
                            if isinstance(a, wp.array) and id(a) not in seen:
                                seen.add(id(a))
                                if getattr(a, "requires_grad", False) and getattr(a, "grad", None) is not None \
                                        and self.site_of.get(id(a)) in want:
                                    hand.append(a)
                if hand:
                    grads = {a: a.grad for a in hand}
            if loss is not None and not grads:
                if not isinstance(loss, wp.array) or loss.size != 1:
                    raise _Broken(f"{entry}: backward {n} was given a loss that is not a one-element wp.array")
                v = float(np.sum(np.asarray(loss.numpy(), dtype=np.float64)))
                return (float(weights[0]) * v if weights is not None and len(weights) == 1 else v), None
            if not grads:
                raise _Broken(f"{entry}: backward {n} has neither a loss nor seeds (grads= or a .grad set "
                                  f"by hand at a recorded site)")
            pairs, sums, total = [], [], 0.0
            for y, s in grads.items():
                yv = np.asarray(y.numpy(), dtype=np.float64).ravel().copy()
                sv = np.asarray(s.numpy(), dtype=np.float64).ravel().copy()
                if yv.size != sv.size:
                    raise _Broken(f"{entry}: backward {n}: a seed of {sv.size} entries for {yv.size}")
                total += float(np.sum(yv * sv))
                pairs.append((yv, sv))
                sums.append(float(np.sum(yv)))
            if weights is not None and len(weights) == len(sums):
                return float(sum(wi * si for wi, si in zip(weights, sums))), None
            return total, pairs


#: The counted calls besides ``Tape.__enter__``, ``Tape.backward`` and ``requires_grad`` constructions:
#: ``(owner, name)``, a ``wp.array`` method only where the class itself defines it.
COUNTED_CALLS = (("wp", "launch"), ("wp", "copy"), ("wp", "clone"),
                 ("wp.array", "assign"), ("wp.array", "zero_"), ("wp.array", "fill_"))


def _counting(orig):
    """``orig`` as a counted call of the run in progress (calls it makes are not counted)."""

    def wrapper(*a, **k):
        p = _ACTIVE
        if p is not None and not (p.quiet or p.building):
            p.count()
            with p.inside():
                return orig(*a, **k)
        return orig(*a, **k)

    return wrapper


def _on_tape(orig, handler):
    """A ``wp.Tape`` method handed to the run in progress (``_Pass.<handler>(tape, go, args, kwargs)``, where
    ``go()`` calls the original), or called as it is when no run is in progress or the call is this module's."""

    def wrapper(tape, *a, **k):
        p = _ACTIVE

        def go():
            return orig(tape, *a, **k)

        return go() if p is None or p.quiet else getattr(p, handler)(tape, go, a, k)

    return wrapper


def _numpy_seen(orig):
    """``wp.array.numpy`` telling the run in progress what it returned (an update may consume those values)."""

    def wrapper(arr, *a, **k):
        p = _ACTIVE
        if p is None:
            return orig(arr, *a, **k)
        p.building += 1  # Warp's own calls inside .numpy() (a CUDA array's copy to the host) are not counted
        try:
            values = orig(arr, *a, **k)
        finally:
            p.building -= 1
        p.saw_numpy(arr, values)
        return values

    return wrapper


class _Hooks:
    """Wrappers over Warp's public names for the run in progress (installed, then restored in ``undo``)."""

    def __init__(self, wp):
        self.saved = []
        A, T = wp.array, wp.Tape

        def put(owner, name, fn):
            self.saved.append((owner, name, owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name),
                               isinstance(owner, type) and name in owner.__dict__))
            setattr(owner, name, fn)

        a_init = A.__init__

        def init(self_, *a, **k):
            p = _ACTIVE
            if p is None or p.quiet or p.building:
                return a_init(self_, *a, **k)
            where = p.user_site()
            n = p.per_line[where] = p.per_line.get(where, 0) + 1
            p.building += 1
            try:
                a_init(self_, *a, **k)
            finally:
                p.building -= 1
            p.constructed(self_, (where[0], where[1], n))

        put(A, "__init__", init)

        owners = {"wp": wp, "wp.array": A}
        for where, name in COUNTED_CALLS:
            owner = owners[where]
            if where == "wp" or name in A.__dict__:
                put(owner, name, _counting(getattr(owner, name)))

        put(T, "__enter__", _on_tape(T.__enter__, "tape_entered"))
        put(T, "backward", _on_tape(T.backward, "backward_called"))

        put(A, "numpy", _numpy_seen(A.numpy))

    def undo(self):
        for owner, name, orig, own in reversed(self.saved):
            if isinstance(owner, type) and not own:
                delattr(owner, name)
            else:
                setattr(owner, name, orig)
        self.saved = []


class ReplayProblem:
    """A Problem (docs/case-format.md) replayed from a script and its replay record.

    Parameters
    ----------
    folder : path-like
        The variant folder holding the script (its working directory and first ``sys.path`` entry).
    record : dict
        The replay record (docs/oracle.md, "Script variants"), without ``error``.
    device : str, default "cpu"
        Warp device made the default while the script runs.
    check : bool, default True
        Reproduce the record's objective and gradient at its point (:meth:`reproduce`) on construction.

    Attributes
    ----------
    params : dict[str, wp.array]
        Arrays of the params' dtypes and shapes holding the point (not the script's own arrays: each run
        copies them into those at the iteration's start).

    Raises
    ------
    ReplayError
        When a param is not constructed at its site, or the reproduction check fails.
    """

    def __init__(self, folder, record: dict, device: str = "cpu", check: bool = True):
        self.wp = wp
        self.folder = os.path.abspath(str(folder))
        self.record = record
        self.device = device
        self.warp_dir = _warp_dir(wp)
        self.param_at = {tuple(p["site"]): p["name"] for p in record["params"]}
        self.chain = None  # (point, calls so far) of consecutive gradient() calls at one point
        self.seed_points = []  # [(point, seed values)] of gradient() calls, for a seed-weighted objective
        self.runs = 0
        self.reproduced = None
        self.params = self._holders()
        if record.get("reference"):
            self._reference = _load_reference(record["reference"])
            self.reference_gradient = self._reference_gradient  # the Problem's optional method, only with one
        if check:
            self.reproduced = self.reproduce()

    # -- running -------------------------------------------------------------------
    def _execute(self, p: _Pass) -> _Pass:
        global _ACTIVE
        if _ACTIVE is not None:
            raise ReplayError("a replay is already running in this process")
        rec = self.record
        wp = self.wp
        entry = os.path.join(self.folder, rec["entry_file"])
        for name, mod in list(sys.modules.items()):
            f = getattr(mod, "__file__", None)
            if f and is_program_file(f, self.folder):
                del sys.modules[name]
        argv, cwd, path0, main_mod = sys.argv[:], os.getcwd(), list(sys.path), sys.modules.get("__main__")
        hooks = None
        try:
            sys.argv = [entry] + list(rec["args"])
            sys.path.insert(0, self.folder)
            os.chdir(self.folder)
            hooks = _Hooks(wp)
            _ACTIVE = p
            self.runs += 1
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                    wp.ScopedDevice(self.device):
                if rec["module"]:
                    runpy.run_module(rec["entry"], run_name="__main__", alter_sys=True)
                else:
                    runpy.run_path(entry, run_name="__main__")
            p.ended = "end"
        except _Halt:
            pass
        except _Broken as exc:
            raise ReplayError(str(exc)) from None
        except SystemExit as exc:
            p.ended = f"exit {exc.code}"
        finally:
            _ACTIVE = None
            if hooks is not None:
                hooks.undo()
            os.chdir(cwd)
            sys.argv = argv
            sys.path[:] = path0
            if main_mod is not None:
                sys.modules["__main__"] = main_mod
        return p

    def _holders(self) -> dict:
        """One run to the iteration's start to learn each param's dtype; arrays holding the record's point."""
        wp = self.wp
        rec = self.record
        p = self._execute(_Pass(self, "until_backward"))
        missing = [q["name"] for q in rec["params"] if q["name"] not in p.found]
        if missing:
            raise ReplayError(f"{rec['entry']}: no array was constructed at the site(s) of param(s) "
                              + ", ".join(f"{n} ({':'.join(map(str, q['site']))})" for q in rec["params"]
                                          for n in missing if q["name"] == n)
                              + f" before the first backward (the run ended: {p.ended})")
        out = {}
        for q in rec["params"]:
            a = p.found[q["name"]]
            shape = tuple(q["shape"])
            v = np.array(a.numpy())
            if v.shape != shape:
                raise ReplayError(f"{rec['entry']}: the array constructed at {':'.join(map(str, q['site']))} "
                                  f"has shape {v.shape}, the record's param {q['name']} {shape}")
            x0 = np.asarray(q["x0"], dtype=np.float64).reshape(shape).astype(v.dtype)
            h = wp.empty(shape=a.shape, dtype=a.dtype, device=self.device, requires_grad=True)
            h.assign(x0)
            out[q["name"]] = h
        return out

    def _point(self) -> dict:
        return {k: np.array(a.numpy(), copy=True) for k, a in self.params.items()}

    def _missing(self, p) -> None:
        lost = [n for n in self.params if n not in p.found]
        if lost:
            raise ReplayError(f"{self.record['entry']}: the run (ended: {p.ended}) constructed no array at the "
                              f"site of param(s) {', '.join(lost)}")

    # -- the Problem protocol --------------------------------------------------------
    def objective(self) -> float:
        """The loss of the iteration at ``params``: the sum over its counted backwards of ``loss`` (or of
        ``sum(seed * array)`` over the seeds, or the record's weighted sum of the seeded arrays' sums), read
        before each runs. With seeds that change with the params, the seeds of the nearest gradient() point
        weight the arrays (the function whose gradient the backward returns there).

        Raises
        ------
        ReplayError
            When the run ends before the iteration's loss is known.
        """
        point = self._point()
        p = self._execute(_Pass(self, "objective", point))
        self._missing(p)
        if p.loss is None:
            raise ReplayError(f"{self.record['entry']}: the run ended ({p.ended}) before backward "
                              f"{self.record['first_backward']}, where the iteration's loss is read")
        return self._seeded(p, point) + self._earlier_terms(point)

    def _earlier_terms(self, point) -> float:
        """The losses of the record's ``external_terms`` at ``point`` (0.0 without any): backwards before the
        iteration whose gradient its update still consumes (a prior's gradient computed once and kept), each read
        by one run that sets the params at the start of that backward's own iteration."""
        terms = self.record.get("external_terms") or ()
        runs = [self._execute(_Pass(self, "term", point, term=t)) for t in terms]
        short = [(t, p) for t, p in zip(terms, runs) if p.loss is None]
        if short:
            t, p = short[0]
            raise ReplayError(f"{self.record['entry']}: the run ended ({p.ended}) before backward {t['n']}, whose "
                              f"loss the iteration's update still consumes")
        return float(sum(float(p.loss) for p in runs))

    def _seeded(self, p, point) -> float:
        pairs = p.first_seeds
        if not pairs or not self.seed_points:
            return float(p.loss)

        def dist(q):
            return sum(float(np.sum((np.asarray(q[k], dtype=np.float64) - np.asarray(point[k], dtype=np.float64))
                                    ** 2)) for k in point if k in q)

        _, seeds = min(self.seed_points, key=lambda e: dist(e[0]))
        if len(seeds) != len(pairs) or any(s.shape != s0.shape for (_, s), s0 in zip(pairs, seeds)):
            return float(p.loss)
        if all(np.array_equal(s, s0) for (_, s), s0 in zip(pairs, seeds)):
            return float(p.loss)
        return float(sum(float(np.sum(y * s0)) for (y, _), s0 in zip(pairs, seeds)))

    def gradient(self) -> dict:
        """The gradient the script's update consumes, ``{name: ndarray of the param's numpy() shape}``: read
        where the record says the update takes it over, else the ``.grad`` right after the iteration's last
        backward. With ``continue_chain`` in the record (a ``.grad`` or a seed buffer carried into the next
        iteration), the m-th consecutive call at one point continues the script to its m-th iteration from
        the modelled one, the params set to the point again when each of those iterations' tape starts, and
        returns the ``.grad`` after it (or after the last one the script reached).

        Raises
        ------
        ReplayError
            When the run ends before the iteration's last backward.
        """
        rec = self.record
        point = self._point()
        m = 1
        if rec["continue_chain"] and self.chain is not None and all(
                np.array_equal(point[k], v) for k, v in self.chain[0].items()):
            m = self.chain[1] + 1
        again, target = (), None
        if m > 1:
            per = rec["backwards_per_iteration"]
            again = {rec["first_backward"] - 1 + j * per for j in range(1, m)}
            target = rec["gradient_after_backward"] + (m - 1) * per
        p = self._execute(_Pass(self, "gradient", point, again, target))
        self._missing(p)
        if p.grad is None:
            raise ReplayError(f"{rec['entry']}: the run ended ({p.ended}) before backward "
                              f"{rec['gradient_after_backward']} finished")
        if rec["continue_chain"]:
            self.chain = (point, m)
        if p.first_seeds:
            self.seed_points.append((point, [s.copy() for _, s in p.first_seeds]))
            del self.seed_points[:-SEED_POINTS]
        return p.grad

    def _reference_gradient(self) -> dict:
        """The record's reference file's ``reference_gradient(params)`` at the current params, ``{name: ndarray
        of the param's numpy() shape}`` (float64).

        Raises
        ------
        ReplayError
            When it raises (or exits), or returns other names than the params', an array of another size
            or values that are not finite; the message names the file (and the line that raised)."""
        point = {k: np.asarray(v, dtype=np.float64) for k, v in self._point().items()}
        ref = self.record["reference"]
        try:
            got = self._reference(point)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the reference's own failure, named with its line
            lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) == ref]
            at = f" (line {lines[-1]})" if lines else ""
            raise ReplayError(f"{ref}: reference_gradient raised {type(exc).__name__}: {exc}{at}") from exc
        if not isinstance(got, dict) or set(got) != set(point):
            names = sorted(got) if isinstance(got, dict) else type(got).__name__
            raise ReplayError(f"{ref}: reference_gradient returned {names}, not the params {sorted(point)}")
        out = {}
        for k, v in got.items():
            a = np.asarray(v, dtype=np.float64)
            if a.size != point[k].size:
                raise ReplayError(f"{ref}: reference_gradient()[{k!r}] has {a.size} values, the param {point[k].size}")
            if not np.all(np.isfinite(a)):
                raise ReplayError(f"{ref}: reference_gradient()[{k!r}] holds values that are not finite "
                                  f"({int(np.sum(~np.isfinite(a)))} of {a.size})")
            out[k] = a.reshape(point[k].shape)
        return out

    # -- the reproduction check ---------------------------------------------------------
    def reproduce(self, rtol: float = REPRODUCE_RTOL) -> dict:
        """Evaluate objective() and gradient() once at the record's point and compare them with the record's
        ``check`` (``|mine - record| <= rtol * max|record|``, per param for the gradient); then forget the
        gradient() call (a following call at the point is the first of a chain again).

        Returns
        -------
        dict
            ``{"objective": [mine, record], "gradient_max_abs_diff": {name: float}}``.

        Raises
        ------
        ReplayError
            Naming the script, the event (counted call of the iteration's start, the backward read) and the
            values, when either differs, or when the record has no check.
        """
        rec = self.record
        chk = rec.get("check") or {}
        where = (f"iteration {rec['iteration']} set at counted call {rec['inject_step']}, loss read at backward "
                 f"{rec['first_backward']}, gradient after backward {rec['gradient_after_backward']}")
        if "objective" not in chk or "gradient" not in chk:
            raise ReplayError(f"{rec['entry']}: the record has no values to reproduce ({chk.get('error')})")
        f = self.objective()
        f_rec = float(chk["objective"])
        if not _close(f, f_rec, abs(f_rec), rtol):
            raise ReplayError(f"{rec['entry']}: the replay's objective {f!r} differs from the record's {f_rec!r} "
                              f"at the record's point ({where})")
        g = self.gradient()
        diffs = {}
        for name, ref in chk["gradient"].items():
            ref = np.asarray(ref, dtype=np.float64)
            mine = np.asarray(g.get(name, np.zeros(0)), dtype=np.float64).ravel()
            if mine.shape != ref.shape:
                raise ReplayError(f"{rec['entry']}: the replay's gradient of {name} has {mine.size} entries, the "
                                  f"record's {ref.size} ({where})")
            scale = float(np.max(np.abs(ref[np.isfinite(ref)]))) if np.any(np.isfinite(ref)) else 0.0
            same_bad = np.array_equal(np.isfinite(mine), np.isfinite(ref)) and np.array_equal(
                mine[~np.isfinite(ref)], ref[~np.isfinite(ref)], equal_nan=True)  # NaN where the record has NaN
            ok = np.isfinite(ref)
            d = float(np.max(np.abs(mine[ok] - ref[ok]))) if np.any(ok) else 0.0
            diffs[name] = d
            if not same_bad or not (d <= rtol * scale or d == 0.0):
                raise ReplayError(f"{rec['entry']}: the replay's gradient of {name} differs from the record's by "
                                  f"up to {d:.3g} (largest |entry| {scale:.3g}) at the record's point ({where})")
        self.chain = None
        self.seed_points = []
        return {"objective": [f, f_rec], "gradient_max_abs_diff": diffs}


def _load_reference(path: str):
    """``reference_gradient`` of the file at ``path`` (imported under a private module name).

    Raises
    ------
    ReplayError
        When the file cannot be imported or defines no callable ``reference_gradient``."""
    try:
        spec = importlib.util.spec_from_file_location("_d4w_script_reference", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except Exception as exc:  # noqa: BLE001 - the file's own error, named
        raise ReplayError(f"{path}: the reference file does not import: {type(exc).__name__}: {exc}") from exc
    fn = getattr(mod, "reference_gradient", None)
    if not callable(fn):
        raise ReplayError(f"{path}: defines no function reference_gradient(params)")
    return fn


def _close(a: float, b: float, scale: float, rtol: float) -> bool:
    if a != a or b != b:
        return a != a and b != b
    if a == b:
        return True
    return abs(a - b) <= rtol * scale


def run_until_first_backward(folder, record: dict, device: str = "cpu") -> str:
    """Run the script of a record whose capture failed (``record["entry"]``, ``entry_file``, ``args``,
    ``module``) to its first ``Tape.backward`` (or its end), so that an error Warp raises on the way (a
    kernel it refuses to build) surfaces here; returns how the run ended.

    Raises
    ------
    Exception
        Whatever the script raises.
    """
    rp = ReplayProblem.__new__(ReplayProblem)
    rp.wp, rp.folder, rp.record, rp.device = wp, os.path.abspath(str(folder)), dict(record), device
    rp.warp_dir, rp.param_at, rp.runs = _warp_dir(wp), {}, 0
    rp.record.setdefault("inject_step", -1)
    p = rp._execute(_Pass(rp, "until_backward"))
    return p.ended
