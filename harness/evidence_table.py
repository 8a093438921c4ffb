"""The declared evidence table: which evidence id supports which class, and how much.

One table (``harness/engines/evidence_table.yaml``, the reference engine's
data) maps every evidence id a probe, a source rule or a trace detector can
cite to class weights, one row per (evidence id, class)::

    - id: trace:write_after_read      # the evidence
      class: overwrite                # the class it supports ("*": every bug class
                                      #   the taxonomy allows under the signature)
      weight: 1.2
      mode: add                       # how the engine folds it (:mod:`defects4warp.engines.evidence`)
      source: "hand-set v3 (commit 54fc692): TRACE_WEIGHT in harness/engines/reference.py"

Each row says where its number comes from: ``hand-set v3`` with the old
constant's location, or ``fitted`` with the fit's date and data
(``defects4warp maint fit-weights``, :mod:`defects4warp.engines.fit`).

This module reads and checks the table and answers which classes an id's rows
name (:func:`evidence_classes`); it sits below the measuring code (the source
rules name their findings' classes with it) and imports only the taxonomy.
How the engine folds the weights into a ranking is
:mod:`defects4warp.engines.evidence`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

#: The table the engine reads by default.
TABLE_PATH = Path(__file__).with_name("engines") / "evidence_table.yaml"
MODES = ("allowed", "add", "lift", "late", "nobug", "replace")


class EvidenceTableError(ValueError):
    """The evidence table is malformed (the message names the row)."""


@dataclass
class EvidenceTable:
    """A loaded evidence table.

    Attributes
    ----------
    rows : dict[str, dict[str, float]]
        evidence id -> {class id: weight}.
    modes : dict[str, str]
        evidence id -> mode (:data:`MODES`).
    scores : str
        ``normalised`` or ``softmax``.
    meta : dict
        ``fit`` (None for hand-set) and ``description``.
    """

    rows: dict = field(default_factory=dict)
    modes: dict = field(default_factory=dict)
    scores: str = "normalised"
    meta: dict = field(default_factory=dict)

    def weights(self, eid: str) -> dict:
        """{class: weight} of evidence ``eid`` ({} when the table has no row for it)."""
        return self.rows.get(eid, {})

    def classes_of(self, eid: str) -> list:
        """The classes evidence ``eid`` supports, heaviest first."""
        return [c for c, _ in sorted(self.rows.get(eid, {}).items(), key=lambda kv: (-kv[1], kv[0]))]


def load_table(path=None) -> EvidenceTable:
    """Read and check an evidence table.

    Parameters
    ----------
    path : path-like, optional
        Default :data:`TABLE_PATH`.

    Raises
    ------
    EvidenceTableError
        A row without id/class/weight/source, an unknown mode or class, or one
        evidence id with two modes.
    """
    return _load(str(path or TABLE_PATH))


@lru_cache(maxsize=8)
def _load(path: str) -> EvidenceTable:
    from .taxonomy import CLASSES

    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    t = EvidenceTable(scores=doc.get("scores", "normalised"), meta={k: doc.get(k) for k in ("fit", "description")})
    if t.scores not in ("normalised", "softmax"):
        raise EvidenceTableError(f"{path}: scores must be normalised or softmax, not {t.scores!r}")
    for i, r in enumerate(doc.get("rows") or []):
        missing = [k for k in ("id", "class", "weight", "source") if k not in r]
        if missing:
            raise EvidenceTableError(f"{path}: row {i} lacks {', '.join(missing)}")
        mode = r.get("mode", "add")
        if mode not in MODES:
            raise EvidenceTableError(f"{path}: row {i} ({r['id']}): unknown mode {mode!r}")
        if r["class"] != "*" and r["class"] not in CLASSES:
            raise EvidenceTableError(f"{path}: row {i} ({r['id']}): unknown class {r['class']!r}")
        if t.modes.setdefault(r["id"], mode) != mode:
            raise EvidenceTableError(f"{path}: evidence {r['id']} has rows of two modes")
        t.rows.setdefault(r["id"], {})
        t.rows[r["id"]][r["class"]] = t.rows[r["id"]].get(r["class"], 0.0) + float(r["weight"])
    return t


def clear_cache() -> None:
    """Forget every table read so far, so that the next :func:`load_table` reads its file again
    (after :func:`defects4warp.engines.fit.write_table` rewrote it)."""
    _load.cache_clear()

def evidence_classes(eid: str, table: EvidenceTable | None = None) -> tuple:
    """The classes the table's rows for evidence ``eid`` name, in row order (``*`` left out).

    This is what a source rule's or a trace finding's ``classes`` are: the
    rules and detectors declare only their evidence id (``rule:<name>``,
    ``trace:<finding id>``); which classes that evidence points at, and how
    much, is the table's (its class names checked against the taxonomy when
    it is loaded).

    Parameters
    ----------
    eid : str
        Evidence id.
    table : EvidenceTable, optional
        Default: the engine's table (:data:`TABLE_PATH`).

    Returns
    -------
    tuple[str, ...]
        Empty when the table has no row for ``eid``.
    """
    t = table or load_table()
    return tuple(c for c in t.rows.get(eid, {}) if c != "*")
