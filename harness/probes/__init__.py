"""Probes of the reference engine: one module each, chosen by an explicit list.

A probe is a small named unit with two halves:

``measure(ctx, **knobs) -> dict | None``
    runs inside the measurement subprocess (:mod:`defects4warp.probes.worker`)
    on a shared :class:`defects4warp.probes.context.Context`, writes its data
    under ``ctx.doc[name]`` and returns it. Knobs are keyword parameters with
    documented defaults (:attr:`Probe.knobs`); ``--options`` of the worker
    overrides them per probe: ``{"knobs": {"fd": {"coords": 8}}}``.
``assess(doc, ctx=None) -> Assessment``
    a pure function of the measurement document and an :class:`AssessContext`
    (run in the parent, tested on synthetic documents): the evidence entries (sentences) the data supports,
    the facts other parts of the engine read, and the structured evidence it
    cites (:class:`Evidence`: an id, no class). Which classes an id supports,
    and how much, is the engine's evidence table; which probes run and which
    are assessed is the engine's list.

Registering: decorate ``measure`` with :func:`probe` and ``assess`` with
:func:`assessor`, which also declares the evidence ids it may cite. A probe's
bug-evidence half (the evidence behind the class of a bug, read only when the
verdict is ``bug``) has the same form, ``bug_evidence(doc, ctx) -> Assessment``.
The probe list is written once, :data:`CATALOGUE`. The worker-side registry imports only NumPy (and Warp
through the problem), never an engine, so it runs in every per-release
environment.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Evidence:
    """One piece of structured evidence: what a probe measured that bears on a class.

    Which classes it supports, and by how much, is not here: that is the
    engine's evidence table (``harness/engines/evidence_table.yaml``, read by
    :mod:`defects4warp.engines.evidence`), one row per (evidence id, class).

    Attributes
    ----------
    id : str
        Row id in the evidence table (e.g. ``trace:write_after_read``,
        ``later_calls_zero``, ``rule:inplace_array_op``).
    probe : str
        The probe that measured it.
    sentence : str
        What was measured, in words (may be empty when an evidence entry of
        the diagnosis already says it).
    data : any
        The measured fields (JSON-serialisable).
    strength : float
        Multiplier of the table's weights (default 1.0; e.g. 1/n for one of
        n tracker warnings, 0.5 for source findings without line coverage).
    """

    id: str
    probe: str
    sentence: str = ""
    data: object = None
    strength: float = 1.0

    def to_dict(self) -> dict:
        return {"id": self.id, "probe": self.probe, "sentence": self.sentence, "strength": self.strength}


@dataclass
class Assessment:
    """What one probe's data says.

    Attributes
    ----------
    evidence : list[dict]
        ``{"probe", "clean", "finding", "data"}`` entries (see
        :func:`defects4warp.engines.base.ev`), clean checks included.
    weights : dict[str, float]
        Class weights an outside assessor may add with :meth:`weigh`; the
        reference engine reads none (its weights are the evidence table's,
        keyed by the ids in ``cited``), and no assessor of this package adds any.
    facts : dict
        Named conclusions other parts of the engine read (e.g.
        ``{"artefact": "kink"}``).
    cited : list[Evidence]
        Structured evidence for the engine's evidence table (:meth:`cite`).
    """

    evidence: list = field(default_factory=list)
    weights: dict = field(default_factory=dict)
    facts: dict = field(default_factory=dict)
    cited: list = field(default_factory=list)

    def cite(self, id: str, probe: str, sentence: str = "", data=None, strength: float = 1.0) -> None:
        """Append one :class:`Evidence` (its class weights come from the evidence table)."""
        self.cited.append(Evidence(id, probe, sentence, data, float(strength)))

    def add(self, probe: str, clean: bool, finding: str, data=None) -> None:
        """Append one evidence entry."""
        self.evidence.append({"probe": probe, "clean": bool(clean), "finding": finding, "data": data})

    def weigh(self, cls: str, w: float) -> None:
        """Add ``w`` to class ``cls``."""
        self.weights[cls] = self.weights.get(cls, 0.0) + float(w)


@dataclass
class AssessContext:
    """What an assessor reads besides the measurement document: ``assess(doc, ctx) -> Assessment``.

    Attributes
    ----------
    table : EvidenceTable or None
        The evidence table (:mod:`defects4warp.evidence_table`; None: the engine's default).
    warp_version : str or None
        The release the document was measured on.
    path : path-like or None
        The variant folder (source evidence, builtins of launched kernels); None: none read.
    findings : list or None
        Source findings to use instead of scanning ``path`` (tests; no coverage gating).
    differential : dict or None
        The release differential's result (:func:`defects4warp.engines.release.differential`).
    signature : str or None
        The signature of a bug (set before the bug-evidence halves run).
    assessed : dict[str, Assessment]
        The assessments made so far in this interpretation, by assessor name.
    """

    table: object = None
    warp_version: str | None = None
    path: object = None
    findings: list | None = None
    differential: dict | None = None
    signature: str | None = None
    assessed: dict = field(default_factory=dict)

    def facts(self, name: str) -> dict:
        """The facts of assessment ``name`` ({} when it has not run)."""
        a = self.assessed.get(name)
        return a.facts if a is not None else {}

    @property
    def inplace_scopes(self) -> set:
        """Kernels where a counted source finding saw ``*=``/``/=`` (the source assessment's facts)."""
        return set(self.facts("source").get("inplace_scopes", []))


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
#: appear in a diagnosis (``source`` in :mod:`defects4warp.probes.source`, ``builtins`` and ``release``
#: in :mod:`defects4warp.engines.release`).
ASSESSED = tuple(e.name for e in sorted((e for e in CATALOGUE if e.assessed), key=lambda e: e.assessed))


def probe(name: str, **knobs):
    """Register ``measure(ctx, **knobs)`` as probe ``name`` with these default knobs."""

    def deco(fn):
        REGISTRY[name] = Probe(name, fn, dict(knobs), (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else "")
        return fn

    return deco


def assessor(name: str, *, cites=(), probe: str | None = None):
    """Register ``assess(doc, ctx=None) -> Assessment`` for probe ``name``, with the evidence ids it may cite.

    Parameters
    ----------
    name : str
        The probe (or, for an assessor of no worker probe, its name: ``source``, ``builtins``,
        ``release``).
    cites : iterable of str
        Every evidence id the probe's interpretation half may cite (its assessor and its bug-evidence
        half), each a row id of the evidence table or a family ``prefix:*`` (ids the measurement
        names, such as ``trace:<finding id>``); see :func:`declare_cites`.
    probe : str, optional
        The ``probe`` its :class:`Evidence` carries (default ``name``).
    """

    def deco(fn):
        ASSESSORS[name] = fn
        declare_cites(name, {probe or name: tuple(cites)})
        return fn

    return deco


#: Which evidence ids each citing party may cite: party -> {the ``probe`` its evidence carries:
#: (id or ``prefix:*``, ...)}. Filled by :func:`assessor` and :func:`declare_cites`; a test checks it
#: against the evidence table and against what the committed measurements cite.
CITES: dict = {}


def declare_cites(party: str, by_probe: dict) -> None:
    """Declare the evidence ids a citing party may cite, per the ``probe`` its :class:`Evidence` carries.

    Used by :func:`assessor` and by citing code that is no probe's assessor (the engine's verdict
    rules, which cite under the name of the probe whose data they read).

    Raises
    ------
    ValueError
        When ``party`` was declared before with other ids.
    """
    by_probe = {k: tuple(v) for k, v in by_probe.items()}
    if CITES.setdefault(party, by_probe) != by_probe:
        raise ValueError(f"citing party {party!r} declared twice with other evidence ids")


def id_matches(eid: str, pattern: str) -> bool:
    """Whether evidence id ``eid`` is ``pattern`` or in its family (``pattern`` ``prefix:*``)."""
    return eid.startswith(pattern[:-1]) if pattern.endswith(":*") else eid == pattern


def declared(eid: str, probe: str) -> list:
    """The parties that declared ``eid`` under ``probe`` (:data:`CITES`)."""
    return [party for party, by in CITES.items() if any(id_matches(eid, p) for p in by.get(probe, ()))]


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
