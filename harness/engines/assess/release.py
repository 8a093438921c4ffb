"""The release differential's assessment: what autodiff changing with the Warp release says.

:func:`defects4warp.engines.release.differential` measures the variant on another release (and
bisects the releases in between) when the gradient is wrong; its result is stored in the
measurement record, and this reads it. When autodiff changes between the releases while finite
differences do not, the change is cited as ``release_first_change:<release>`` of the first release
with the new behaviour: the first release of each change to adjoints and its changelog entry are
the evidence table's ``release_changes``
(:attr:`defects4warp.evidence_table.EvidenceTable.release_changes`; source: the Warp changelog
entries restated in ``docs/taxonomy.md`` ("Release facts") and ``shared/reports/public-reports.md``
(P6, P7, P10-P13, P16-P19, P21-P24), each measured in this corpus' cases where a case cites it);
which classes a program whose gradient changes at that release most likely has, and how much, are
the table's rows ``release_first_change:<release>`` (and ``...:no_copies`` where a copy adjoint can
explain the change, as for 1.15.0/1.17.0, or 1.13.0 when a copy's destination is stored into
before 1.17, and the traced call made no copy; ``release_changed`` for a release without an
entry).

Only when the other release agrees with finite differences is the change evidence of Warp's own
adjoint defect: a program wrong on both releases is a taping bug whose wrong gradient changes with
Warp's taping behaviour (1.13.0, 1.17.0, 1.19.0 change it by design), even when a release in between
happens to compute it right (harbour-buoy-ballast-drift's reassigned vector component is right on
1.4.2-1.6.2 only). When the bisection could not pin the first release (a measurement failed, or it
did not bisect), the evidence is shared among the changelog entries of the releases the bracket
leaves open.
"""

from __future__ import annotations

from ...envs import RELEASES
from ...evidence_table import load_table
from ..release import _v
from . import AssessContext, Assessment, assessor


@assessor("release", cites=("release_changed", "release_first_change:*"))
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """The release differential's assessment (:func:`assess_differential` of ``ctx.differential``,
    with the copies the trace of ``doc`` counted, under ``ctx.table``)."""
    ctx = ctx or AssessContext()
    copies = ((doc.get("trace") or {}).get("summary") or {}).get("copies")
    return assess_differential(ctx.differential, copies=copies, table=ctx.table)


def assess_differential(diff: dict | None, *, copies: int | None = None, table=None) -> Assessment:
    """Evidence from :func:`defects4warp.engines.release.differential`'s result: a sentence and, when
    autodiff changes between the releases while finite differences do not, the structured evidence
    ``release_first_change:<release>`` (``release_changed`` for a release without a
    changelog entry in the table's ``release_changes``).

    When the other release's autodiff disagrees with finite differences too, the change is
    not evidence that Warp fixed an adjoint of its own: ``release_first_change:<release>``
    is cited only when its table row gives ``warp_adjoint_bug`` no weight (a changelog entry
    about taping behaviour, e.g. 1.13.0).

    When no first release was pinned (a measurement of the bisection failed, or it did not
    bisect), the evidence is shared among the releases the bracket leaves open: each release R after its first end
    up to its second contributes ``1/n`` of its id's weights (``release_first_change:R`` or
    ``release_changed``), so that an unmeasured bracket holding 1.18.0 credits 1.18.0's
    classes instead of reading the change as Warp's own defect.

    Parameters
    ----------
    diff : dict or None
    copies : int, optional
        The number of ``wp.copy``/``wp.clone`` calls the trace saw in the gradient call;
        when it is 0 and the evidence table has a row ``release_first_change:<release>:no_copies``
        (a changelog entry also about copy adjoints, which cannot explain the change then),
        that id is cited instead.
    table : defects4warp.evidence_table.EvidenceTable, optional
        The table whose rows are looked up (default: the engine's).
    """
    a = Assessment()
    if not diff:
        return a
    c = diff["compared"].get(diff["other"]) or {}
    if "error" in c:
        a.add("release", True, f"release differential not measured on Warp {diff['other']}: {c['error']}", None)
        return a
    if not c.get("gradient_changed"):
        _add_unchanged(a, diff, c)
        return a
    if not c.get("objective_same"):
        a.add("release", True, f"the objective itself differs between Warp {diff['current']} and {diff['other']}; "
              "no release differential", c)
        return a
    first = diff.get("first_change")
    table = table or load_table()
    entry = table.release_changes.get(first, "") if first else ""
    txt = (f"autodiff changes between Warp {diff['current']} and {diff['other']} while finite differences do not "
           f"(relative change {c['relative_change']:.3g}" + ("; the other release agrees with FD" if c.get("b_agrees") else "") + ")")
    bracket = diff.get("bracket")
    if first:
        txt += f"; first release where it changes: {first}" + (f" ({entry})" if entry else "")
    elif bracket and bracket[0] != bracket[1]:
        txt += (f"; it changes between {bracket[0]} and {bracket[1]} (not every release in between could be "
                "measured)")
    # structured evidence: its class weights are the rows release_first_change:<release>[:no_copies]
    # (or release_changed for a release without a changelog entry) of harness/engines/evidence_table.yaml
    if first:
        shares = {_change_id(first, copies, table): 1.0}
    else:
        shares = _bracket_shares(bracket, copies, table)
    data = {"first_change": first, "relative_change": c.get("relative_change")}
    a.facts["first_change"] = first
    if not c.get("b_agrees"):
        # Wrong on both releases: the change is not evidence that Warp fixed an adjoint of its own
        # (taping behaviour changes with the release by design: 1.13.0 consumes written arrays'
        # adjoints, 1.17.0 accumulates copy adjoints, ...). Only a changelog entry whose classes are
        # all taping classes is still cited; a row that would credit warp_adjoint_bug is not.
        txt += (f"; autodiff disagrees with finite differences on {diff['other']} too, so the change is not "
                "evidence that Warp fixed its adjoint")
        a.add("release", False, txt, diff)
        for eid, share in shares.items():
            if eid != "release_changed" and "warp_adjoint_bug" not in table.weights(eid):
                a.cite(eid, "release", txt, data, strength=share)
        return a
    a.add("release", False, txt, diff)
    for eid, share in shares.items():
        a.cite(eid, "release", txt, data, strength=share)
    return a


def _add_unchanged(a: Assessment, diff: dict, c: dict) -> None:
    """:func:`assess_differential`'s sentence when autodiff of call 1 is the same on both releases."""
    cur, oth = diff["current"], diff["other"]
    rep = diff.get("repeated")
    if rep and not rep["same"]:
        a.add("release", False, f"autodiff of gradient() call 1 is the same on Warp {cur} and {oth}, but repeated "
              f"calls are not: gradient norms relative to call 1 are {_ratios(rep['current'])} on {cur} and "
              f"{_ratios(rep['other'])} on {oth} (what carries over from one call to the next depends on "
              "the release)", dict(c, repeated=rep))
    elif rep:
        a.add("release", True, f"autodiff is the same on Warp {cur} and {oth} over {rep['calls']} gradient() calls "
              f"(call 1 element by element; gradient norms relative to call 1: {_ratios(rep['current'])} on both)",
              dict(c, repeated=rep))
    elif diff.get("current_calls_identical"):
        a.add("release", True, f"autodiff of gradient() call 1 is the same on Warp {cur} and {oth} (repeated "
              f"calls are identical on {cur}, so only call 1 was compared)", c)
    else:
        a.add("release", True, f"autodiff of gradient() call 1 is the same on Warp {cur} and {oth} (later calls "
              "not compared)", c)


def _change_id(release: str | None, copies: int | None, table) -> str:
    """The evidence id of a change first seen on ``release``: ``release_first_change:<release>``
    (``...:no_copies`` when the traced call made no copy and the table has that row) for a
    release of the table's ``release_changes``, else ``release_changed``."""
    if release not in table.release_changes:
        return "release_changed"
    eid = f"release_first_change:{release}"
    if copies == 0 and f"{eid}:no_copies" in table.rows:
        eid += ":no_copies"
    return eid


def _bracket_shares(bracket, copies, table) -> dict:
    """Evidence id -> share (summing to 1) over the supported releases after ``bracket[0]`` up to
    ``bracket[1]`` (:data:`defects4warp.envs.RELEASES`); ``{"release_changed": 1.0}`` without a
    bracket or when none of them lies inside it."""
    if not bracket or _v(bracket[0]) is None or _v(bracket[1]) is None:
        return {"release_changed": 1.0}
    lo, hi = sorted((_v(bracket[0]), _v(bracket[1])))
    inside = [r for r in RELEASES if lo < _v(r) <= hi]
    if not inside:
        return {"release_changed": 1.0}
    shares = {}
    for r in inside:
        eid = _change_id(r, copies, table)
        shares[eid] = shares.get(eid, 0.0) + 1.0 / len(inside)
    return shares


def _ratios(xs) -> str:
    return ", ".join(f"{x:.4g}" for x in xs)
