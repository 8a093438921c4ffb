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
rules name their findings' classes with it) and imports nothing of the package
but the taxonomy (besides PyYAML, and jsonschema when a table is checked).
How the engine folds the weights into a ranking is
:mod:`defects4warp.engines.evidence`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jsonschema
import yaml

from .taxonomy import BUG_CLASSES, CLASSES

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
        The file cannot be read or is not YAML; it breaks :func:`table_schema` (every
        violation, each naming the field, e.g. ``rows/12/class`` or ``refusals/0/classes/1``,
        and what is wrong: a row without id/class/weight/source, an unknown mode or class,
        a refusal naming a class that is no bug); or a refusal's pattern does not compile,
        a ``release_changes`` key is not a string, a weight is not finite, two rows name one
        (evidence id, class), one evidence id has rows of two modes, or the changelog
        releases and the ``release_first_change:<release>`` rows do not match.
    """
    return _load(str(path or TABLE_PATH))


@lru_cache(maxsize=8)
def _load(path: str) -> EvidenceTable:
    doc = _read(path)
    problems = _schema_problems(doc) or _semantic_problems(doc)
    if problems:
        raise EvidenceTableError(f"{path}: " + (problems[0] if len(problems) == 1 else
                                                f"{len(problems)} problems:\n  - " + "\n  - ".join(problems)))
    t = EvidenceTable(scores=doc["scores"], meta={k: doc.get(k) for k in ("fit", "description")},
                      release_changes=dict(doc.get("release_changes") or {}))
    refusals = []
    for r in doc.get("refusals") or []:
        flags = 0
        for name in r.get("flags") or []:
            flags |= REGEX_FLAGS[name]
        refusals.append((re.compile(r["pattern"], flags), tuple(r["classes"])))
    t.refusals = tuple(refusals)
    for r in doc["rows"]:
        t.modes.setdefault(r["id"], r.get("mode", "add"))
        t.rows.setdefault(r["id"], {})[r["class"]] = float(r["weight"])
    return t


def _read(path: str):
    """The YAML document at ``path``; :class:`EvidenceTableError` naming the file when it cannot be read or
    parsed. Read with PyYAML's C safe loader (libyaml) where PyYAML has it, as
    :func:`defects4warp.jsonio.load_yaml` does (the same document): the pure-Python scanner took about
    0.07 of the 0.15 CPU-s a diagnosis spends interpreting its measurement (2026-12-04)."""
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, UnicodeDecodeError) as exc:
        raise EvidenceTableError(f"{path}: cannot read the evidence table: {type(exc).__name__}: {exc}") from None
    except yaml.YAMLError as exc:
        raise EvidenceTableError(f"{path}: not valid YAML: {exc}") from None


def _field(path_parts) -> str:
    return "/".join(str(p) for p in path_parts) or "(top level)"


def _schema_problems(doc) -> list:
    """Every violation of :func:`table_schema` in ``doc`` as ``"field (row id): message"``, in the order
    of the fields (rows by number)."""
    validator = jsonschema.Draft202012Validator(table_schema())
    out = []
    for e in sorted(validator.iter_errors(doc), key=lambda e: [(isinstance(p, str), p) for p in e.absolute_path]):
        path = list(e.absolute_path)
        message = e.message
        if path and path[-1] == "class":
            message = f"{e.instance!r} is not a class of the taxonomy (harness/taxonomy.py) nor '*'"
        row = ""
        if len(path) >= 2 and path[0] == "rows" and isinstance(doc["rows"][path[1]], dict):
            rid = doc["rows"][path[1]].get("id")
            row = f" ({rid})" if rid else ""
        out.append(f"{_field(path)}{row}: {message}")
    return out


def _semantic_problems(doc: dict) -> list:
    """What the schema cannot say: refusal patterns that do not compile, ``release_changes`` keys that
    YAML read as numbers (``1.20:`` is the float 1.2), a weight that is not finite, two rows for one
    (evidence id, class), one id with rows of two modes, and a changelog release without its
    ``release_first_change:<release>`` rows or such rows without a changelog entry (when the table has
    a ``release_changes`` section)."""
    out = []
    for i, r in enumerate(doc.get("refusals") or []):
        try:
            re.compile(r["pattern"])
        except re.error as exc:
            out.append(f"refusals/{i}/pattern: {exc}")
    changes = doc.get("release_changes")
    for k in changes or {}:
        if not isinstance(k, str):
            out.append(f"release_changes: key {k!r} is a {type(k).__name__}, not a release: quote it ('1.20.0')")
    seen, modes = {}, {}
    for i, r in enumerate(doc["rows"]):
        if not math.isfinite(float(r["weight"])):
            out.append(f"rows/{i}/weight ({r['id']}): {r['weight']!r} is not a finite number")
        key = (r["id"], r["class"])
        if key in seen:
            out.append(f"rows/{i} ({r['id']}): a second row for class {r['class']!r} (the first is rows/{seen[key]})")
        seen.setdefault(key, i)
        mode = r.get("mode", "add")
        if modes.setdefault(r["id"], (mode, i))[0] != mode:
            out.append(f"rows/{i} ({r['id']}): mode {mode!r}, but rows/{modes[r['id']][1]} of the same evidence "
                       f"has mode {modes[r['id']][0]!r}")
    if changes is not None:
        have = {eid.split(":")[1] for eid, _ in seen if eid.startswith("release_first_change:")}
        out += [f"release_changes/{rel}: no row release_first_change:{rel} weighs the classes of this change"
                for rel in sorted(set(changes) - have, key=str)]
        out += [f"rows: release_first_change:{rel} has no changelog entry under release_changes"
                for rel in sorted(have - set(changes))]
    return out


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
