"""The Problem protocol and the loader of a variant's ``problem.py``.

A variant folder holds ``problem.py`` defining ``make_problem(device, scale)``;
the object it returns is duck-typed (see docs/case-format.md):

``params``             dict[str, wp.array]   arrays with requires_grad=True
``objective()``        -> float               pristine forward, no tape
``gradient()``         -> dict[str, ndarray]  the user's gradient, one iteration
``train(n)``           optional -> list[float]
``set_seed(seed)``     optional
``reference_gradient()`` optional -> dict[str, ndarray]
``steps``              optional int

This module is imported inside the measurement subprocess, never by the
parent harness process (a variant can crash the interpreter).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REQUIRED = ("params", "objective", "gradient")
OPTIONAL = ("train", "set_seed", "reference_gradient", "steps")
MODULE_NAME = "problem"


class ProblemError(RuntimeError):
    """A variant does not follow the Problem protocol (names the file and member)."""


def import_variant(path: str | Path):
    """Import ``path/problem.py`` as the top-level module ``problem``.

    The variant folder is put first on ``sys.path`` so that sibling modules are
    found by plain absolute imports.

    Raises
    ------
    ProblemError
        If the folder has no ``problem.py`` or it defines no ``make_problem``.
    """
    path = Path(path).resolve()
    src = path / "problem.py"
    if not src.is_file():
        raise ProblemError(f"{src}: file not found")
    sys.path.insert(0, str(path))
    spec = importlib.util.spec_from_file_location(MODULE_NAME, src)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    spec.loader.exec_module(module)
    if not callable(getattr(module, "make_problem", None)):
        raise ProblemError(f"{src}: defines no callable make_problem(device, scale)")
    return module


def check_problem(problem, src: str = "problem.py") -> dict:
    """Check the protocol members of a made problem.

    Returns
    -------
    dict
        ``{"optional": {name: bool}, "params": {name: {"shape", "dtype", "size"}}}``.

    Raises
    ------
    ProblemError
        Naming the missing or malformed member.
    """
    import warp as wp

    for name in REQUIRED:
        if not hasattr(problem, name):
            raise ProblemError(f"{src}: make_problem() returned an object without '{name}'")
    for name in ("objective", "gradient"):
        if not callable(getattr(problem, name)):
            raise ProblemError(f"{src}: '{name}' is not callable")
    params = problem.params
    if not isinstance(params, dict) or not params:
        raise ProblemError(f"{src}: 'params' must be a non-empty dict of wp.array")
    info = {}
    for k, a in params.items():
        if not isinstance(a, wp.array):
            raise ProblemError(f"{src}: params['{k}'] is {type(a).__name__}, not a wp.array")
        if not a.requires_grad:
            raise ProblemError(f"{src}: params['{k}'] has requires_grad=False")
        view = a.numpy()
        if str(view.dtype) not in ("float32", "float64"):
            raise ProblemError(f"{src}: params['{k}'] has scalar type {view.dtype}; use float32 or float64")
        info[k] = {"shape": list(view.shape), "dtype": str(view.dtype), "size": int(view.size)}
    optional = {name: hasattr(problem, name) and getattr(problem, name) is not None for name in OPTIONAL}
    return {"optional": optional, "params": info}
