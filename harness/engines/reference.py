"""Reference diagnostic engine (v4): measure, read the signature, fold the evidence into classes.

The engine runs the measurement worker (:mod:`defects4warp.probes.worker`) with
an explicit probe list (:data:`PROBES`; each probe is a module of
:mod:`defects4warp.probes`) in a subprocess, then interprets the document
(:func:`interpret`, a pure function tested on synthetic documents):

1. the **verdict**, from measurement only. ``bug`` needs direct evidence
   (NaN/inf in the gradient of a finite objective, growth across calls, a
   later call that differs at the same point) or a disagreement with finite
   differences that survived the step sweep (:mod:`defects4warp.probes.sweep`:
   ``confirmed``), or a disagreement with the problem's
   ``reference_gradient()``. Items below the FD resolution
   (:mod:`defects4warp.probes.noise`) are *unresolved* and never count;
   disagreements the sweep explains as a kink or staircase give ``no_bug``
   (``nonsmooth_tie``, ``piecewise_constant``), and so do confirmed disagreements
   only where the forward is bit-constant within the smallest step while a
   hand-written adjoint ran (:func:`flat_forward`: the adjoint is a deliberate
   surrogate, ``surrogate_gradient``), and so do confirmed disagreements that the ablation of the
   hand-written adjoints (:mod:`defects4warp.probes.ablation`) reads as their surrogate over a function
   that is flat where evaluated, beside a smooth term the finite differences do see. ``inconclusive`` when the
   forward is stochastic and the seed cannot be pinned, the objective is not
   finite, or nothing was resolved; ``refused`` when the release refuses to
   build or run the program; ``error`` when it could not be measured.
2. the **signature** of the error (:func:`defects4warp.measure.judge.signature_of`);
3. ranked **classes**: each probe cites structured evidence
   (:class:`defects4warp.engines.assess.Evidence`: an id, the probe, the measured fields,
   a sentence) and ONE declared table, ``harness/engines/evidence_table.yaml``
   (:mod:`defects4warp.engines.evidence`), says which classes each evidence id
   supports and by how much; the classes are a fold of the cited evidence
   over that table (:func:`defects4warp.engines.evidence.fold`): the signature's
   prior row, every bug class the taxonomy allows under it (``candidate``),
   repeated calls (:mod:`defects4warp.probes.determinism`), the exact factor and
   its size (:func:`factor_evidence`), the runtime trace's direct findings
   (``trace:<finding id>``), windows, source rules in code that ran
   (``rule:<name>``, lift only), the per-launch check (lift only), kernels
   without adjoint, builtins with documented adjoint defects and the release
   differential. No class name or weight is written in this module: the
   table holds them, each row with its source (hand-set v3, or fitted by
   ``defects4warp maint fit-weights``, :mod:`defects4warp.engines.fit`). A diagnosis
   carries the evidence it folded (``cited``) and, per top class, the
   evidence that raised it and the table's evidence for it that was not
   measured (``explanation``).

A source or trace finding never sets the verdict: on a variant whose
gradient agrees it is reported as a smell in the evidence.
"""

from __future__ import annotations


from .. import __version__
from ..evidence_table import EvidenceTable, load_table
from ..measure.judge import signature_of
from ..probes import ASSESSED, ENGINE_PROBES
from ..taxonomy import BUG_CLASSES, CLASSES
from ..provenance import digests, merge
from .assess import ASSESSORS, AssessContext, Assessment, Evidence, declare_cites
from .assess import load as _load_assessors
from .assess import ablation as ablation_assess
from .assess import fd as fd_assess
from .assess import launches as launches_assess
from .assess import trace as trace_assess
from .assess import tracker as tracker_assess
from .assess.fd import factor_evidence
from .base import WorkerEngine, ev as _ev
from . import release as release_probe
from .evidence import explain, fold, fold_nobug, rank

#: The worker-side probes the reference engine runs, in order (derived from
#: :data:`defects4warp.probes.CATALOGUE`, where the probe list is written).
PROBES = ENGINE_PROBES

#: The signatures with a prior row (``signature:<sig>``) in the evidence table.
SIGNATURE_ROWS = ("nan_inf", "growth", "iteration", "zero", "exact_factor", "sparse", "subtly_wrong")


def priors(table: EvidenceTable | None = None) -> dict:
    """Signature -> {class id: prior weight}: the ``signature:<sig>`` rows of the evidence table
    (hand-set in v3 from the signature column of docs/taxonomy.md; the fd-only baseline ranks by them)."""
    table = table or load_table()
    return {sig: dict(table.weights(f"signature:{sig}")) for sig in SIGNATURE_ROWS}


#: Sweep verdicts that explain a disagreement as a finite-difference artefact;
#: the class each points at is the row ``sweep_artefact:<verdict>`` of the evidence table.
ARTEFACTS = ("kink", "kink_nearby", "staircase", "precision")
_ONE_SIDED = "one-sided differences at a smaller step explain the autodiff value"
#: What each artefact kind says about the disagreement (the evidence sentence).
ARTEFACT_READINGS = {"kink": _ONE_SIDED, "kink_nearby": _ONE_SIDED, "staircase": _ONE_SIDED,
                     "precision": "central differences approach autodiff as the step grows and agree at the "
                                  "largest step (round-off at the base step)"}


#: The evidence the engine's own rules (the verdict's, and the signature's rows behind a bug's
#: class) cite, under the probe whose data each reads.
declare_cites("verdict", {
    "fd": (*(f"signature:{s}" for s in SIGNATURE_ROWS), "candidate", "agrees", "unresolved", "flat_params",
           "setup_only_disagreement"),
    "determinism": ("stochastic_unpinned", "stochastic_pinned_agrees", "stochastic_pinned_disagrees",
                    "first_call_differs"),
    "sweep": (*(f"sweep_artefact:{v}" for v in ARTEFACTS), *(f"sweep_artefact_minor:{v}" for v in ARTEFACTS),
              "disagreement_is_artefact", "surrogate_on_flat_forward"),
    "reference": ("fd_disagrees_with_reference", "reference_explains:*", "reference_unexplained"),
    "source": ("flat_params:piecewise_source", "launch_staircase:piecewise_source", "reference_vs_custom_adjoint"),
    "launches": ("launch_staircase",),
    "ablation": ("ablation:surrogate",),
})

def _rank(weights: dict) -> list:
    return rank(weights, "normalised")


def factor_weights(factor: float | None, seeds: list, *, table: EvidenceTable | None = None, **kw) -> tuple:
    """Class weights of :func:`factor_evidence` under ``table`` (default: the engine's)."""
    ev, note = factor_evidence(factor, seeds, **kw)
    w, _ = fold(ev, table or load_table(), [])
    return w, note


def interpret(doc: dict, findings=None, *, path=None, differential: dict | None = None,
              table: EvidenceTable | None = None) -> dict:
    """Turn a worker measurement document into a diagnosis (without ``cost``).

    Parameters
    ----------
    doc : dict
        The worker's document.
    findings : list, optional
        Source findings to use instead of scanning ``path`` (a list of
        :meth:`defects4warp.rules.Finding.to_dict`); with neither, no
        source evidence.
    path : path-like, optional
        The variant folder (source evidence, builtins of launched kernels).
    differential : dict, optional
        :func:`defects4warp.engines.release.differential`'s result.
    table : EvidenceTable, optional
        Evidence -> class weights (default: ``harness/engines/evidence_table.yaml``).

    Returns
    -------
    dict
        ``verdict``, ``classes``, ``signature``, ``evidence`` as in
        :mod:`defects4warp.engines.base`, plus ``cited`` (the structured evidence
        folded, :class:`defects4warp.engines.assess.Evidence` as dicts) and ``explanation``
        (per top class: the evidence that raised it and the table's evidence
        for it that was not measured).
    """
    table = table or load_table()
    _load_assessors()
    ctx = AssessContext(table=table, warp_version=doc.get("warp_version"), path=path, findings=findings,
                        differential=differential)
    # what each probe's data says, in words and as facts (the assessors, in the catalogue's order)
    for name in ASSESSED:
        ctx.assessed[name] = ASSESSORS[name](doc, ctx)
    evidence = [e for a in ctx.assessed.values() for e in a.evidence]

    # -- verdict ---------------------------------------------------------
    fd = ctx.facts("fd")
    verdict, sig, nobug_ev = _verdict(doc, fd["comparisons"], ctx.facts("sweep")["sweeps"], doc.get("reference") or {},
                                      fd["fd_vs_reference"], evidence, ctx.assessed["source"], table,
                                      ablation=ctx.facts("ablation"))
    if verdict != "bug":
        weights, support = fold_nobug(nobug_ev, table)
        classes = rank(weights, "normalised")
        return _diagnosis(verdict, classes, sig, evidence, nobug_ev, support, table)

    # -- classes of a bug: a fold over the structured evidence -------------
    ctx.signature = sig
    cited, withdrawn = [], set()
    for half in BUG_EVIDENCE:
        a = half(doc, ctx)
        cited += a.cited
        evidence += a.evidence
        withdrawn |= set(a.facts.get("withdrawn") or ())
    cited = [e for e in cited if e.id not in withdrawn]
    evidence = [_withdrawn_entry(e) if _entry_id(e) in withdrawn else e for e in evidence]
    allowed = [c for c in sorted(BUG_CLASSES) if sig in CLASSES[c].signatures]
    weights, support = fold(cited, table, allowed, restrict=set(BUG_CLASSES))
    return _diagnosis("bug", rank(weights, table.scores), sig, evidence, cited, support, table)


def _entry_id(e: dict) -> str | None:
    """The evidence-table id of a trace evidence entry (``trace:<finding id>``), else None."""
    data = e.get("data")
    if e.get("probe") != "trace" or not isinstance(data, dict) or not data.get("id"):
        return None
    return f"trace:{data['id']}"


def _withdrawn_entry(e: dict) -> dict:
    """An evidence entry another half's facts withdrew: reported, not counted (``data["counted"]`` False)."""
    return dict(e, finding=e["finding"] + " (not counted: the objective adds the losses of backwards of earlier "
                                          "iterations whose gradient the update consumes, so the taped loss is one "
                                          "of its terms)", data=dict(e["data"], counted=False))


def _diagnosis(verdict, classes, sig, evidence, cited, support, table) -> dict:
    return {"verdict": verdict, "classes": classes, "signature": sig, "evidence": evidence,
            "cited": [e.to_dict() for e in cited], "explanation": explain(support, classes, cited, table)}


def flat_forward(record: dict) -> bool:
    """Whether a step-sweep record (:mod:`defects4warp.probes.sweep`: ``autodiff``, ``forward``,
    ``backward`` one-sided differences, smallest step first) shows an objective that does not move at
    all within the smallest step on either side, exactly (both one-sided differences are 0.0: the
    forward returned the same bits at x - h, x and x + h), while autodiff is finite and non-zero.

    A smooth objective with a non-zero derivative moves by about ``|g| h`` (far above one unit in the
    last place at the sweep's steps, which are chosen above the round-off noise), so bit-identical
    values on both sides mean the forward is locally constant along the item: a staircase (round,
    floor, sign, a threshold) or a param the forward does not read at this point."""
    try:
        ad, f0, b0 = float(record["autodiff"]), float(record["forward"][0]), float(record["backward"][0])
    except (KeyError, IndexError, TypeError, ValueError):
        return False
    return f0 == 0.0 and b0 == 0.0 and ad != 0.0 and ad == ad and abs(ad) != float("inf")


def _verdict(doc, comps, sweeps, ref, fd_vs_ref, evidence, src, table, *, ablation=None) -> tuple:
    """The verdict from measurement only, the signature, and (for a verdict other
    than bug) the evidence of its classes. Appends its sentences to ``evidence``.
    ``ablation``: the facts of the ablation's assessment (:func:`defects4warp.engines.assess.ablation.read`;
    None or {} when it did not run).

    The rules are tried in order, the first that applies decides: the gates of
    :data:`_VERDICT_GATES` on the document, then the rules of :data:`_VERDICT_RULES`
    on what the comparisons show (:class:`_Measured`), else :func:`_agrees`.

    Returns
    -------
    (verdict, signature, list[Evidence])
    """
    for gate in _VERDICT_GATES:
        out = gate(doc, comps, evidence)
        if out is not None:
            return out
    m = _Measured(doc, comps, sweeps, ref, fd_vs_ref, evidence, src, table, ablation)
    for rule in _VERDICT_RULES:
        out = rule(m)
        if out is not None:
            return out
    return _agrees(m)


def _nothing_compared(doc, comps, evidence):
    """Gate: nothing was compared and the gradient is finite: inconclusive."""
    if not comps and not doc.get("nan_scan", {}).get("gradient_nonfinite"):
        return "inconclusive", None, []
    return None


def _objective_not_finite(doc, comps, evidence):
    """Gate: the objective is not finite at the given point: inconclusive."""
    if not doc.get("nan_scan", {}).get("objective_finite", True):
        evidence.append(_ev("nan_scan", False, "objective() is not finite at the given point", None))
        return "inconclusive", None, []
    return None


def _stochastic_unpinned(doc, comps, evidence):
    """Gate: the objective is stochastic and no seed could be pinned: inconclusive."""
    det = doc.get("determinism", {})
    if det.get("stochastic") and not det.get("seed_pinned"):
        return "inconclusive", None, [Evidence("stochastic_unpinned", "determinism")]
    return None


def _setup_only_disagreement(doc, comps, evidence, *, min_later: int = 2, flat_rel: float = 1e-5):
    """Gate: a captured script whose first iteration's objective does not move with the params at all (its
    central difference along the screen's direction within ``flat_rel`` (default 1e-5, the screen's float32
    rounding floor of a sum, :data:`defects4warp.capture.screen.ABS_FLOOR`) of the loss, while the gradient
    along it is over that floor), while at least ``min_later`` (default 2) later iterations of its own loop
    are resolved and every one agrees: inconclusive.

    Iteration 1 runs from the params' allocation, so it includes what the script does once before its loop.
    When that work reads the params (synthetic data made as ``model(w_start) + noise``, a target taken from
    the initial state), setting the params to ``p`` there moves the data with them and the loss no longer
    depends on ``p``; the later iterations, which start at an update, do not re-run it and agree. Whether that
    one-off work belongs to the objective (a stale intermediate that should follow the params: a bug) or is
    the problem's fixed data (a correct program) is the script's intent, which the measurement cannot read.
    Reads ``doc["capture"]["iterations"]`` (:mod:`defects4warp.capture.screen`: rows with ``difference``,
    ``gradient_dot`` and ``status``)."""
    cap = doc.get("capture") or {}
    its = cap.get("iterations") or {}
    rows = its.get("checked") or []
    if cap.get("iteration") != 1 or its.get("diagnosed") != 1 or not rows or rows[0].get("iteration") != 1:
        return None
    first, later = rows[0], [r for r in rows[1:] if r.get("status") in ("agrees", "disagrees")]
    floor = flat_rel * abs(first.get("objective") or 0.0)
    if first.get("status") != "disagrees" or first.get("difference") is None or first.get("gradient_dot") is None \
            or abs(first["difference"]) > floor or abs(first["gradient_dot"]) <= floor:
        return None
    if len(later) < min_later or any(r["status"] != "agrees" for r in later):
        return None
    evidence.append(_ev("fd", False, "only iteration 1 disagrees, and its objective does not move with the params at "
                        f"all (central difference {first['difference']:.2g}, within the loss's float32 rounding, against "
                        f"a gradient of {first['gradient_dot']:.3g} along the same direction) "
                        f"while iterations {', '.join(str(r['iteration']) for r in later)} of the script's own loop "
                        "agree: iteration 1 starts at the params' allocation and includes work the script does once "
                        "before its loop, which reads the params (data made from their initial values?). If that "
                        "work is fixed data the program is correct (diagnose --iteration 2 checks the loop's own "
                        "iterations); if it should follow the params, it is recomputed nowhere", None))
    return "inconclusive", None, [Evidence("setup_only_disagreement", "fd")]


#: The verdict's gates, in order: each ``(doc, comps, evidence) -> (verdict, signature, evidence) | None``.
_VERDICT_GATES = (_nothing_compared, _objective_not_finite, _stochastic_unpinned, _setup_only_disagreement)


class _Measured:
    """What the verdict rules read once the gates have passed: the arguments of :func:`_verdict`, the
    signature (:func:`signature_of`), whether it is direct (NaN/Inf, growth, iteration), the step sweep's
    confirmed and artefact items, the disagreeing and the agreeing comparisons, whether the
    disagreements count (:meth:`_counted`, which says so in ``evidence`` when a planned sweep is missing),
    the ablation's facts (``ablation``, {} when it did not run) and whether a rounding is counted in the source
    (``piecewise``: source rule ``piecewise_constant_op`` in code that ran)."""

    def __init__(self, doc, comps, sweeps, ref, fd_vs_ref, evidence, src, table, ablation=None):
        self.doc, self.comps, self.sweeps, self.ref, self.fd_vs_ref = doc, comps, sweeps, ref, fd_vs_ref
        self.evidence, self.src, self.table, self.ablation = evidence, src, table, ablation or {}
        self.det = doc.get("determinism", {})
        self.sig = signature_of(doc)
        self.direct = self.sig in ("nan_inf", "growth", "iteration") or bool(
            doc.get("nan_scan", {}).get("gradient_nonfinite"))
        verdicts = [r["verdict"] for r in sweeps]
        self.confirmed = verdicts.count("confirmed")
        self.artefacts = [v for v in verdicts if v in ARTEFACTS]
        self.disagree = [c for _, c in comps if c["signature"] not in ("agrees", "unresolved")]
        self.counted = self._counted()
        self.resolved_agree = [c for _, c in comps if c["signature"] == "agrees"]
        # a rounding or truncation (round/floor/sign/int, source rule piecewise_constant_op) counted in code that ran
        self.piecewise = src is not None and "piecewise_constant_op" in src.facts.get("rules", [])

    def _counted(self) -> bool:
        """Whether the disagreements count towards a bug."""
        # the sweep was planned (the default probes) but is missing: the worker ran out of time or the
        # probe failed before it. An inexact disagreement no sweep has looked at is not counted (the
        # sweep's own rule for unswept items); an exact signature (zero, a factor) still is
        planned = "sweep" in ((self.doc.get("options") or {}).get("probes") or ())
        if self.ref:
            return bool(self.disagree)
        if "sweep" in self.doc:
            return self.confirmed > 0
        if planned and self.disagree and self.sig in ("agrees", "unresolved", "subtly_wrong"):
            self.evidence.append(_ev("sweep", True, "the step sweep did not run (the worker stopped or the probe "
                                     "failed before it): an inexact disagreement no sweep checked is not counted",
                                     None))
            return False
        return bool(self.disagree)


def _surrogate_on_flat_forward(m: _Measured):
    """A hand-written adjoint over a forward that does not move: every confirmed disagreement (and at
    least one swept item) is bit-constant within the smallest step, and the disagreements are either
    counted or all that was resolved (else the verdict would be unresolved): no bug."""
    flat = [r for r in m.sweeps if r["verdict"] in ("confirmed", "unclear") and flat_forward(r)]
    confirmed_flat = [r for r in flat if r["verdict"] == "confirmed"]
    if (not m.ref and not m.direct and flat and len(confirmed_flat) == m.confirmed
            and (m.counted or not m.resolved_agree)
            and m.src is not None and "custom_adjoint" in m.src.facts.get("rules", [])):
        m.evidence.append(_ev("sweep", True, f"{len(flat)} swept disagreement(s) where the objective does not "
                              "change at all within the smallest step (one-sided differences exactly 0) while "
                              "autodiff is non-zero, and a hand-written adjoint ran: the forward is locally constant "
                              "in these params, so the gradient is the custom adjoint's surrogate, which finite "
                              "differences of the forward cannot judge (check it against the surrogate you intend)",
                              {"items": [{k: r.get(k) for k in ("param", "index", "kind", "autodiff", "central")}
                                         for r in flat]}))
        return "no_bug", "agrees", [Evidence("surrogate_on_flat_forward", "sweep", data={"items": len(flat)})]
    return None


def _surrogate_ablated(m: _Measured):
    """The ablation of the hand-written adjoints (:func:`defects4warp.engines.assess.ablation.read`) reads every
    confirmed disagreement as their surrogate over a forward that is flat where evaluated: without them
    the gradient agrees with finite differences there, and they change it only on coordinates where
    removing them equals stopping them (the function's own derivative is zero there). No
    bug, unless a direct signature (NaN/inf, growth) says otherwise, the source rule ``func_grad_assign``
    (an adjoint assigned instead of accumulated) fired in code that ran, or a confirmed item lies
    outside what the ablation measured (after ``train()``: the reading then does not cover it)."""
    a = m.ablation
    covered = len(a.get("items") or ()) == m.confirmed
    assigned = m.src is not None and "func_grad_assign" in m.src.facts.get("rules", [])
    if (a.get("reading") != "surrogate" or m.ref or m.direct or not m.counted or not covered or assigned):
        return None
    m.evidence.append(_ev("ablation", True, f"every confirmed disagreement ({m.confirmed}) is the surrogate of the "
                          "hand-written adjoint(s) of " + ", ".join(a["functions"]) + " over a forward that is flat "
                          "where evaluated (the ablation): finite differences of the forward cannot judge a surrogate "
                          "(check it against the one you intend)", {"items": a["items"]}))
    return "no_bug", "agrees", [Evidence("ablation:surrogate", "ablation",
                                         data={"functions": a["functions"], "items": len(a["items"])})]


def _bug(m: _Measured):
    """A direct signature, or disagreements that count: a bug."""
    if m.direct or m.counted:
        return "bug", ("subtly_wrong" if m.sig in ("agrees", "unresolved") else m.sig), []
    return None


def _zero_block_staircases(m: _Measured) -> list:
    """Kernels whose per-launch check found an adjoint block exactly zero where the launch's central differences
    move (the ``zero`` signature), in a kernel where a counted source finding saw round/floor/sign/int
    (``piecewise_scopes``), sorted. On a gradient the program-level check does not find wrong, that is a
    staircase the launch check's step crossed: zero almost everywhere, the true derivative where measured
    (the flat-and-moving reading of :func:`defects4warp.probes.launches.staircase_pairs`, whose base step
    did not cross a level)."""
    scopes = set(m.src.facts.get("piecewise_scopes", [])) if m.src is not None else set()
    return sorted(k["kernel"] for k in (m.doc.get("launches") or {}).get("kernels", [])
                  if k.get("ok") is False and (k.get("worst") or {}).get("signature") == "zero"
                  and k.get("kernel") in scopes)


def _staircase_evidence(m: _Measured, kernels: list) -> list:
    """``launch_staircase`` and ``launch_staircase:piecewise_source`` for ``kernels``, with their sentence."""
    m.evidence.append(_ev("launches", False, "kernel(s) " + ", ".join(kernels) + " flat in an input where "
                          "measured (an autodiff block exactly zero) and not constant over a wider step, with "
                          "round/floor/sign/int in the source: that part of the objective is piecewise constant, "
                          "and its true gradient is zero", {"kernels": kernels}))
    return [Evidence("launch_staircase", "launches", data={"kernels": kernels}),
            Evidence("launch_staircase:piecewise_source", "source")]


def _artefact(m: _Measured):
    """Disagreements the step sweep reads as finite-difference artefacts, none confirmed: no bug (with the
    staircase evidence of :func:`_zero_block_staircases` when a kernel on the path is one: a level crossed
    near the point reads as a kink)."""
    if not (m.disagree and m.artefacts and not m.confirmed):
        return None
    readings = {}
    for v in sorted(set(m.artefacts)):
        readings.setdefault(ARTEFACT_READINGS[v], []).append(v)
    m.evidence.append(_ev("sweep", True, "the disagreement is a finite-difference artefact: " + "; ".join(
        f"{text} ({', '.join(kinds)})" for text, kinds in readings.items()), None))
    # the artefact kinds (classes) share their rows' weight equally
    by_kind = {}
    for v in sorted(set(m.artefacts)):
        for c in m.table.classes_of(f"sweep_artefact:{v}")[:1]:
            by_kind.setdefault(c, v)
    ev = [Evidence(f"sweep_artefact:{v}", "sweep", strength=1.0 / len(by_kind)) for v in by_kind.values()]
    stair = (launches_assess.staircase_kernels(m.doc) if m.piecewise else []) or _zero_block_staircases(m)
    if stair and "piecewise_constant" not in by_kind:
        ev += _staircase_evidence(m, stair)
    return "no_bug", "agrees", ev + [Evidence("disagreement_is_artefact", "sweep")]


def _unresolved(m: _Measured):
    """Disagreements that did not survive the sweep, and nothing agrees: inconclusive."""
    if m.disagree and not m.resolved_agree:
        m.evidence.append(_ev("fd", True, "no disagreement survived the step sweep and nothing else agrees: "
                              "the measurement is unresolved", None))
        return "inconclusive", None, [Evidence("unresolved", "fd")]
    return None


def _below_resolution(m: _Measured):
    """Every finite-difference item is below resolution: inconclusive."""
    if not m.disagree and not m.resolved_agree:
        m.evidence.append(_ev("fd", True, "every finite-difference item is below resolution: unresolved", None))
        return "inconclusive", None, [Evidence("unresolved", "fd")]
    return None


#: The verdict's rules after the gates, in order: each ``(_Measured) -> (verdict, signature, evidence) | None``.
_VERDICT_RULES = (_surrogate_on_flat_forward, _surrogate_ablated, _bug, _artefact, _unresolved, _below_resolution)


def _agrees(m: _Measured) -> tuple:
    """No rule applied: autodiff agrees (no bug), with the evidence of its class (locally flat params,
    minor artefacts, a pinned seed, finite differences that disagree with the case's reference)."""
    if m.disagree:
        m.evidence.append(_ev("sweep", True, "disagreements did not survive the step sweep (unresolved at the base "
                              "step): not counted", None))
    ev = [Evidence("agrees", "fd")]
    flat = fd_assess.flat_params(m.doc)
    n_params = len(m.doc.get("protocol", {}).get("params", {})) or 1
    if flat and (m.piecewise or len(flat) == n_params):
        ev.append(Evidence("flat_params", "fd", data={"params": flat}))
        if m.piecewise:
            ev.append(Evidence("flat_params:piecewise_source", "source"))
        m.evidence.append(_ev("fd", False, "gradient and finite differences are both exactly zero for "
                              + ", ".join(flat) + ": the objective is locally flat in them", {"params": flat}))
    stair = launches_assess.staircase_kernels(m.doc) or _zero_block_staircases(m)
    if stair and m.piecewise and not ev[1:]:
        # part of the path is a staircase: a kernel's output is flat in an input where measured (its autodiff
        # block exactly zero) and moves over a wider step, and its source rounds or truncates
        ev += _staircase_evidence(m, stair)
    for v in set(m.artefacts):
        ev.append(Evidence(f"sweep_artefact_minor:{v}", "sweep"))
    if m.det.get("stochastic") and m.det.get("seed_pinned"):
        ev = [Evidence("stochastic_pinned_agrees", "determinism")]
    if m.fd_vs_ref and m.fd_vs_ref["signature"] != "agrees":
        ev = [Evidence("fd_disagrees_with_reference", "reference")]
        explained = set()
        for rec in m.ref.get("sweep", []):
            eid = f"reference_explains:{rec['verdict']}"
            ev.append(Evidence(eid, "reference", data=rec))
            explained.update(m.table.classes_of(eid))
            m.evidence.append(_ev("reference", True, f"finite differences at {rec['param']}[{rec['index']}] across "
                                  "steps " + ", ".join(f"{c:.4g}" for c in rec["central"])
                                  + f" vs reference {rec['autodiff']:.4g}: {rec['verdict']} "
                                  f"({', '.join(m.table.classes_of(eid))})", rec))
        if m.src is not None and "custom_adjoint" in m.src.facts.get("rules", []):
            ev.append(Evidence("reference_vs_custom_adjoint", "source"))
            explained.update(m.table.classes_of("reference_vs_custom_adjoint"))
        if not explained:
            ev.append(Evidence("reference_unexplained", "reference"))
    return "no_bug", "agrees", ev


def _signature_rows(doc: dict, ctx: AssessContext) -> Assessment:
    """The signature's prior row (``signature:<sig>``) and every bug class the taxonomy allows under it."""
    sig = ctx.signature if ctx.signature in SIGNATURE_ROWS else "subtly_wrong"
    return Assessment(cited=[Evidence(f"signature:{sig}", "fd"), Evidence("candidate", "fd")])


def _cited_by(name: str):
    """A bug-evidence half that cites what assessor ``name`` already cited (no sentences)."""

    def half(doc: dict, ctx: AssessContext) -> Assessment:
        a = ctx.assessed.get(name)
        return Assessment(cited=list(a.cited) if a is not None else [])

    half.__name__ = half.__qualname__ = f"cited_by_{name}"
    return half


def _stochastic_pinned(doc: dict, ctx: AssessContext) -> Assessment:
    """``stochastic_pinned_disagrees``: the objective is stochastic, its seed pinned, and the gradient wrong."""
    det = doc.get("determinism", {})
    return Assessment(cited=[Evidence("stochastic_pinned_disagrees", "determinism")]
                      if det.get("stochastic") and det.get("seed_pinned") else [])


def _first_call_differs(doc: dict, ctx: AssessContext) -> Assessment:
    """``first_call_differs``: the first gradient() call differs from the later ones (outside growth and
    iteration signatures, which say so already)."""
    first = doc.get("determinism", {}).get("first_call_differs") and ctx.signature not in ("growth", "iteration")
    return Assessment(cited=[Evidence("first_call_differs", "determinism")] if first else [])


#: Trace findings that compare the taped loss with objective(): when the captured objective adds the losses of
#: backwards from earlier iterations (:func:`_cached_gradient`), the taped loss is one term of it by construction.
TAPED_LOSS_FINDINGS = ("trace:taped_loss_not_objective",)


def _cached_gradient(doc: dict, ctx: AssessContext) -> Assessment:
    """``trace:cached_gradient_reused``: the update of the modelled iteration consumes a gradient that a backward
    of an *earlier* iteration computed and the script kept in a buffer (the capture's
    ``objective.external_backwards``, :mod:`defects4warp.capture.core`).

    Iterations are bounded by the script's updates, so that backward ran at params the script has updated
    since: its gradient is the gradient of its loss at an older point, the mechanism of
    ``stale_gradient_read`` (a gradient buffer from an earlier iteration read again). It is no finding on a
    correct program: a loss whose gradient does not depend on the params (a linear prior) gives the same
    gradient at every point, the check against finite differences agrees, and no bug evidence is read at all.
    The capture's objective adds those backwards' losses at the current params (the function whose gradient
    the update takes the buffer for), so the taped loss of the iteration's own backward is one term of the
    objective, not another function: :data:`TAPED_LOSS_FINDINGS` are not cited then (``withdrawn``). The id is of
    the ``trace:*`` family the trace's assessor declares (:func:`defects4warp.engines.assess.declare_cites`)."""
    cap = doc.get("capture") or {}
    ext = [int(n) for n in ((cap.get("objective") or {}).get("external_backwards") or [])]
    first = cap.get("first_backward")
    earlier = [n for n in ext if first is None or n < int(first)]
    a = Assessment()
    if not earlier:
        return a
    it = cap.get("iteration")
    a.cite("trace:cached_gradient_reused", "trace",
           f"the update of iteration {it} consumes the gradient of backward {', '.join(map(str, earlier))}, computed "
           f"in an earlier iteration at params the script has updated since and not recomputed",
           {"external_backwards": earlier, "iteration": it})
    a.add("trace", False, a.cited[0].sentence, a.cited[0].data)
    a.facts["withdrawn"] = TAPED_LOSS_FINDINGS
    return a


#: The bug-evidence halves, each ``(doc, ctx) -> Assessment`` (its ``cited`` folded, its ``evidence``
#: appended to the diagnosis), in the order v3 added their weights: the signature's rows, repeated
#: calls, the tracker, a pinned seed, the size of an exact factor, a first call that differs, params
#: with a zero gradient, the trace, the source rules, the per-launch check, builtins, the release
#: differential, the ablation of hand-written adjoints and a gradient cached from an earlier iteration (which
#: withdraws the taped-loss comparison).
BUG_EVIDENCE = (_signature_rows, _cited_by("determinism"), _cited_by("noise"), tracker_assess.bug_evidence,
                _stochastic_pinned, fd_assess.factor_bug_evidence, _first_call_differs,
                fd_assess.zero_params_bug_evidence, trace_assess.bug_evidence, _cited_by("source"),
                launches_assess.bug_evidence, _cited_by("builtins"), _cited_by("release"), ablation_assess.bug_evidence,
                _cached_gradient)


class ReferenceEngine(WorkerEngine):
    """The reference engine. See the module docstring.

    Parameters
    ----------
    timeout_s : float
        Wall-clock limit of one variant's measurement.
    options : dict, optional
        Worker options merged over the engine's (``probes``, ``knobs``; see
        :mod:`defects4warp.probes.worker`).
    python : str, optional
        Interpreter that runs the measurement (a per-release environment from
        :mod:`defects4warp.envs`); default: this one.
    differential : bool
        When the gradient is wrong, measure the program on another release
        too (:func:`defects4warp.engines.release.differential`; default True).
    other_release : str, optional
        The release to compare with (default: the newest; none when the
        release under test is the newest).
    """

    name = "reference"
    version = __version__ + "+v4"
    options = {"probes": list(PROBES)}

    def __init__(self, timeout_s=None, options=None, python=None, differential: bool = True,
                 other_release: str | None = None):
        super().__init__(timeout_s=timeout_s, options=options, python=python)
        # configuration only: nothing per item lives on the engine, since one
        # instance diagnoses items of mixed device and scale from a thread pool
        self.differential = differential
        self.other_release = other_release

    def measurement_options(self) -> dict:
        """The worker options and the release differential's settings (see
        :meth:`defects4warp.engines.base.WorkerEngine.measurement_options`)."""
        return {"worker": self.options, "differential": self.differential, "other_release": self.other_release}

    def measure(self, path, device: str = "cpu", scale: str = "small", script=None) -> dict:
        """The worker's measurement (:meth:`WorkerEngine.measure`) and, when the
        gradient is wrong (the interpretation of that measurement says ``bug``),
        the release differential (:func:`defects4warp.engines.release.differential`),
        measured on the device and scale of the worker's document.

        Adds to the record ``differential`` (its result, None when not measured
        or when no other release could be prepared), ``differential_measured``
        (bool) and, when it failed, ``differential_error`` (one line).
        ``engines/release.py``, which measures it, joins ``code``.
        """
        record = super().measure(path, device, scale, script=script)
        doc = record["doc"]
        record["differential"], record["differential_measured"] = None, False
        if not (self.differential and doc.get("warp_version") and not record["worker"]["failure"]):
            return record
        if interpret(doc, path=path)["verdict"] != "bug":
            return record
        record["differential_measured"] = True
        try:
            diff = release_probe.differential(path, doc.get("device", "cpu"), doc.get("scale", "small"),
                                              doc["warp_version"], other=self.other_release,
                                              timeout_s=min(self.timeout_s, 120.0), base_doc=doc)
        except Exception as exc:  # noqa: BLE001 - extra evidence must never lose the measurement
            record["differential_error"] = f"{type(exc).__name__}: {exc}"
            return record
        record["differential"] = diff
        # the other releases' workers run the same worker modules (a subset of the probes)
        record["code"] = merge(record["code"], digests(("engines/release.py",)))
        return record

    def judge(self, doc: dict, path) -> dict:
        """Interpret a worker document alone (no release differential)."""
        return interpret(doc, path=path)

    def judge_record(self, record: dict, path) -> dict:
        """Interpret a measurement record: the worker's document with the
        release differential the record holds. A ``bug`` whose record has no
        differential because it was measured under an interpretation that
        did not ask for one says so (``--fresh`` measures it)."""
        doc = record.get("doc") or {}
        diag = interpret(doc, path=path, differential=record.get("differential"))
        if record.get("differential_error"):
            diag["evidence"].append(_ev("release", True, f"release differential failed: {record['differential_error']}", None))
        elif (diag["verdict"] == "bug" and self.differential and doc.get("warp_version")
              and not record.get("differential_measured", True)):
            diag["evidence"].append(_ev("release", True, "release differential not measured: this measurement was "
                                        "taken when its reading was not a bug (--fresh measures it)", None))
        return diag
