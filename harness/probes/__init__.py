"""Probes of the reference engine: one module each, chosen by an explicit list.

A probe is a small named unit with two halves:

``measure(ctx, **knobs) -> dict | None``
    runs inside the measurement subprocess (:mod:`harness.probes.worker`)
    on a shared :class:`harness.probes.context.Context`, writes its data
    under ``ctx.doc[name]`` and returns it. Knobs are keyword parameters with
    documented defaults (:attr:`Probe.knobs`); ``--options`` of the worker
    overrides them per probe: ``{"knobs": {"fd": {"coords": 8}}}``.
``assess(doc, **info) -> Assessment``
    a pure function of the measurement document (run in the parent, tested on
    synthetic documents): the evidence entries the data supports and the
    weight it adds to each class. The engine sums the weights; which probes
    run and which are assessed is the engine's list.

Registering: decorate ``measure`` with :func:`probe` and ``assess`` with
:func:`assessor`. The worker-side registry imports only NumPy (and Warp
through the problem), never an engine, so it runs in every per-release
environment.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Assessment:
    """What one probe's data says.

    Attributes
    ----------
    evidence : list[dict]
        ``{"probe", "clean", "finding", "data"}`` entries (see
        :func:`harness.engines.base.ev`), clean checks included.
    weights : dict[str, float]
        Weight added to each class id (relative; the engine normalises).
    facts : dict
        Named conclusions other parts of the engine read (e.g.
        ``{"artefact": "kink"}``).
    """

    evidence: list = field(default_factory=list)
    weights: dict = field(default_factory=dict)
    facts: dict = field(default_factory=dict)

    def add(self, probe: str, clean: bool, finding: str, data=None) -> None:
        """Append one evidence entry."""
        self.evidence.append({"probe": probe, "clean": bool(clean), "finding": finding, "data": data})

    def weigh(self, cls: str, w: float) -> None:
        """Add ``w`` to class ``cls``."""
        self.weights[cls] = self.weights.get(cls, 0.0) + float(w)


@dataclass(frozen=True)
class Probe:
    """A registered probe.

    Attributes
    ----------
    name : str
        The key it writes in the measurement document and its name in lists.
    measure : callable
        ``measure(ctx, **knobs)`` (worker side).
    knobs : dict
        Default knob values (the keyword parameters of ``measure``).
    summary : str
        First line of ``measure``'s docstring.
    """

    name: str
    measure: Callable
    knobs: dict
    summary: str


REGISTRY: dict = {}
ASSESSORS: dict = {}

#: Probe modules, imported on first use of the registry.
MODULES = ("determinism", "noise", "fd", "sweep", "reference", "nan_scan", "tracker", "horizon", "train",
           "launches", "trace", "gradcheck")

#: The reference engine's worker-side probes, in the order they run.
DEFAULT_PROBES = ("determinism", "noise", "fd", "sweep", "reference", "nan_scan", "tracker", "horizon", "train",
                  "launches")


def probe(name: str, **knobs):
    """Register ``measure(ctx, **knobs)`` as probe ``name`` with these default knobs."""

    def deco(fn):
        REGISTRY[name] = Probe(name, fn, dict(knobs), (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else "")
        return fn

    return deco


def assessor(name: str):
    """Register ``assess(doc, **info) -> Assessment`` for probe ``name``."""

    def deco(fn):
        ASSESSORS[name] = fn
        return fn

    return deco


def load() -> dict:
    """Import every probe module and return :data:`REGISTRY`."""
    for m in MODULES:
        importlib.import_module(f"{__name__}.{m}")
    return REGISTRY


def get(name: str) -> Probe:
    """The probe called ``name``.

    Raises
    ------
    KeyError
        Naming the known probes.
    """
    reg = load()
    if name not in reg:
        raise KeyError(f"unknown probe {name!r}; known: {', '.join(sorted(reg))}")
    return reg[name]
