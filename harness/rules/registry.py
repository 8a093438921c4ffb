"""The source-rule registry: :func:`rule`, :class:`Rule`, :class:`Finding`.

Standard library only at import (the rules run in the parent process, next
to the harness, never inside a variant's interpreter). A rule declares its
evidence id (``rule:<name>``), not classes: which classes a finding of it
points at is the evidence table's (``harness/engines/evidence_table.yaml``,
read on first use of :attr:`Rule.classes`; its class names are checked
against the taxonomy when it is loaded).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Iterable

#: Weight a rule adds to its classes when it declares none (0..1).
DEFAULT_SPECIFICITY = 0.5

#: name -> :class:`Rule`, in registration order (the order rules run in).
REGISTRY: dict = {}


@dataclass(frozen=True)
class Rule:
    """One registered source rule.

    Attributes
    ----------
    name : str
        Rule id (the ``rule`` of its findings; its evidence id is ``rule:<name>``).
    specificity : float
        Weight in [0, 1] a finding adds to each of ``classes``; rules that also
        fire on correct code (a sqrt, a kernel updating its own array) weigh little.
    gate : str or None
        PEP 440 version specifier (e.g. ``"<1.14"``) of the Warp releases on
        which the pattern points at a class; None: every release.
    observed : bool
        True when the runtime trace (:mod:`defects4warp.measure.trace`) observes the
        behaviour directly, so that its findings replace the rule where it ran.
    summary : str
        One line: what the rule looks for.
    fn : callable
        ``fn(unit) -> Iterable[(node_or_line, detail, scope)]`` over one
        :class:`defects4warp.rules.unit.Unit`; a 4th element, when present, is the
        file (relative to the variant folder) the finding lies in, for
        findings reached through a call into another file.
    """

    name: str
    specificity: float
    gate: str | None
    observed: bool
    summary: str
    fn: Callable

    @property
    def evidence(self) -> str:
        """The evidence id the engine cites a finding of this rule as."""
        return f"rule:{self.name}"

    @property
    def classes(self) -> tuple:
        """Classes (ids of :data:`defects4warp.taxonomy.CLASSES`) a finding points at:
        the evidence table's rows for :attr:`evidence`, in row order."""
        from ..evidence_table import evidence_classes  # on first use: the table's reader needs PyYAML

        return evidence_classes(self.evidence)


def rule(name: str, *, classes=None, specificity: float = DEFAULT_SPECIFICITY, gate: str | None = None,
         observed: bool = False, summary: str = ""):
    """Decorator registering a detecting function as source rule ``name``.

    Parameters
    ----------
    name : str
        Unique rule id.
    classes : sequence of str, optional
        Not stored: the classes are the evidence table's rows for
        ``rule:<name>`` (:attr:`Rule.classes`). Accepted so that a rule
        written with it still registers; ``tests/test_rules.py`` checks that
        no registered rule's table rows are missing.
    specificity : float, default :data:`DEFAULT_SPECIFICITY` (0.5)
        Weight in [0, 1].
    gate : str, optional
        PEP 440 specifier of the releases the rule applies to (None: all).
    observed : bool, default False
        Whether the runtime trace observes the behaviour (see :class:`Rule`).
    summary : str, default ""
        One line for the registry table (defaults to the function's first
        docstring line).

    Raises
    ------
    ValueError
        When ``name`` is already registered or ``specificity`` lies outside [0, 1].
    """
    if not 0.0 <= float(specificity) <= 1.0:
        raise ValueError(f"rule {name!r}: specificity {specificity} outside [0, 1]")

    def deco(fn):
        if name in REGISTRY:
            raise ValueError(f"rule {name!r} registered twice")
        doc = (fn.__doc__ or "").strip().splitlines()
        REGISTRY[name] = Rule(name, float(specificity), gate, bool(observed),
                              summary or (doc[0] if doc else ""), fn)
        return fn

    return deco


@dataclass(frozen=True)
class Finding:
    """One source finding.

    Attributes
    ----------
    rule : str
        Key of the registry.
    file : str
        File name relative to the variant folder.
    line : int
        1-based line.
    detail : str
        What was seen, in words.
    classes : tuple[str, ...]
        Classes the finding points at (its rule's :attr:`Rule.classes`).
    scope : str
        The kernel or function the finding sits in ("" at module level).
    """

    rule: str
    file: str
    line: int
    detail: str
    classes: tuple
    scope: str = ""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["classes"] = list(self.classes)
        return d


def findings_of(r: Rule, unit) -> Iterable:
    """Run rule ``r`` on ``unit``; yields :class:`Finding` objects."""
    for item in r.fn(unit):
        node, detail, scope = item[:3]
        rel = item[3] if len(item) > 3 else unit.rel
        line = node if isinstance(node, int) else getattr(node, "lineno", 0)
        yield Finding(r.name, rel, line, detail, r.classes, scope)
