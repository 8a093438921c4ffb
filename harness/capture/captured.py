""":class:`CapturedProblem`: a Problem whose objective and gradient are re-runs of the user's script.
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import warp as wp

from ..measure import trace as _trace
from ..paths import is_program_file
from .hooks import _install
from .runstate import (DEFAULT_TIMEOUT_S, MAX_SEED_POINTS, _Limit, _Run, _Stop, _Timeout, _at, _np, _ordinal, _quiet,
                       _tb_site, _user_frame)
from .spec import CaptureError, ScriptSpec, format_site
from .targets import module_file


#: Variant folders captured in this process (their modules are purged before every run of any capture).
_FOLDERS: set = set()


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
        # param name -> where the update consumes its gradient (core._consume_spec): gradient() reads it there
        self.consume = {}
        self.per_iteration = 1  # backwards per iteration of the script (grad_after - k + 1)
        self.per_next = None  # backwards of iteration K+1 when the discovery run saw it whole (loop length)
        self.carried = []  # params whose .grad the script carries into its next iteration (never zeroed)
        self.chain = None  # (point, calls so far) of consecutive gradient() calls at one point, when carried
        self.chain_short = None  # calls the script's own iterations could serve, when it ended first
        self.hand_seed_sites = set()  # sites of the arrays whose .grad the script sets by hand as the seeds
        self.stale_seed = False  # the hand-set seed buffer of backward k is reused, changed, at backward k+1
        self.objective_weights = None  # per seeded array: the weight of its sum in the reported loss (flat, in order)
        # {offset of a counted backward from k: [weight per seeded array of that backward]}: the same weights by
        # backward, as objective() applies them (None: the seed-weighted sums)
        self.term_weights = None
        # [{"n", "inject_step"}]: backwards before the iteration whose gradient its update still consumes (a prior's
        # gradient cached once): objective() adds each one's loss at the params, set at its own iteration's start
        self.external_terms = []
        self.term_counts = None  # seeded arrays (1 for a backward(loss)) of each counted backward, in obj_offsets order
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
        if _trace.active("capture") is not None:
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
        patches = None
        error = None
        try:
            run.bind_trace(_trace.active("trace"))  # the trace recording this run, if one is
            patches = _install(run)
            run.in_force = True
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
            run.in_force = False
            if patches is not None:
                patches.restore()
            os.chdir(cwd)
            sys.argv = argv
            sys.path[:] = path0
            if main_mod is not None:
                sys.modules["__main__"] = main_mod
        self._raise_for(run, error)
        return out.getvalue(), run.stopped

    def _raise_for(self, run: _Run, error) -> None:
        """Turn a run's error (``(kind, exception)``: timeout, limit, the script's own) into a CaptureError, unless
        the capture already had what it needed (then it is where the run stopped)."""
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

    def _purge(self):
        """Forget the variant folder's own modules so a re-run imports them afresh (module-level state
        is then as in a fresh run; their kernels are found in the kernel cache), and those of every folder
        captured before in this process, so that a script importing ``model`` does not get another
        variant's ``model`` (two captures in one process: tests, a survey over a corpus)."""
        _FOLDERS.add(self.folder)
        # is_program_file needs the file under the folder: a prefix test of the absolute paths rules out the few
        # hundred other modules (Warp's, NumPy's, this package's) first; calling it on each of them took about
        # 3 ms of every re-run, some 0.2 s of a diagnosis (2026-12-04, 380 modules x 55 runs)
        roots = [os.path.abspath(d) for d in _FOLDERS]
        prefixes = tuple(r if r.endswith(os.sep) else r + os.sep for r in roots)
        for name, mod in list(sys.modules.items()):
            f = getattr(mod, "__file__", None)
            if not f:
                continue
            if isinstance(f, str):
                a = os.path.abspath(f)
                if not (a.startswith(prefixes) or a in roots):
                    continue
            # installed packages under the folder (a .venv next to the script) are not the user's modules:
            # purging NumPy from a venv there makes its re-import fail ("cannot load module more than once")
            if any(is_program_file(f, d) for d in _FOLDERS):
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
        return float(self._frozen_seed_objective(run, vals)) + self.external_value()

    def external_value(self) -> float:
        """The sum of the losses of :attr:`external_terms` at ``params`` (0.0 without any): for each, one re-run of
        the script that sets the params at the start of that backward's iteration and reads its loss before it
        runs. Params are left unchanged.

        Raises
        ------
        CaptureError
            When a re-run ends before that backward.
        """
        total = 0.0
        for t in self.external_terms:
            vals = {k: _np(a) for k, a in self.params.items()}
            run = _Run(self, "term", inject=vals)
            run.inject_step_at, run.term_n = t["inject_step"], t["n"]
            t0 = time.perf_counter()
            _, stopped = self._execute(run)
            self.reruns.append(time.perf_counter() - t0)
            self._restore(vals)
            if run.objective is None:
                raise CaptureError(f"{self.spec.entry}: the re-run ended ({stopped}) before its "
                                   f"{_ordinal(t['n'])} Tape.backward(), whose gradient the update consumes")
            total += float(run.objective)
        return total

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
        """The gradient the script's update consumes, ``{name: ndarray of the param's numpy() shape}``:
        for a param in :attr:`consume`, the values of its ``.grad`` (or of the copy or buffer the update reads
        in its place) just before the hooked call where the update consumes it (after a ``tape.zero()`` or an
        overwrite the script made in between, as the update sees them; a ``.numpy()`` before a host-side
        update: the values it returned), else its ``.grad`` right after the iteration's last backward. Params
        are left unchanged. A continued chain (below) reads the ``.grad`` right after each iteration's last
        backward.

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
