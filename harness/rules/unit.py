"""The parsed unit a source rule reads: one file of a variant, with the
passes over the whole folder computed once and shared.

Standard library only.
"""

from __future__ import annotations

import ast
from functools import cached_property
from pathlib import Path

from ..kernel_access import kernel_access_detail
from ._ast import (_allocs_without_grad, _counter_funcs, _deco_kind, _is_true, _kw, _launch_outputs,
                   _mixed_allocations, _module_constants, _mutating_functions, _struct_params)


class Project:
    """Every parsable ``.py`` file of a variant folder and the cross-file facts.

    Parameters
    ----------
    parsed : list of (str, ast.Module)
        (path relative to the folder, module tree), sorted by path.

    Attributes (computed once, on first use)
    ----------------------------------------
    constants : set[str]
        ``wp.constant`` names and upper-case integer module constants (loop
        bounds that are compile-time).
    any_grad : bool
        Some call passes ``requires_grad=True``.
    kernels : dict[str, tuple]
        Kernel name -> (params, read, written, assigned, struct params), from
        :func:`defects4warp.kernel_access.kernel_access_detail`.
    outputs : set[str]
        Last names of the arrays launches write.
    mutating : set[str]
        Host functions that launch or write arrays in place (transitively).
    counters, replayed : set[str]
        ``@wp.func`` returning an atomic counter's value; functions having a
        ``@wp.func_replay``.
    grad_readers : set[str]
        Host functions that read a ``.grad``.
    host_fns : dict[str, (str, ast.FunctionDef)]
        Uniquely named host functions (not ``objective``/``gradient``) that
        the access pass inlines.
    calls : list of (str, ast.Call)
        Every call, by file.
    """

    def __init__(self, parsed):
        self.parsed = list(parsed)
        self.trees = [t for _, t in self.parsed]

    @classmethod
    def from_folder(cls, folder) -> "Project":
        """Parse every ``.py`` under ``folder``; files that do not parse
        (SyntaxError, bad encoding, NUL bytes) are skipped."""
        folder = Path(folder)
        parsed = []
        from ..paths import program_files

        for py in program_files(folder):
            try:
                parsed.append((str(py.relative_to(folder)), ast.parse(py.read_text(encoding="utf-8"), filename=str(py))))
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
        return cls(parsed)

    def units(self) -> list:
        """One :class:`Unit` per parsed file, in path order."""
        return [Unit(rel, tree, self) for rel, tree in self.parsed]

    @cached_property
    def constants(self) -> set:
        return set().union(*(_module_constants(t) for t in self.trees)) if self.trees else set()

    @cached_property
    def any_grad(self) -> bool:
        return any(_is_true(_kw(c, "requires_grad")) for t in self.trees for c in ast.walk(t) if isinstance(c, ast.Call))

    @cached_property
    def kernels(self) -> dict:
        return {fn.name: kernel_access_detail(fn) + (_struct_params(fn),) for t in self.trees for fn in ast.walk(t)
                if isinstance(fn, ast.FunctionDef) and _deco_kind(fn) == "kernel"}

    @cached_property
    def outputs(self) -> set:
        return set().union(*(_launch_outputs(t, self.kernels) for t in self.trees)) if self.trees else set()

    @cached_property
    def mutating(self) -> set:
        return _mutating_functions(self.trees)

    @cached_property
    def _counters_replayed(self) -> tuple:
        return _counter_funcs(self.trees)

    @property
    def counters(self) -> set:
        return self._counters_replayed[0]

    @property
    def replayed(self) -> set:
        return self._counters_replayed[1]

    @cached_property
    def grad_readers(self) -> set:
        return {fn.name for t in self.trees for fn in ast.walk(t) if isinstance(fn, ast.FunctionDef)
                and not _deco_kind(fn) and any(isinstance(a, ast.Attribute) and a.attr == "grad"
                                               and isinstance(a.ctx, ast.Load) for a in ast.walk(fn))}

    @cached_property
    def host_fns(self) -> dict:
        fns = [fn for t in self.trees for fn in ast.walk(t) if isinstance(fn, ast.FunctionDef) and not _deco_kind(fn)]
        names = [fn.name for fn in fns]
        return {fn.name: (rel, fn) for rel, t in self.parsed for fn in ast.walk(t)
                if isinstance(fn, ast.FunctionDef) and not _deco_kind(fn)
                and names.count(fn.name) == 1 and fn.name not in ("objective", "gradient")}

    @cached_property
    def calls(self) -> list:
        return [(rel, c) for rel, t in self.parsed for c in ast.walk(t) if isinstance(c, ast.Call)]


class Unit:
    """One file of a variant as the rules see it.

    Attributes
    ----------
    rel : str
        Path relative to the variant folder.
    tree : ast.Module
        Its module tree.
    project : Project
        The folder it belongs to (cross-file facts).
    kernels : list of (ast.FunctionDef, str)
        Functions with a Warp decorator and its kind (``kernel``, ``func``,
        ``func_grad``, ``func_replay``, ``func_native``), in ``ast.walk`` order.
    host_functions : list of ast.FunctionDef
        Every other function (methods and nested functions included).
    """

    def __init__(self, rel: str, tree: ast.Module, project: Project):
        self.rel, self.tree, self.project = rel, tree, project
        self._cache = {}

    @cached_property
    def functions(self) -> list:
        return [n for n in ast.walk(self.tree) if isinstance(n, ast.FunctionDef)]

    @cached_property
    def kernels(self) -> list:
        return [(fn, k) for fn in self.functions for k in [_deco_kind(fn)] if k]

    @cached_property
    def host_functions(self) -> list:
        return [fn for fn in self.functions if not _deco_kind(fn)]

    def cached(self, key, compute):
        """``compute()`` once per unit and ``key`` (for passes several rules share)."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def kernel_info(self, fn) -> dict:
        """Parameter facts of a Warp function: ``params`` (set), ``array_params``
        (annotated with an array type), ``struct_params`` (annotated with a
        capitalised name that is not an array)."""
        def compute():
            params = {a.arg for a in fn.args.args}
            annotations = {a.arg: a.annotation for a in fn.args.args}
            array_params = {n for n, a in annotations.items() if a is not None and "array" in ast.dump(a)}
            struct_params = {n for n, a in annotations.items() if a is not None and n not in array_params
                             and isinstance(a, ast.Name) and a.id[:1].isupper()}
            return {"params": params, "array_params": array_params, "struct_params": struct_params}
        return self.cached(("kernel_info", id(fn)), compute)

    @cached_property
    def allocs_without_grad(self) -> list:
        return _allocs_without_grad(self.tree)

    @cached_property
    def mixed_allocations(self) -> set:
        return _mixed_allocations(self.tree)

    @cached_property
    def calls(self) -> list:
        """Every call of the file, in ``ast.walk`` order."""
        return [n for n in ast.walk(self.tree) if isinstance(n, ast.Call)]

