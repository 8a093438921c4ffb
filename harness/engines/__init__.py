"""Engine registry. ``get_engine(name)`` builds an engine by name.

Engines implement :class:`harness.engines.base.Engine`. Built in:

``reference``      the reference engine (:mod:`harness.engines.reference`)
``fd-only``        end-to-end finite differences, signature table for the class
``tracker-only``   Warp's overwrite tracker alone
``static-only``    source findings alone, nothing run
``always-bug``     constant verdict ``bug``, class ``overwrite``
``always-no-bug``  constant verdict ``no_bug``, class ``correct``

Factories accept ``timeout_s`` and ``python`` (the interpreter of a
per-release environment); engines that run nothing ignore them.
"""

from __future__ import annotations

from .base import Engine, check_diagnosis, error_diagnosis
from .baselines import FdOnlyEngine, StaticOnlyEngine, TrackerOnlyEngine
from .reference import ReferenceEngine
from .trivial import ConstantEngine

ENGINES = {
    "reference": lambda **kw: ReferenceEngine(**kw),
    "fd-only": lambda **kw: FdOnlyEngine(**kw),
    "tracker-only": lambda **kw: TrackerOnlyEngine(**kw),
    "static-only": lambda **kw: StaticOnlyEngine(),
    "always-bug": lambda **kw: ConstantEngine("always-bug", "bug", "overwrite"),
    "always-no-bug": lambda **kw: ConstantEngine("always-no-bug", "no_bug", "correct"),
}


def get_engine(name: str, **kwargs) -> Engine:
    """Build the engine called ``name``.

    Raises
    ------
    KeyError
        If no engine has that name (the message lists the known ones).
    """
    try:
        factory = ENGINES[name]
    except KeyError:
        raise KeyError(f"unknown engine {name!r}; known: {', '.join(sorted(ENGINES))}") from None
    return factory(**kwargs)


__all__ = ["ENGINES", "Engine", "ReferenceEngine", "ConstantEngine", "get_engine", "check_diagnosis", "error_diagnosis"]
