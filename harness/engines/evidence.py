"""The reference engine's fold: evidence cited by the probes -> class weights -> ranked classes.

The declared table (``harness/engines/evidence_table.yaml``, read and checked
by :mod:`defects4warp.evidence_table`) maps every evidence id a probe can cite
(:class:`defects4warp.engines.assess.Evidence`) to class weights, one row per
(evidence id, class), with a ``mode`` saying how it is folded (below).

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

from ..evidence_table import EvidenceTable, evidence_classes, load_table
from ..measure.detectors import FINDING_IDS


def finding_classes(table: EvidenceTable | None = None) -> dict:
    """Trace finding id -> list of the classes the table's rows ``trace:<id>`` name (row order).

    Parameters
    ----------
    table : EvidenceTable, optional
        Default: the engine's table (:data:`defects4warp.evidence_table.TABLE_PATH`).

    Returns
    -------
    dict[str, list[str]]
        One entry per id of :data:`defects4warp.measure.detectors.FINDING_IDS`
        (every id a registered detector may emit), in registration order.
    """
    t = table or load_table()
    return {fid: list(evidence_classes(f"trace:{fid}", t)) for fid in FINDING_IDS}


def fold(evidence: list, table: EvidenceTable, allowed: list, *, restrict: set | None = None) -> tuple:
    """Fold structured evidence into class weights with ``table``.

    Parameters
    ----------
    evidence : list[defects4warp.engines.assess.Evidence]
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
