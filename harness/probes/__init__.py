"""Probes of the reference engine: one module each, chosen by an explicit list.

A probe is a small named unit with two halves, kept apart:

``measure(ctx, **knobs) -> dict | None``
    here, one module per probe: runs inside the measurement subprocess
    (:mod:`defects4warp.probes.worker`) on a shared
    :class:`defects4warp.probes.context.Context`, writes its data under
    ``ctx.doc[name]`` and returns it. Knobs are keyword parameters with
    documented defaults (:attr:`Probe.knobs`); ``--options`` of the worker
    overrides them per probe: ``{"knobs": {"fd": {"coords": 8}}}``.
``assess(doc, ctx=None) -> Assessment`` (and, for some, ``bug_evidence(doc, ctx)``)
    the interpretation half, in the engine layer: the module of the same name
    under :mod:`defects4warp.engines.assess` (with the assessor registry, the
    :class:`~defects4warp.engines.assess.Evidence` a probe cites and the
    evidence ids each may cite). It runs in the parent on the stored document,
    so an edit to it re-scores the stored measurements without staling one:
    a measurement's ``code`` provenance (:mod:`defects4warp.provenance`) names
    the modules the measuring process loaded, and no module here imports the
    engine layer.

Registering: decorate ``measure`` with :func:`probe`. The probe list is written
once, :data:`CATALOGUE`: which probes the worker, the engine and the release
differential measure, and which are assessed in which order (:data:`ASSESSED`,
the order :mod:`defects4warp.engines.assess` loads and the engine calls the
assessors in). The worker-side registry imports only NumPy (and Warp through
the problem), never an engine, so it runs in every per-release environment.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable


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


@dataclass(frozen=True)
class Entry:
    """One probe of :data:`CATALOGUE`: which lists it is on.

    Attributes
    ----------
    name : str
        The probe (its module under ``probes/`` has the same name).
    measured : bool
        A worker-side probe (a module under ``probes/`` that registers a :func:`probe`); False for an
        assessment of what no worker probe measures (the source, builtins, the release differential).
    engine : bool
        The reference engine measures it (:data:`ENGINE_PROBES`).
    worker : bool
        The worker measures it when no list is given (:data:`DEFAULT_PROBES`).
    differential : bool
        The release differential measures it on the other release (:data:`DIFFERENTIAL_PROBES`).
    assessed : int or None
        Its assessor's place among :data:`ASSESSED` (the order of its evidence entries in a
        diagnosis); None when the engine reads its data elsewhere (``reference``) or not at all.
    requested_by : str or None
        A worker-side probe on no list: the listed probe that asks for it
        (:meth:`defects4warp.probes.context.Context.request`) when what it measured calls for it; the
        worker runs it after its list, and imports its module only then, so the document (and the
        ``code`` provenance) of a program that never asks for it is what it was without it.
    """

    name: str
    measured: bool = True
    engine: bool = False
    worker: bool = False
    differential: bool = False
    assessed: int | None = None
    requested_by: str | None = None


#: The probe list, written once, in the order the worker runs them; every other list of probe
#: names (:data:`MODULES`, :data:`DEFAULT_PROBES`, :data:`ENGINE_PROBES`, :data:`DIFFERENTIAL_PROBES`,
#: :data:`ASSESSED`) is derived from it. The overwrite tracker is off the engine's list (the
#: runtime trace sees write-after-read directly, and the tracker makes Warp skip its kernel cache)
#: but is the worker's default and still assessed; ``gradcheck`` (Warp's own check) is measured
#: only when asked for; ``ablation`` (hand-written adjoints taken out) only when the step sweep
#: confirmed a disagreement in a program whose folder defines one (:attr:`Entry.requested_by`).
CATALOGUE = (
    Entry("determinism", engine=True, worker=True, differential=True, assessed=1),
    Entry("trace", engine=True, assessed=10),
    Entry("noise", engine=True, worker=True, differential=True, assessed=2),
    Entry("fd", engine=True, worker=True, differential=True, assessed=4),
    Entry("sweep", engine=True, worker=True, assessed=5),
    Entry("reference", engine=True, worker=True),
    Entry("nan_scan", engine=True, worker=True, assessed=3),
    Entry("tracker", worker=True, assessed=6),
    Entry("horizon", engine=True, worker=True, assessed=7),
    Entry("train", engine=True, worker=True, assessed=8),
    Entry("launches", engine=True, worker=True, assessed=9),
    Entry("gradcheck"),
    Entry("source", measured=False, assessed=11),
    Entry("builtins", measured=False, assessed=12),
    Entry("release", measured=False, assessed=13),
    Entry("ablation", requested_by="sweep", assessed=14),
)

#: Probe modules, imported on first use of the registry.
MODULES = tuple(e.name for e in CATALOGUE if e.measured and not e.requested_by)

#: Probes run only when a listed probe asks for them (:attr:`Entry.requested_by`), imported only then.
REQUESTED = tuple(e.name for e in CATALOGUE if e.requested_by)

#: The worker's probes when its options name none, in the order they run.
DEFAULT_PROBES = tuple(e.name for e in CATALOGUE if e.worker)

#: The reference engine's worker-side probes, in the order they run.
ENGINE_PROBES = tuple(e.name for e in CATALOGUE if e.engine)

#: The probes the release differential runs on the other release.
DIFFERENTIAL_PROBES = tuple(e.name for e in CATALOGUE if e.differential)

#: The assessors that turn a document into evidence entries and facts, in the order their entries
#: appear in a diagnosis; each is the module of the same name under :mod:`defects4warp.engines.assess`
#: (``source``, ``builtins`` and ``release`` included, which assess what no worker probe measures).
ASSESSED = tuple(e.name for e in sorted((e for e in CATALOGUE if e.assessed), key=lambda e: e.assessed))


def probe(name: str, **knobs):
    """Register ``measure(ctx, **knobs)`` as probe ``name`` with these default knobs."""

    def deco(fn):
        REGISTRY[name] = Probe(name, fn, dict(knobs), (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else "")
        return fn

    return deco


def load() -> dict:
    """Import every probe module of :data:`MODULES` (not those of :data:`REQUESTED`) and return :data:`REGISTRY`."""
    for m in MODULES:
        importlib.import_module(f"{__name__}.{m}")
    return REGISTRY


def get(name: str) -> Probe:
    """The probe called ``name`` (a probe of :data:`REQUESTED` has its module imported now).

    Raises
    ------
    KeyError
        Naming the known probes.
    """
    if name in REQUESTED:
        importlib.import_module(f"{__name__}.{name}")
    reg = load()
    if name not in reg:
        raise KeyError(f"unknown probe {name!r}; known: {', '.join(sorted(reg))}")
    return reg[name]
