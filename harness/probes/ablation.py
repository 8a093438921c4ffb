"""Ablation of hand-written adjoints: the gradient with each ``@wp.func_grad`` taken out, and stopped.

A straight-through estimator (a hand-written adjoint on ``sign``, ``round``, a threshold) in a
loss that also has a smooth term of the same params is a correct program that finite differences
cannot judge: they see the smooth term only, autodiff sees the smooth term plus the surrogate, and
the step sweep confirms the disagreement. What tells it from a wrong adjoint is measured here, in
the worker, on the program itself: for every user function ``f`` (defined in the variant folder)
whose ``custom_grad_func`` is set,

``native``
    the gradient with every hand-written adjoint removed (Warp generates ``f``'s own adjoint);
``zero``
    the gradient with every hand-written adjoint replaced by one that adds nothing (a
    stop-gradient through ``f``; generated into a temporary ``.py`` file, since Warp reads an
    adjoint's source);

each after forcing Warp to rebuild (every user module unloaded and its hash cleared). A program
that defines its functions anew on every call (a captured script run again) is reached through a
stand-in for ``warp.func_grad`` that registers nothing, or the zero adjoint, while a state holds;
one it cannot reach (its functions come back with their adjoint) is recorded as not measured.
Then the hand-written adjoints (and ``warp.func_grad``) are restored, the modules rebuilt again and
the program's own gradient measured once more: it must be bit-identical to the one before
(``restored.identical``; when it is not, or when ``gradient()`` is not repeatable at all, the
assessment ignores the ablation). Tested on Warp 1.0.2, 1.12.1 and 1.19.0.

What the three gradients say is read in the parent, from the document
(:func:`defects4warp.engines.assess.ablation.read`, the ablation's assessment).

The probe runs only when the step sweep asks for it (:mod:`defects4warp.probes.sweep`:
a ``confirmed`` item and a folder that mentions ``func_grad``), after the worker's probe list; it
is on no probe list (:attr:`defects4warp.probes.Entry.requested_by`), so a program without a
hand-written adjoint or without a confirmed disagreement gets the same document as before.
Releases whose Warp objects lack what it needs are recorded as ``not measured`` with the reason;
the probe never raises.
"""

from __future__ import annotations

import inspect
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from ..measure import compare
from ..paths import is_program_file
from . import probe
from .context import finite_or_str
from .fd import ad_values


def _warp_context():
    """Warp's ``context`` module (``warp._src.context`` from 1.10, ``warp.context`` before)."""
    import importlib

    for name in ("warp._src.context", "warp.context"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError("neither warp._src.context nor warp.context")


def _line(fn) -> int:
    try:
        return inspect.getsourcelines(fn)[1]
    except (TypeError, OSError):
        return 0


def _under(fn, root: Path) -> bool:
    """Whether Python function ``fn`` was written in a program file under ``root``
    (:func:`defects4warp.paths.is_program_file`: not in an installed package or environment there)."""
    try:
        return is_program_file(Path(inspect.getsourcefile(fn)).resolve(), root)
    except (TypeError, OSError):
        return False


def _functions() -> list:
    """Every live ``warp.Function`` of this process (the garbage collector's objects): a function
    defined in a script that ran as ``__main__`` (the capture), in a closure or a class is reachable
    from its kernels only, and from Warp 1.10 a Warp module's ``functions`` entry of a function with a
    hand-written adjoint is the adjoint itself, so neither module globals nor Warp's registries
    find every one."""
    import gc

    cls = _warp_context().Function
    return [o for o in gc.get_objects() if isinstance(o, cls)]


def custom_adjoints(folder: str) -> list:
    """The user functions with a hand-written adjoint: ``[(top, overload), ...]``, where ``overload``
    is a ``warp.Function`` whose ``custom_grad_func`` is set and whose Python source lies under
    ``folder``, and ``top`` the Function ``@wp.func_grad`` is given to reach it (``overload`` itself
    when it lists itself among its ``user_overloads``, else one that lists it). Functions that are
    themselves someone's adjoint (Warp 1.0-1.9 list them among the forward's overloads) are left out.

    Raises
    ------
    ImportError, AttributeError
        When this Warp release has no ``Function`` class where expected (the caller records it).
    """
    root = Path(folder).resolve()
    funcs = _functions()
    grads = {id(f.custom_grad_func) for f in funcs if getattr(f, "custom_grad_func", None) is not None}
    holders = {}
    for f in funcs:
        for o in getattr(f, "user_overloads", {}).values():
            holders.setdefault(id(o), []).append(f)
    found = []
    for ovl in funcs:
        if (getattr(ovl, "custom_grad_func", None) is None or id(ovl) in grads
                or not _under(getattr(ovl, "func", None), root)):
            continue
        held = holders.get(id(ovl), [])
        found.append((ovl if any(h is ovl for h in held) or not held else held[0], ovl))
    return sorted(found, key=lambda t: (t[1].key, _line(t[1].func)))


def _invalidate() -> None:
    """Make Warp rebuild every user module on its next launch: ``unload()`` (every release) and, where
    it exists, ``mark_modified()`` (clears the cached hashes; Warp 1.10+). A module whose hash did not
    change loads again from the kernel cache."""
    for module in list(_warp_context().user_modules.values()):
        module.unload()
        if hasattr(module, "mark_modified"):
            module.mark_modified()


class _Adjoints:
    """The hand-written adjoints of ``targets`` (from :func:`custom_adjoints`) and of any function of
    ``folder`` defined while a state holds, in three states: :meth:`native`, :meth:`zero`,
    :meth:`restore`. Kept: a snapshot of what ``@wp.func_grad`` set on the live functions (each
    overload's ``custom_grad_func`` and ``adj.skip_reverse_codegen``, each top Function's
    ``user_overloads``, each Warp module's ``functions``), and ``warp.func_grad`` itself, which the
    states replace with a decorator that registers nothing (:meth:`native`) or a zero adjoint
    (:meth:`zero`) for an adjoint written under ``folder``, so that a program that defines its
    functions anew on every call (a captured script run again) gets the state too."""

    def __init__(self, targets: list, tmp: str, folder: str):
        import warp

        self.targets, self.tmp, self.root = targets, tmp, Path(folder).resolve()
        self.decorator, self.made = warp.func_grad, 0
        self.saved = [(ovl, ovl.custom_grad_func, ovl.adj.skip_reverse_codegen) for _, ovl in targets]
        self.overloads = {id(top): (top, dict(top.user_overloads)) for top, _ in targets
                          if hasattr(top, "user_overloads")}
        self.functions = {id(ovl.module): (ovl.module, dict(ovl.module.functions)) for _, ovl in targets}

    def restore(self) -> None:
        """Put every hand-written adjoint back as ``@wp.func_grad`` left it, and ``warp.func_grad``."""
        import warp

        warp.func_grad = self.decorator
        for module, functions in self.functions.values():
            module.functions.clear()
            module.functions.update(functions)
        for top, ovls in self.overloads.values():
            top.user_overloads.clear()
            top.user_overloads.update(ovls)
        for ovl, grad, skip in self.saved:
            ovl.custom_grad_func, ovl.adj.skip_reverse_codegen = grad, skip
        _invalidate()

    def native(self) -> None:
        """No hand-written adjoint: Warp generates each function's own adjoint."""
        import warp

        grads = {id(g) for _, g, _ in self.saved}
        for top, _ in self.overloads.values():
            for key in [k for k, v in top.user_overloads.items() if id(v) in grads]:
                del top.user_overloads[key]  # Warp 1.0-1.x lists the adjoint among the overloads
        for ovl, _, _ in self.saved:
            ovl.custom_grad_func, ovl.adj.skip_reverse_codegen = None, False
        warp.func_grad = self._decorator(zero=False)
        _invalidate()

    def zero(self) -> None:
        """Each hand-written adjoint replaced by one with its signature that adds nothing."""
        import warp

        self.native()
        for top, grad in self._one_per_signature():
            self.decorator(top)(self._zero_like(grad.func))
        warp.func_grad = self._decorator(zero=True)
        _invalidate()

    def _one_per_signature(self) -> list:
        """``[(top, hand-written adjoint)]``, one per (Warp module, function key, input types): a script
        run again leaves a live copy of each of its functions per run, all found by
        :func:`custom_adjoints`, while a rebuild reads the one its module holds now; Warp 1.0-1.9 list an
        adjoint among the overloads of that one, so a second zero adjoint with the same signature is
        refused ("Duplicate function overload", measured on 1.0.2 with a captured script). The module's
        current function comes first where it is among the copies."""
        out, seen = [], set()
        pairs = [(top, grad) for (top, _), (_, grad, _) in zip(self.targets, self.saved)]
        current = {id(getattr(getattr(top, "module", None), "functions", {}).get(top.key)) for top, _ in pairs}
        for top, grad in sorted(pairs, key=lambda p: id(p[0]) not in current):
            sig = (id(getattr(top, "module", None)), top.key,
                   tuple(str(t) for t in getattr(top, "input_types", {}).values()))
            if sig not in seen:
                seen.add(sig)
                out.append((top, grad))
        return out

    def _decorator(self, zero: bool):
        """A ``warp.func_grad`` that registers nothing (or, with ``zero``, a zero adjoint) for an adjoint
        whose source lies under the folder, and defers to Warp's for any other."""
        original, root = self.decorator, self.root

        def func_grad(forward_fn):
            def wrapper(grad_fn):
                if not _under(grad_fn, root):
                    return original(forward_fn)(grad_fn)
                if zero:
                    original(forward_fn)(self._zero_like(grad_fn))
                return grad_fn

            return wrapper

        return func_grad

    def _zero_like(self, fn):
        """A Python function with ``fn``'s parameters and annotations and the body ``pass``, written to a
        file of ``self.tmp`` (Warp parses an adjoint's source) and run in a copy of ``fn``'s globals
        (so that string annotations resolve as they do for ``fn``)."""
        spec = inspect.getfullargspec(fn)
        name = f"zero_adjoint_{self.made}"
        self.made += 1
        src = f"def {name}({', '.join(spec.args)}):\n    pass\n"
        path = os.path.join(self.tmp, f"{name}.py")
        with open(path, "w") as f:
            f.write(src)
        scope = dict(fn.__globals__)
        exec(compile(src, path, "exec"), scope)  # noqa: S102 - two generated lines, no user input
        out = scope[name]
        out.__annotations__ = dict(fn.__annotations__)
        return out


def _gradients(ctx, points: dict) -> dict:
    """``{point: flat gradient (n,) float64}`` at each point's params (params left at the last one)."""
    out = {}
    for name, (x, _g, _items) in points.items():
        ctx.flat.set(x)
        out[name] = ctx.gradient()
    return out


def _project(grads: dict, points: dict) -> dict:
    """Each point's gradient projected on that point's FD items (:func:`defects4warp.probes.fd.ad_values`)."""
    return {k: [finite_or_str(v) for v in ad_values(g, points[k][2])] for k, g in grads.items()}


def _same_bits(a: dict, b: dict) -> bool:
    return all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)


@probe("ablation")
def measure(ctx) -> dict | None:
    """Gradients with the hand-written adjoints taken out (``native``) and stopped (``zero``).

    Reads ``ctx.requested["ablation"]["points"]`` (from the step sweep: ``{point: (x (n,) float64,
    program gradient (n,) float64, FD items)}``) and writes ``doc["ablation"]``: ``functions``
    (``[{"name", "file", "line"}]``), ``status`` (``measured`` or ``not measured``), ``reason`` (when not
    measured), ``points`` (per point: ``program``, ``native``, ``zero``: the gradient projected on that
    point's FD items, in objective units per unit param, the order of ``doc["fd"]`` items; and
    ``coordinates``: :func:`coordinates` of the three full gradients), ``errors``
    (a mode that could not be built: its error), ``restored`` (``identical``: the program's gradient
    after restoring equals the one before bit for bit; ``max_abs_diff``) and ``seconds``. Writes
    nothing when no function of the folder has a hand-written adjoint.
    """
    points = (ctx.requested.get("ablation") or {}).get("points") or {}
    out = {"status": "not measured", "functions": []}
    try:
        targets = custom_adjoints(ctx.path)
    except (ImportError, AttributeError) as exc:
        out["reason"] = f"this Warp release's Function class is not where the ablation looks: {type(exc).__name__}: {exc}"
        targets = None
    if targets == []:
        return None
    t0 = time.perf_counter()
    if targets:
        listed = [{"name": ovl.key, "file": os.path.relpath(inspect.getsourcefile(ovl.func), ctx.path),
                   "line": _line(ovl.func)} for _, ovl in targets]
        out["functions"] = [f for i, f in enumerate(listed) if f not in listed[:i]]  # one per definition
    repeatable = (ctx.doc.get("determinism") or {}).get("calls_identical", True)
    if targets and not repeatable:
        out["reason"] = ("gradient() is not repeatable at the same point (the determinism probe's calls differ): "
                         "a gradient with the adjoints changed could not be told from the next call")
    elif targets and points:
        ctx.stage("ablation")
        x_home = ctx.flat.get()
        try:
            _measure(ctx, targets, points, out)
        except Exception as exc:  # noqa: BLE001 - the probe never raises: what failed is recorded
            out.update(status="not measured", reason=f"the ablation failed: {type(exc).__name__}: {str(exc)[:300]}")
        finally:
            ctx.flat.set(x_home)
            ctx.stage(None)
    elif targets:
        out["reason"] = "no point to measure at (the step sweep handed over none)"
    out["seconds"] = round(time.perf_counter() - t0, 3)
    ctx.doc["ablation"] = out
    ctx.save()
    return out


def _measure(ctx, targets: list, points: dict, out: dict) -> None:
    """:func:`measure`'s three states of the adjoints, each gradient projected on the FD items and
    compared coordinate by coordinate (:func:`coordinates`); the hand-written adjoints are always
    restored (and the restore checked) before it returns."""
    grads = {"program": _gradients(ctx, points)}
    targets = custom_adjoints(ctx.path)  # again: a program that defines its functions per call made new ones
    tmp = tempfile.mkdtemp(prefix="d4w-ablation-")
    try:
        adj = _Adjoints(targets, tmp, ctx.path)
    except AttributeError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        out["reason"] = f"this Warp release's Function lacks what the ablation swaps: {exc}"
        return
    out["errors"] = {}
    try:
        for mode in ("native", "zero"):
            try:
                getattr(adj, mode)()
                grads[mode] = _gradients(ctx, points)
            except Exception as exc:  # noqa: BLE001 - a mode Warp cannot build is recorded, not raised
                out["errors"][mode] = f"{type(exc).__name__}: {str(exc)[:300]}"
            if mode == "native" and _defined_anew(ctx.path, targets):
                out["errors"][mode] = ("gradient() defined the functions anew (e.g. a script run again per call): "
                                       "the ablation cannot reach the ones it uses")
                break
    finally:
        adj.restore()
        shutil.rmtree(tmp, ignore_errors=True)
    before, after = grads["program"], _gradients(ctx, points)
    diff = max((float(np.nanmax(np.abs(before[k] - after[k]))) if before[k].size else 0.0) for k in before)
    out["restored"] = {"identical": _same_bits(before, after), "max_abs_diff": finite_or_str(diff)}
    proj = {mode: _project(g, points) for mode, g in grads.items()}
    out["points"] = {k: {mode: proj[mode][k] for mode in proj} for k in points}
    out["status"] = "measured" if not out["errors"] else "not measured"
    if out["errors"]:
        out["reason"] = "a state of the adjoints could not be built: " + "; ".join(
            f"{m}: {e}" for m, e in out["errors"].items())
        return
    for k in points:
        out["points"][k]["coordinates"] = coordinates(grads["program"][k], grads["native"][k], grads["zero"][k],
                                                      ctx.flat)


def _defined_anew(folder: str, targets: list) -> bool:
    """Whether a function of ``folder`` with a hand-written adjoint exists that is none of ``targets``
    (called while their adjoints are removed: one that still has one was created since)."""
    ids = {id(ovl) for _, ovl in targets}
    return any(id(ovl) not in ids for _, ovl in custom_adjoints(folder))


def _equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise ``|a - b| <= REPEAT_RTOL * max(|a|, |b|)`` over the whole vectors (the tolerance of
    :func:`defects4warp.measure.compare.calls_identical`, two gradients being one); NaN equals NaN."""
    fa, fb = np.isfinite(a), np.isfinite(b)
    scale = max([float(np.max(np.abs(v[f]))) for v, f in ((a, fa), (b, fb)) if np.any(f)] + [1e-300])
    with np.errstate(invalid="ignore"):
        close = np.abs(a - b) <= compare.REPEAT_RTOL * scale
    return np.where(fa & fb, close, (np.isnan(a) & np.isnan(b)) | (a == b))


def coordinates(program: np.ndarray, native: np.ndarray, zero: np.ndarray, flat=None, examples: int = 4) -> dict:
    """Where the hand-written adjoints change the gradient, and whether the functions are flat there.

    Parameters
    ----------
    program, native, zero : ndarray, shape (n,), float64
        The program's gradient, the one with the hand-written adjoints removed, and the one with them
        stopped, at one point (objective units per unit param).
    flat : FlatParams, optional
        Names the coordinates of ``examples`` (``param``, ``index``); flat indexes without it.
    examples : int
        Changed coordinates listed, those where the function is smooth first.

    Returns
    -------
    dict
        ``n``; ``changed`` (coordinates where ``program`` and ``native`` differ: what the hand-written
        adjoints change); ``changed_where_flat`` (of those, where ``native`` equals ``zero``: the
        functions' own derivative adds nothing there) and ``changed_where_smooth`` (the rest);
        ``examples``. Equality is :func:`_equal` (relative :data:`defects4warp.measure.compare.REPEAT_RTOL`).
    """
    changed = ~_equal(program, native)
    smooth = changed & ~_equal(native, zero)
    order = [*np.flatnonzero(smooth), *np.flatnonzero(changed & ~smooth)][:examples]
    ex = []
    for i in order:
        name, j = flat.owner(int(i)) if flat is not None else (None, int(i))
        ex.append({"param": name, "index": j, "program": finite_or_str(program[i]), "native": finite_or_str(native[i]),
                   "zero": finite_or_str(zero[i])})
    return {"n": int(program.size), "changed": int(changed.sum()), "changed_where_flat": int((changed & ~smooth).sum()),
            "changed_where_smooth": int(smooth.sum()), "examples": ex}
