"""Engine registry. ``get_engine(name)`` builds an engine by name.

Engines implement :class:`defects4warp.engines.base.Engine`. Built in:

``reference``      the reference engine (:mod:`defects4warp.engines.reference`)
``fd-only``        end-to-end finite differences, signature table for the class
``tracker-only``   Warp's overwrite tracker alone
``warp-gradcheck`` ``wp.autograd.gradcheck_tape`` on the recorded tape plus the overwrite tracker (detection only)
``static-only``    source findings alone, nothing run
``always-bug``     constant verdict ``bug``, class ``overwrite``
``always-no-bug``  constant verdict ``no_bug``, class ``correct``
``cmd:"<command>"`` an outside tool in any language (:mod:`defects4warp.engines.command`)

Factories accept ``timeout_s`` and ``python`` (the interpreter of a
per-release environment); engines that run nothing ignore them.
"""

from __future__ import annotations

from .base import Engine, check_diagnosis, error_diagnosis
from .command import PREFIX, CommandEngine
from .baselines import FdOnlyEngine, StaticOnlyEngine, TrackerOnlyEngine
from .reference import ReferenceEngine
from .gradcheck import WarpGradcheckEngine
from .trivial import ConstantEngine

ENGINES = {
    "reference": lambda **kw: ReferenceEngine(**kw),
    "fd-only": lambda **kw: FdOnlyEngine(**kw),
    "tracker-only": lambda **kw: TrackerOnlyEngine(**kw),
    "warp-gradcheck": lambda **kw: WarpGradcheckEngine(**kw),
    "static-only": lambda **kw: StaticOnlyEngine(),
    "always-bug": lambda **kw: ConstantEngine("always-bug", "bug", "overwrite"),
    "always-no-bug": lambda **kw: ConstantEngine("always-no-bug", "no_bug", "correct"),
}


#: Entry-point group through which installed packages register engines: an
#: entry point ``name = "module:factory"`` whose factory accepts the keyword
#: arguments ``timeout_s`` and ``python`` (it may ignore them).
ENTRY_POINT_GROUP = "defects4warp.engines"


def plugin_engines() -> dict:
    """Engines registered by installed packages, name -> entry point."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def engine_names() -> list:
    """Built-in and installed engine names, sorted."""
    return sorted(set(ENGINES) | set(plugin_engines()))


def get_engine(name: str, **kwargs) -> Engine:
    """Build the engine called ``name`` (built in, or registered through the
    ``defects4warp.engines`` entry-point group).

    Raises
    ------
    KeyError
        If no engine has that name (the message lists the known ones).
    """
    if name.startswith(PREFIX):
        return CommandEngine(name[len(PREFIX):], **{k: v for k, v in kwargs.items() if k in ("timeout_s", "with_summary")})
    kwargs.pop("with_summary", None)
    if name in ENGINES:
        return ENGINES[name](**kwargs)
    plugins = plugin_engines()
    if name in plugins:
        return plugins[name].load()(**kwargs)
    raise KeyError(f"unknown engine {name!r}; known: {', '.join(engine_names())}")


__all__ = ["ENGINES", "ENTRY_POINT_GROUP", "engine_names", "plugin_engines", "Engine", "ReferenceEngine", "ConstantEngine", "get_engine", "check_diagnosis", "error_diagnosis"]
