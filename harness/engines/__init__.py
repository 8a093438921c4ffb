"""Engine registry. ``get_engine(name)`` builds an engine by name.

Engines implement :class:`harness.engines.base.Engine`. Built in:

``reference``      the reference engine (:mod:`harness.engines.reference`)
``always-bug``     constant verdict ``bug``, class ``overwrite``
``always-no-bug``  constant verdict ``no_bug``, class ``correct``
"""

from __future__ import annotations

from .base import Engine, check_diagnosis, error_diagnosis
from .reference import ReferenceEngine
from .trivial import ConstantEngine

ENGINES = {
    "reference": lambda **kw: ReferenceEngine(**kw),
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
