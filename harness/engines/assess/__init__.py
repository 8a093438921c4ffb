"""The probes' interpretation halves: one module per assessed probe, in the parent only.

A probe's measuring half (``measure``, :mod:`defects4warp.probes`) runs in the measurement
worker and writes its data under its key of the measurement document. Its interpretation half
lives here, in the module of the same name (``source``, ``builtins`` and ``release`` for the
assessments of what no worker probe measures):

``assess(doc, ctx=None) -> Assessment``
    a pure function of the measurement document and an :class:`AssessContext` (tested on
    synthetic documents): the evidence entries (sentences) the data supports, the facts other
    parts of the engine read, and the structured evidence it cites (:class:`Evidence`: an id,
    no class). Which classes an id supports, and how much, is the engine's evidence table;
    which probes run and which are assessed, and in which order, is the probe catalogue
    (:data:`defects4warp.probes.CATALOGUE`, :data:`defects4warp.probes.ASSESSED`).
``bug_evidence(doc, ctx) -> Assessment``
    where a probe has one: the evidence behind the class of a bug, read only when the verdict
    is ``bug`` (:data:`defects4warp.engines.reference.BUG_EVIDENCE` lists them in order).

Registering: decorate ``assess`` with :func:`assessor`, which also declares the evidence ids
the probe's interpretation may cite (:data:`CITES`); :func:`load` imports the module of every
assessed probe. No measuring process imports this package (the worker never does, and a
stored measurement's ``code`` provenance names only the modules that measured it,
:mod:`defects4warp.provenance`): an edit here re-scores the committed measurements from the
store (``defects4warp maint pages --rescore``) and stales none of them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from ...probes import ASSESSED


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


#: Assessor name -> ``assess(doc, ctx) -> Assessment`` (filled by :func:`assessor`; :func:`load` imports them all).
ASSESSORS: dict = {}


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
    """Import the assessor module of every probe of :data:`defects4warp.probes.ASSESSED` (this
    package's module of the same name) and return :data:`ASSESSORS`."""
    for name in ASSESSED:
        importlib.import_module(f"{__name__}.{name}")
    return ASSESSORS
