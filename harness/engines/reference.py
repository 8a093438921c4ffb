"""Reference diagnostic engine (v3): measure, read the signature, rank classes.

The engine runs the measurement worker (:mod:`harness.probes.worker`) with
an explicit probe list (:data:`PROBES`; each probe is a module of
:mod:`harness.probes`) in a subprocess, then interprets the document
(:func:`interpret`, a pure function tested on synthetic documents):

1. the **verdict**, from measurement only. ``bug`` needs direct evidence
   (NaN/inf in the gradient of a finite objective, growth across calls, a
   later call that differs at the same point) or a disagreement with finite
   differences that survived the step sweep (:mod:`harness.probes.sweep`:
   ``confirmed``), or a disagreement with the problem's
   ``reference_gradient()``. Items below the FD resolution
   (:mod:`harness.probes.noise`) are *unresolved* and never count;
   disagreements the sweep explains as a kink or staircase give ``no_bug``
   (``nonsmooth_tie``, ``piecewise_constant``). ``inconclusive`` when the
   forward is stochastic and the seed cannot be pinned, the objective is not
   finite, or nothing was resolved; ``refused`` when the release refuses to
   build or run the program; ``error`` when it could not be measured.
2. the **signature** of the error (:func:`harness.measure.judge.signature_of`);
3. ranked **classes**: every bug class whose taxonomy signatures include the
   measured one starts at :data:`FLOOR`; :data:`PRIORS` adds the weight the
   signature gives each class; then each probe's assessment adds its
   weights: repeated calls (:mod:`harness.probes.determinism`), the exact
   factor and its size (:func:`factor_weights`), the runtime trace's direct
   findings (:mod:`harness.probes.trace`, :data:`TRACE_WEIGHT`), source
   findings in code that ran (:mod:`harness.probes.source`), the per-launch
   check, the release differential and the builtins with documented adjoint
   defects (:mod:`harness.probes.release`). Weights are normalised to scores
   that sum to 1.

A source or trace finding never sets the verdict: on a variant whose
gradient agrees it is reported as a smell in the evidence.
"""

from __future__ import annotations

import math
import re

from .. import __version__
from ..measure.judge import comparisons, signature_of
from ..probes import ASSESSORS, load as _load_probes
from ..probes import release as release_probe
from ..probes import source as source_probe
from ..taxonomy import BUG_CLASSES, CLASSES
from .base import WorkerEngine, ev as _ev

#: The worker-side probes the reference engine runs, in order. The overwrite
#: tracker is left out: the runtime trace sees write-after-read directly, and
#: the tracker makes Warp skip its kernel cache (every module recompiles).
PROBES = ("determinism", "trace", "noise", "fd", "sweep", "reference", "nan_scan", "horizon", "train", "launches")

#: Signature -> {class id: prior weight}. Weights are relative and hand-set
#: from the signature column of docs/taxonomy.md (how often an expert sees
#: each class behind that signature), not fitted to the corpus; they are
#: normalised after the findings are added. docs/engines.md measures what
#: this table alone achieves (the fd-only engine).
PRIORS = {
    "nan_inf": {"nonsmooth_nan": 0.45, "where_nan": 0.35, "inplace_math": 0.05, "component_reassign": 0.05,
                "custom_adjoint_error": 0.05, "warp_adjoint_bug": 0.05},
    "growth": {"missing_tape_zero": 0.8, "double_count": 0.15, "stale_gradient_read": 0.05, "seed_mismatch": 0.05},
    "iteration": {"stale_gradient_read": 0.5, "missing_tape_zero": 0.25, "offtape_mutation": 0.1,
                  "double_count": 0.1, "overwrite": 0.05},
    "zero": {"missing_requires_grad": 0.3, "backward_disabled": 0.15, "tape_scope": 0.15, "copy_adjoint": 0.1,
             "warp_adjoint_bug": 0.1, "overwrite": 0.1, "native_no_adjoint": 0.05, "dynamic_loop": 0.05},
    "exact_factor": {"component_reassign": 0.2, "inplace_math": 0.15, "custom_adjoint_error": 0.15,
                     "dynamic_loop": 0.1, "double_count": 0.1, "seed_mismatch": 0.1, "overwrite": 0.1,
                     "copy_adjoint": 0.05},
    "sparse": {"overwrite": 0.3, "copy_adjoint": 0.15, "warp_adjoint_bug": 0.15, "dynamic_loop": 0.1,
               "custom_adjoint_error": 0.1, "offtape_mutation": 0.1, "inplace_math": 0.1},
    "subtly_wrong": {"overwrite": 0.25, "offtape_mutation": 0.15, "dynamic_loop": 0.15, "inplace_math": 0.1,
                     "custom_adjoint_error": 0.1, "truncation": 0.1, "copy_adjoint": 0.05,
                     "component_reassign": 0.05, "warp_adjoint_bug": 0.05},
}

#: Weight of one trace finding, shared by the classes it names (a measured
#: fact about the run, so it outweighs every prior).
TRACE_WEIGHT = 1.2
#: Weight added to ``truncation`` when one gradient() call runs backward on
#: several separate tapes (windows) and no trace finding says they double count.
WINDOWS_WEIGHT = 0.8
#: Weight added to ``double_count`` for an exact factor of 2 (or 3 on 1.12.1's double backward).
FACTOR2_BOOST = 0.4
#: Weight added to ``seed_mismatch`` for an exact factor that is an integer
#: > 2 or its reciprocal (the size of a reduction: ones over N elements is N x
#: the mean's gradient), and more when it equals the size of the array the
#: trace saw seeded.
BIG_FACTOR_BOOST = 0.6
SEED_SIZE_BOOST = 1.5
#: Weight added to ``rng_replay`` when a stochastic forward disagrees under a pinned seed.
SEED_BOOST = 0.8
#: Prior weight of every bug class whose taxonomy signatures include the
#: measured one (so that findings can lift a class the table does not name).
FLOOR = 0.02
#: Weight of the "iteration" priors when calls at the same point differ but
#: call 1 already disagrees (state carried between iterations on top of
#: another signature, e.g. a gradient read one iteration late).
ITERATION_WEIGHT = 1.0
#: Weight of a parameter whose gradient is exactly zero while finite
#: differences are not (the chain to that parameter is cut): the "zero"
#: priors are added at this fraction even when the overall signature is another one.
PARAM_ZERO_WEIGHT = 1.5
#: Per-launch check: weight added per family when some kernel fails alone
#: (the error is inside a kernel) and when every kernel passes while the
#: end-to-end check fails (the error is in the taping pattern).
LAUNCH_FAIL_BOOST = {"kernel": 0.4, "custom": 0.4, "warp": 0.2}
LAUNCH_PASS_BOOST = {"taping": 0.3, "warp": 0.1}
#: Weight added to backward_disabled for a recorded kernel compiled without adjoint.
NO_ADJOINT_BOOST = 0.8
#: Weight of tracker warnings (only when the tracker probe ran).
TRACKER_BOOST = 0.6
#: Tracker warnings raised in these stages count.
TRACKER_STAGES = ("load", "objective", "gradient_1")
#: How a disagreement between finite differences and a trusted
#: reference_gradient() is explained (harness.measure.compare.reference_disagreement).
REFERENCE_EXPLANATIONS = {"kink": "nonsmooth_tie", "precision": "fd_precision",
                          "smooth_other": "surrogate_gradient", "erratic": "chaotic_horizon"}
#: Sweep verdicts that explain a disagreement as a finite-difference artefact, and the class they point at.
ARTEFACTS = {"kink": "nonsmooth_tie", "kink_nearby": "nonsmooth_tie", "staircase": "piecewise_constant"}

def _rank(weights: dict) -> list:
    # fsum: exactly rounded, so the scores do not depend on the order the
    # weights were added in (that order followed string hashing, which
    # differs between processes)
    total = math.fsum(weights.values()) or 1.0
    ranked = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"id": k, "score": round(v / total, 4)} for k, v in ranked if v > 0]


def _zero_params(doc: dict) -> list:
    """Params whose checked elements are all exactly zero in call 1 while finite differences are not."""
    calls = (doc.get("fd") or {}).get("calls") or []
    if not calls or doc.get("reference") or not calls[0].get("elements"):
        return []
    per = calls[0]["elements"].get("per_param", {})
    return sorted(k for k, s in per.items() if s["signature"] == "zero")


def _flat_params(doc: dict) -> list:
    """Params whose autodiff and finite differences are both exactly zero."""
    calls = (doc.get("fd") or {}).get("calls") or []
    per = (calls[0].get("elements") or {}).get("per_param", {}) if calls else {}
    return sorted(k for k, s in per.items() if s["ad_zero"] and s["fd_zero"])


def _factor(comps) -> float | None:
    for label, c in comps:
        if c.get("factor") is not None:
            return c["factor"]
    return None


def _joint_factor(doc: dict) -> float | None:
    calls = (doc.get("fd") or {}).get("calls") or []
    if calls:
        return (calls[0].get("joint") or {}).get("factor")
    return None


def factor_weights(factor: float | None, seeds: list, *, factor2_boost: float = FACTOR2_BOOST,
                   big_factor_boost: float = BIG_FACTOR_BOOST, seed_size_boost: float = SEED_SIZE_BOOST,
                   max_reduction: int = 10**6) -> tuple:
    """Class weights from the size of an exact factor.

    Parameters
    ----------
    factor : float or None
        autodiff / truth, constant over the items.
    seeds : list[int]
        Element counts of the arrays the trace saw seeded by ``backward()``.
    max_reduction : int
        Largest factor read as the size of a reduction (default 10^6: a
        blown-up gradient, e.g. 2.8e7 x, is not a mean over that many elements).

    Returns
    -------
    (weights, note)
    """
    w, note = {}, None
    if factor is None or factor == 0:
        return w, note
    mag = abs(factor) if abs(factor) >= 1 else 1.0 / abs(factor)
    near = round(mag)
    # a reduction over at most max_reduction elements; past that every number is "an integer within 1 %"
    integral = 2 <= near <= max_reduction and abs(mag - near) <= 1e-2 * mag
    if integral and near in (2, 3) and abs(factor) >= 1:
        w["double_count"] = factor2_boost
    if integral and near > 2:
        w["seed_mismatch"] = big_factor_boost
        note = f"the factor is {near if abs(factor) >= 1 else '1/' + str(near)}: the size of a reduction"
    for n in seeds:
        if n > 1 and integral and abs(near - n) <= max(1e-2 * n, 0.5):
            w["seed_mismatch"] = w.get("seed_mismatch", 0.0) + seed_size_boost
            note = f"the factor equals the {n} elements of the array the backward pass was seeded over"
    return w, note


def interpret(doc: dict, findings=None, *, path=None, differential: dict | None = None) -> dict:
    """Turn a worker measurement document into a diagnosis (without ``cost``).

    Parameters
    ----------
    doc : dict
        The worker's document.
    findings : list, optional
        Source findings to use instead of scanning ``path`` (a list of
        :meth:`harness.measure.source.Finding.to_dict`); with neither, no
        source evidence.
    path : path-like, optional
        The variant folder (source evidence, builtins of launched kernels).
    differential : dict, optional
        :func:`harness.probes.release.differential`'s result.

    Returns
    -------
    dict
        ``verdict``, ``classes``, ``signature``, ``evidence`` as in :mod:`harness.engines.base`.
    """
    _load_probes()
    evidence = []
    det = doc.get("determinism", {})
    nan = doc.get("nan_scan", {})
    version = doc.get("warp_version")

    weights_from = {}
    for name in ("determinism", "noise"):
        if name in ASSESSORS:
            a = ASSESSORS[name](doc)
            evidence += a.evidence
            weights_from[name] = a

    # NaN scan
    if nan:
        bad = nan.get("gradient_nonfinite") or {}
        if bad:
            evidence.append(_ev("nan_scan", False, "NaN/inf in the gradient of " + ", ".join(sorted(bad)) +
                                (" while the objective is finite" if nan.get("objective_finite") else ""), bad))
        else:
            evidence.append(_ev("nan_scan", True, "gradient is finite", None))

    # end-to-end comparisons
    comps = comparisons(doc)
    for label, c in comps:
        probe = "fd" if "finite" in label else "reference"
        if c["signature"] == "agrees":
            extra = f", {c['n_unresolved']} below resolution" if c.get("n_unresolved") else ""
            evidence.append(_ev(probe, True, f"{label}: agrees on {c['n'] - c.get('n_unresolved', 0)} checked{extra} "
                                f"(relative error {c['relative_error']:.2g})", None))
        elif c["signature"] == "unresolved":
            evidence.append(_ev(probe, True, f"{label}: all {c['n']} items below the finite-difference resolution "
                                "(unresolved, not agreement)", None))
        else:
            text = (f"{label}: {c['n_mismatch']} of {c['n'] - c.get('n_unresolved', 0)} resolved items disagree, "
                    f"relative error {c['relative_error']:.3g}, signature {c['signature']}")
            if c.get("factor") is not None:
                text += f" (factor {c['factor']:.6g})"
            evidence.append(_ev(probe, False, text, {k: c.get(k) for k in ("mismatched", "factor", "zero_fraction")}))
    ref = doc.get("reference") or {}
    fd_vs_ref = ref.get("fd_vs_reference")
    if fd_vs_ref and fd_vs_ref["signature"] != "agrees":
        evidence.append(_ev("reference", False, f"finite differences disagree with reference_gradient() (relative error "
                            f"{fd_vs_ref['relative_error']:.3g}): FD cannot judge here", None))

    # step sweep
    sweeps = list((doc.get("sweep") or {}).get("items", [])) + [dict(r, point="after train()") for r in
                                                             (doc.get("train") or {}).get("sweep", [])]
    for r in sweeps:
        where = f"{r['param']}[{r['index']}]" if r.get("kind") == "coord" else "a random direction"
        evidence.append(_ev("sweep", r["verdict"] != "confirmed",
                            f"step sweep at {where} ({r['point']} point): autodiff {r['autodiff']:.4g}, one-sided "
                            f"{r['forward'][0]:.4g} / {r['backward'][0]:.4g} at the smallest step, central "
                            + ", ".join(f"{c:.4g}" for c in r["central"]) + f": {r['verdict']}", r))
    unswept = (doc.get("sweep") or {}).get("unswept", 0)
    if unswept:
        evidence.append(_ev("sweep", True, f"{unswept} further disagreeing item(s) not swept (budget): not counted", None))

    # tracker (only when the tracker probe ran)
    tracker = doc.get("tracker") or {}
    warns = [w for w in tracker.get("warnings", []) if set(w.get("stages", [])) & set(TRACKER_STAGES)]
    if tracker.get("enabled"):
        if warns:
            desc = "; ".join(f"{w.get('arg') or w.get('operation') or 'array'} in {w.get('kernel') or '?'} at "
                             f"{', '.join(w['sites']) or '?'}" for w in warns[:5])
            evidence.append(_ev("tracker", False, f"overwrite tracker: {len(warns)} write-after-read warning(s): {desc}", warns))
        else:
            evidence.append(_ev("tracker", True, "overwrite tracker raised no warning during the first gradient() call", None))

    # horizon
    hz = doc.get("horizon")
    if hz:
        if hz["first_disagreement"] is None:
            evidence.append(_ev("horizon", True, f"with steps={hz['steps']} set again the directional check agrees", hz))
        else:
            evidence.append(_ev("horizon", False, f"autodiff and finite differences first part at steps="
                                f"{hz['first_disagreement']} of {hz['steps']} (bisection over the horizon)", hz))

    # train
    tr = doc.get("train")
    if tr:
        evidence.append(_ev("train", "comparison" not in tr or all(
            (tr["comparison"].get(k) or {}).get("signature", "agrees") in ("agrees", "unresolved") for k in ("elements", "directions")),
            f"re-measured after {tr['iterations']} iterations of train() (params moved {tr.get('moved', 0):.3g} relative)", None))

    # per-launch check
    kernels = (doc.get("launches") or {}).get("kernels", [])
    failing = [k for k in kernels if k.get("ok") is False]
    passing = [k for k in kernels if k.get("ok") is True]
    no_adjoint = [k for k in kernels if (k.get("skipped") or "").startswith("compiled with enable_backward=False")]
    for k in failing:
        w = k.get("worst") or {}
        evidence.append(_ev("launches", False, f"kernel {k['kernel']} disagrees with finite differences in isolation: "
                            f"d {w.get('output')} / d {w.get('input')} relative error {w.get('relative_error', float('nan')):.3g} "
                            f"({w.get('signature')})", k))
    if passing:
        evidence.append(_ev("launches", True, f"{len(passing)} kernel(s) agree with finite differences in isolation: "
                            + ", ".join(k["kernel"] for k in passing), None))
    for k in kernels:
        if k.get("skipped"):
            evidence.append(_ev("launches", k not in no_adjoint, f"kernel {k['kernel']} not checked: {k['skipped']}", None))

    # runtime trace
    trace = doc.get("trace") or {}
    tfind = trace.get("findings") or []
    for f in tfind:
        evidence.append(_ev("trace", False, f"trace: {f.get('detail')}", {"id": f.get("id"), "classes": f.get("classes"),
                                                                          "data": f.get("data")}))
    if "findings" in trace and not tfind:
        evidence.append(_ev("trace", True, "runtime trace of the first gradient() call: no taping finding", None))
    if trace.get("error"):
        evidence.append(_ev("trace", True, f"runtime trace unavailable: {trace['error']}", None))

    # source evidence (only code that ran)
    if findings is not None:
        src = _assess_given_findings(findings, version)
    else:
        src = source_probe.assess(doc, path, warp_version=version) if path is not None else None
    if src is not None:
        evidence += src.evidence
    # builtins with documented adjoint defects, release differential
    kernel_names = release_probe.kernel_names(doc)
    builtins = release_probe.builtin_findings(path, kernel_names, version) if path is not None else None
    if builtins is not None:
        evidence += builtins.evidence
    diff_a = release_probe.assess_differential(differential, copies=((doc.get("trace") or {}).get("summary") or {}).get("copies"))
    evidence += diff_a.evidence

    # -- verdict ---------------------------------------------------------
    obj_finite = nan.get("objective_finite", True)
    if not comps and not nan.get("gradient_nonfinite"):
        return {"verdict": "inconclusive", "classes": [], "signature": None, "evidence": evidence}
    if not obj_finite:
        evidence.append(_ev("nan_scan", False, "objective() is not finite at the given point", None))
        return {"verdict": "inconclusive", "classes": [], "signature": None, "evidence": evidence}
    if det.get("stochastic") and not det.get("seed_pinned"):
        return {"verdict": "inconclusive", "classes": [{"id": "stochastic_forward", "score": 1.0}],
                "signature": None, "evidence": evidence}

    sig = signature_of(doc)
    direct = sig in ("nan_inf", "growth", "iteration") or bool(nan.get("gradient_nonfinite"))
    has_sweep = "sweep" in doc
    verdicts = [r["verdict"] for r in sweeps]
    confirmed = verdicts.count("confirmed")
    artefacts = [v for v in verdicts if v in ARTEFACTS]
    disagree = [c for _, c in comps if c["signature"] not in ("agrees", "unresolved")]
    if ref:
        counted = bool(disagree)
    elif has_sweep:
        counted = confirmed > 0
    else:
        counted = bool(disagree)
    is_bug = direct or counted

    if not is_bug:
        if disagree and artefacts and not confirmed:
            kinds = sorted({ARTEFACTS[v] for v in artefacts})
            evidence.append(_ev("sweep", True, "the disagreement is a finite-difference artefact: one-sided differences "
                                "at a smaller step explain the autodiff value (" + ", ".join(sorted(set(artefacts))) + ")", None))
            w = {k: 0.8 / len(kinds) for k in kinds}
            w["correct"] = 0.2
            return {"verdict": "no_bug", "classes": _rank(w), "signature": "agrees", "evidence": evidence}
        resolved_agree = [c for _, c in comps if c["signature"] == "agrees"]
        if disagree and not resolved_agree:
            evidence.append(_ev("fd", True, "no disagreement survived the step sweep and nothing else agrees: "
                                "the measurement is unresolved", None))
            return {"verdict": "inconclusive", "classes": [{"id": "fd_precision", "score": 1.0}], "signature": None,
                    "evidence": evidence}
        if not disagree and not resolved_agree:
            evidence.append(_ev("fd", True, "every finite-difference item is below resolution: unresolved", None))
            return {"verdict": "inconclusive", "classes": [{"id": "fd_precision", "score": 1.0}], "signature": None,
                    "evidence": evidence}
        if disagree:
            evidence.append(_ev("sweep", True, "disagreements did not survive the step sweep (unresolved at the base "
                                "step): not counted", None))
        weights = {"correct": 1.0}
        flat = _flat_params(doc)
        n_params = len(doc.get("protocol", {}).get("params", {})) or 1
        piecewise = src is not None and "piecewise_constant_op" in src.facts.get("rules", [])
        if flat and (piecewise or len(flat) == n_params):
            weights["piecewise_constant"] = 0.8 + (0.8 if piecewise else 0.0)
            evidence.append(_ev("fd", False, "gradient and finite differences are both exactly zero for " + ", ".join(flat) +
                                ": the objective is locally flat in them", {"params": flat}))
        if artefacts:
            for v in set(artefacts):
                weights[ARTEFACTS[v]] = weights.get(ARTEFACTS[v], 0.0) + 0.5
        if det.get("stochastic") and det.get("seed_pinned"):
            weights = {"stochastic_forward": 0.9, "correct": 0.1}
        if fd_vs_ref and fd_vs_ref["signature"] != "agrees":
            weights = {"correct": 0.1}
            for rec in ref.get("sweep", []):
                cls = REFERENCE_EXPLANATIONS[rec["verdict"]]
                weights[cls] = weights.get(cls, 0.0) + 1.0
                evidence.append(_ev("reference", True, f"finite differences at {rec['param']}[{rec['index']}] across steps "
                                    + ", ".join(f"{c:.4g}" for c in rec["central"])
                                    + f" vs reference {rec['autodiff']:.4g}: {rec['verdict']} ({cls})", rec))
            if src is not None and "custom_adjoint" in src.facts.get("rules", []):
                weights["surrogate_gradient"] = weights.get("surrogate_gradient", 0.0) + 0.5
            if len(weights) == 1:
                weights["fd_precision"] = 0.9
        return {"verdict": "no_bug", "classes": _rank(weights), "signature": "agrees", "evidence": evidence}

    # -- classes of a bug ----------------------------------------------------
    if sig in ("agrees", "unresolved"):
        sig = "subtly_wrong"
    weights = {c: FLOOR for c in sorted(BUG_CLASSES) if sig in CLASSES[c].signatures}
    for c, w in PRIORS.get(sig, PRIORS["subtly_wrong"]).items():
        weights[c] = weights.get(c, 0.0) + w

    def add(ws, scale=1.0):
        for c, w in ws.items():
            if c in BUG_CLASSES:
                weights[c] = weights.get(c, 0.0) + scale * w

    for a in weights_from.values():
        add(a.weights)
    inplace = set(src.facts.get("inplace_scopes", [])) if src is not None else set()
    for w in warns:
        target = "inplace_math" if w.get("kernel") in inplace else "overwrite"
        weights[target] = weights.get(target, 0.0) + TRACKER_BOOST / len(warns)
    if det.get("stochastic") and det.get("seed_pinned"):
        weights["rng_replay"] = weights.get("rng_replay", 0.0) + SEED_BOOST
    factor = _factor(comps) if sig == "exact_factor" else None
    if factor is None and sig in ("exact_factor", "subtly_wrong", "sparse"):
        factor = _joint_factor(doc)
    seeds = [int(f.get("data", {}).get("seed_size") or 0) for f in tfind if isinstance(f.get("data"), dict)]
    seeds += [int(n) for n in (trace.get("summary") or {}).get("seed_sizes", []) or []]
    fw, note = factor_weights(factor, seeds, big_factor_boost=0.0 if failing else BIG_FACTOR_BOOST)
    add(fw)
    if note:
        evidence.append(_ev("fd", False, f"exact factor {factor:.6g}: {note}", {"factor": factor}))
    if det.get("first_call_differs") and sig not in ("growth", "iteration"):
        add(PRIORS["iteration"], ITERATION_WEIGHT)
    zero_params = _zero_params(doc)
    if zero_params and sig != "zero":
        add(PRIORS["zero"], PARAM_ZERO_WEIGHT)
        evidence.append(_ev("fd", False, "autodiff is exactly zero for param(s) " + ", ".join(zero_params) +
                            " where finite differences are not", {"params": zero_params}))
    for f in tfind:
        cls = [c for c in (f.get("classes") or []) if c in BUG_CLASSES]
        if f.get("id") == "inplace_read_write" and not inplace_kernel(f, inplace):
            # one launch reads and stores the same array: `*=`/`/=` is inplace_math, any other
            # read-then-store of the same element is a write-after-read within the kernel
            cls = ["overwrite"]
        for c in cls:
            weights[c] = weights.get(c, 0.0) + TRACE_WEIGHT / len(cls)
    n_tapes = (trace.get("summary") or {}).get("backward_tapes") or 0
    if n_tapes >= 2 and not any("double_count" in (f.get("classes") or []) for f in tfind):
        weights["truncation"] = weights.get("truncation", 0.0) + WINDOWS_WEIGHT
        evidence.append(_ev("trace", False, f"trace: one gradient() call ran backward on {n_tapes} separate tapes "
                            "(windows): the gradient through the state carried between them depends on seeding each "
                            "window from the next", {"backward_tapes": n_tapes}))
    if src is not None:
        for c, w in src.weights.items():
            if c in weights:
                weights[c] += w
    unchecked = [k for k in kernels if k.get("ok") is None and k not in no_adjoint]
    boost = LAUNCH_FAIL_BOOST if failing else (LAUNCH_PASS_BOOST if passing and not unchecked else {})
    for c in weights:
        weights[c] += boost.get(CLASSES[c].family, 0.0)
    if no_adjoint:
        weights["backward_disabled"] = weights.get("backward_disabled", 0.0) + NO_ADJOINT_BOOST
    if builtins is not None:
        add(builtins.weights)
    add(diff_a.weights)
    return {"verdict": "bug", "classes": _rank(weights), "signature": sig, "evidence": evidence}


def inplace_kernel(finding: dict, scopes: set) -> bool:
    """Whether a trace finding's kernel is one where a source finding saw ``*=``/``/=`` (``scopes``)."""
    text = finding.get("detail") or ""
    data = finding.get("data") or {}
    names = {str(data.get(k)) for k in ("kernel", "name") if data.get(k)}
    return any(s and (s in names or re.search(rf"\b{re.escape(s)}\b", text)) for s in scopes)


def _assess_given_findings(findings: list, version):
    """An assessment from explicitly given source findings (tests; no coverage gating)."""
    from ..measure import source as rules
    from ..probes import Assessment

    a = Assessment()
    live = [f for f in findings if source_probe.release_ok(f["rule"], version)]
    for f in findings:
        gated = f not in live
        a.add("source", False, f"{f['file']}:{f['line']}: {f['detail']}" + (f" (not on Warp {version})" if gated else ""),
              {"rule": f["rule"], "classes": f["classes"], "counted": not gated})
    if not findings:
        a.add("source", True, "no source pattern found", None)
    for rule in {f["rule"] for f in live}:
        for c in rules.RULES[rule]:
            a.weigh(c, rules.SPECIFICITY.get(rule, rules.DEFAULT_SPECIFICITY))
    a.facts["rules"] = sorted({f["rule"] for f in live})
    a.facts["inplace_scopes"] = sorted({f.get("scope") for f in live if f["rule"] == "inplace_array_op"})
    return a


class ReferenceEngine(WorkerEngine):
    """The reference engine. See the module docstring.

    Parameters
    ----------
    timeout_s : float
        Wall-clock limit of one variant's measurement.
    options : dict, optional
        Worker options merged over the engine's (``probes``, ``knobs``; see
        :mod:`harness.probes.worker`).
    python : str, optional
        Interpreter that runs the measurement (a per-release environment from
        :mod:`harness.envs`); default: this one.
    differential : bool
        When the gradient is wrong, measure the program on another release
        too (:func:`harness.probes.release.differential`; default True).
    other_release : str, optional
        The release to compare with (default: the newest; none when the
        release under test is the newest).
    """

    name = "reference"
    version = __version__ + "+v3"
    options = {"probes": list(PROBES)}

    def __init__(self, timeout_s=None, options=None, python=None, differential: bool = True,
                 other_release: str | None = None):
        super().__init__(timeout_s=timeout_s, options=options, python=python)
        # configuration only: nothing per item lives on the engine, since one
        # instance diagnoses items of mixed device and scale from a thread pool
        self.differential = differential
        self.other_release = other_release

    def judge(self, doc: dict, path) -> dict:
        """Interpret ``doc``; the device and scale of a release differential
        are the ones the document was measured at (``doc["device"]``,
        ``doc["scale"]``, written by the worker), never state of the engine."""
        diag = interpret(doc, path=path)
        if self.differential and diag["verdict"] == "bug" and doc.get("warp_version"):
            try:
                diff = release_probe.differential(path, doc.get("device", "cpu"), doc.get("scale", "small"),
                                                  doc["warp_version"],
                                                  other=self.other_release, timeout_s=min(self.timeout_s, 120.0),
                                                  base_doc=doc)
            except Exception as exc:  # noqa: BLE001 - extra evidence must never lose the diagnosis
                diff = None
                diag["evidence"].append(_ev("release", True, f"release differential failed: {type(exc).__name__}: {exc}", None))
            if diff:
                diag = interpret(doc, path=path, differential=diff)
        return diag
