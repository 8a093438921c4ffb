"""The reference engine's evidence table: which evidence supports which class, and how much.

One declared table (``harness/engines/evidence_table.yaml``) maps every
evidence id a probe can cite (:class:`defects4warp.probes.Evidence`) to class
weights, one row per (evidence id, class)::

    - id: trace:write_after_read      # the evidence
      class: overwrite                # the class it supports ("*": every bug class
                                      #   the taxonomy allows under the signature)
      weight: 1.2
      mode: add                       # how it is folded (below)
      source: "hand-set v3 (commit 54fc692): TRACE_WEIGHT in harness/engines/reference.py"

Each row says where its number comes from: ``hand-set v3`` with the old
constant's location, or ``fitted`` with the fit's date and data
(``defects4warp fit-weights``, :mod:`defects4warp.engines.fit`).

Modes, in the order :func:`fold` applies them (the order engine v3 added its
weights in, so the hand-set table reproduces v3's ranking exactly):

``allowed``  added to the class only when the taxonomy allows it under the
             measured signature (``*``: every such class); the ``candidate`` row
``add``      added to the class (creating it as a candidate)
``lift``     added only to classes that are already candidates (source rules,
             the per-launch outcome: they sharpen, never invent)
``late``     added after the lifts (a kernel without adjoint, a builtin with a
             defective adjoint, the release differential)
``nobug``    weights of a ``no_bug`` / ``inconclusive`` verdict's classes
``replace``  like ``nobug``, but replaces what was folded before it

Scores: with ``scores: normalised`` (v3) a class's score is its weight over
the sum; with ``scores: softmax`` (a fitted table) the folded weights are
logits over the candidate classes and the scores are their softmax, a
calibrated probability on the data of the fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

#: The table the engine reads by default.
TABLE_PATH = Path(__file__).with_name("evidence_table.yaml")
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
    from ..taxonomy import CLASSES

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


def fold(evidence: list, table: EvidenceTable, allowed: list, *, restrict: set | None = None) -> tuple:
    """Fold structured evidence into class weights with ``table``.

    Parameters
    ----------
    evidence : list[defects4warp.probes.Evidence]
    table : EvidenceTable
    allowed : list[str]
        Classes the taxonomy allows under the measured signature (the ``*`` class of a row).
    restrict : set[str], optional
        Only these classes may receive weight (e.g. the bug classes).

    Returns
    -------
    (weights, support)
        ``weights`` {class: weight}; ``support`` {class: [(evidence id, contribution)]}.
    """
    weights, support = {}, {}

    def put(c, w, eid, only_existing=False):
        if restrict is not None and c not in restrict:
            return
        if only_existing and c not in weights:
            return
        weights[c] = weights.get(c, 0.0) + w
        support.setdefault(c, []).append((eid, w))

    for stage in ("add", "lift", "late"):
        for e in evidence:
            mode = table.modes.get(e.id, "add")
            if (mode if mode != "allowed" else "add") != stage:
                continue
            for c, w in table.weights(e.id).items():
                for cc in (allowed if c == "*" else [c]):
                    if mode == "allowed" and cc not in allowed:
                        continue
                    put(cc, e.strength * w, e.id, only_existing=stage == "lift")
    return weights, support


def fold_nobug(evidence: list, table: EvidenceTable) -> tuple:
    """Weights of a no_bug / inconclusive verdict: ``nobug`` rows add, a ``replace`` row starts over."""
    weights, support = {}, {}
    for e in evidence:
        if table.modes.get(e.id) == "replace":
            weights, support = {}, {}
        for c, w in table.weights(e.id).items():
            weights[c] = weights.get(c, 0.0) + e.strength * w
            support.setdefault(c, []).append((e.id, e.strength * w))
    return weights, support


def rank(weights: dict, scores: str = "normalised", *, digits: int = 4) -> list:
    """Ranked ``[{"id", "score"}]`` from folded weights.

    ``normalised``: weight / sum (only positive weights). ``softmax``: the
    weights are logits; scores are their softmax over the classes present.
    Ties break by class id. ``math.fsum`` keeps the result independent of the
    order the weights were added in.
    """
    if not weights:
        return []
    if scores == "softmax":
        m = max(weights.values())
        ex = {k: math.exp(v - m) for k, v in weights.items()}
        total = math.fsum(ex.values())
        probs = {k: v / total for k, v in ex.items()}
    else:
        total = math.fsum(weights.values()) or 1.0
        probs = {k: v / total for k, v in weights.items() if v > 0}
    ranked = sorted(probs.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"id": k, "score": round(v, digits)} for k, v in ranked]


def explain(support: dict, classes: list, evidence: list, table: EvidenceTable, *, top: int = 3) -> list:
    """For each of the ``top`` ranked classes: the evidence that raised it, and
    the evidence ids in the table that would have supported it but were not
    measured (what to look for to confirm or rule it out).

    Returns
    -------
    list[dict]
        ``{"class", "score", "raised_by": [{"id", "weight"}], "absent": [ids]}``.
    """
    present = {e.id for e in evidence}
    out = []
    for c in classes[:top]:
        cid = c["id"]
        agg = {}
        for eid, w in support.get(cid, []):
            agg[eid] = agg.get(eid, 0.0) + w
        raised = [{"id": k, "weight": round(v, 4)} for k, v in sorted(agg.items(), key=lambda kv: -kv[1])]
        absent = sorted(eid for eid, ws in table.rows.items()
                        if ws.get(cid, 0.0) > 0 and eid not in present and not eid.startswith("signature:")
                        and table.modes.get(eid) in ("add", "lift", "late"))[:8]
        out.append({"class": cid, "score": c["score"], "raised_by": raised, "absent": absent})
    return out
