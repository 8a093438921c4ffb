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

The table also holds the two other pieces of interpretation that were
constants in code: ``refusals`` (errors that mean the release refused to build
the program, and the classes each points at) and ``release_changes`` (the first
release of each change to adjoints, with its changelog entry: the releases the
release differential cites ``release_first_change:<release>`` for).

The file is checked against ``harness/schemas/evidence-table.schema.json``,
whose class enums are filled from :mod:`defects4warp.taxonomy` when it is
loaded (:func:`table_schema`), so the taxonomy is written once.

This module reads and checks the table and answers which classes an id's rows
name (:func:`evidence_classes`); it sits below the measuring code (the source
rules name their findings' classes with it) and imports only the taxonomy.
How the engine folds the weights into a ranking is
:mod:`defects4warp.engines.evidence`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

#: The table the engine reads by default.
TABLE_PATH = Path(__file__).with_name("engines") / "evidence_table.yaml"
MODES = ("allowed", "add", "lift", "late", "nobug", "replace")
#: Regular-expression flags a refusal may name (``flags:`` of a ``refusals`` entry).
REGEX_FLAGS = {"IGNORECASE": re.I, "DOTALL": re.S, "MULTILINE": re.M}


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
    refusals : tuple[tuple[re.Pattern, tuple[str, ...]], ...]
        ``(pattern, classes)`` in the table's order: an error message (with its
        traceback) that ``pattern`` matches means the Warp release refused to build
        or run the program, and ``classes`` are the defects the refusal guards
        against (the first match wins).
    release_changes : dict[str, str]
        First release of a change to adjoints -> its changelog entry (the text
        the release differential quotes).
    """

    rows: dict = field(default_factory=dict)
    modes: dict = field(default_factory=dict)
    scores: str = "normalised"
    meta: dict = field(default_factory=dict)
    refusals: tuple = ()
    release_changes: dict = field(default_factory=dict)

    def weights(self, eid: str) -> dict:
        """{class: weight} of evidence ``eid`` ({} when the table has no row for it)."""
        return self.rows.get(eid, {})

    def classes_of(self, eid: str) -> list:
        """The classes evidence ``eid`` supports, heaviest first."""
        return [c for c, _ in sorted(self.rows.get(eid, {}).items(), key=lambda kv: (-kv[1], kv[0]))]


def table_schema() -> dict:
    """The JSON Schema of an evidence table (``harness/schemas/evidence-table.schema.json``) with
    ``$defs.class_id`` limited to the taxonomy's classes and ``$defs.bug_class_id`` to its bug
    classes (:data:`defects4warp.taxonomy.CLASSES`, sorted)."""
    import json

    from .taxonomy import BUG_CLASSES, CLASSES

    text = resources.files(__name__.split(".")[0]).joinpath("schemas/evidence-table.schema.json").read_text()
    schema = json.loads(text)
    schema["$defs"]["class_id"]["enum"] = sorted(CLASSES)
    schema["$defs"]["bug_class_id"]["enum"] = sorted(BUG_CLASSES)
    return schema


def load_table(path=None) -> EvidenceTable:
    """Read and check an evidence table.

    Parameters
    ----------
    path : path-like, optional
        Default :data:`TABLE_PATH`.

    Raises
    ------
    EvidenceTableError
        The file breaks :func:`table_schema` (the message names the field, e.g.
        ``rows/12/class`` or ``refusals/0/classes/1``, and what is wrong: a row without
        id/class/weight/source, an unknown mode or class, a refusal naming a class that
        is no bug), a refusal's pattern does not compile, or one evidence id has rows of
        two modes.
    """
    return _load(str(path or TABLE_PATH))


@lru_cache(maxsize=8)
def _load(path: str) -> EvidenceTable:
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    _check_schema(path, doc)
    t = EvidenceTable(scores=doc["scores"], meta={k: doc.get(k) for k in ("fit", "description")},
                      release_changes=dict(doc.get("release_changes") or {}))
    refusals = []
    for i, r in enumerate(doc.get("refusals") or []):
        flags = 0
        for name in r.get("flags") or []:
            flags |= REGEX_FLAGS[name]
        try:
            refusals.append((re.compile(r["pattern"], flags), tuple(r["classes"])))
        except re.error as e:
            raise EvidenceTableError(f"{path}: refusals/{i}/pattern: {e}") from None
    t.refusals = tuple(refusals)
    for r in doc["rows"]:
        mode = r.get("mode", "add")
        if t.modes.setdefault(r["id"], mode) != mode:
            raise EvidenceTableError(f"{path}: evidence {r['id']} has rows of two modes")
        t.rows.setdefault(r["id"], {})
        t.rows[r["id"]][r["class"]] = t.rows[r["id"]].get(r["class"], 0.0) + float(r["weight"])
    return t


def _check_schema(path: str, doc) -> None:
    """Raise :class:`EvidenceTableError` naming ``path``, the field and the problem for the first
    violation of :func:`table_schema` in ``doc`` (in the order of the fields' paths)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(table_schema())
    errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        message = e.message
        if e.absolute_path and e.absolute_path[-1] == "class":
            message = f"{e.instance!r} is not a class of the taxonomy (harness/taxonomy.py) nor '*'"
        row = ""
        if len(e.absolute_path) >= 2 and e.absolute_path[0] == "rows":
            rid = (doc["rows"][e.absolute_path[1]] or {}).get("id")
            row = f" ({rid})" if rid else ""
        raise EvidenceTableError(f"{path}: {where}{row}: {message}")


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
