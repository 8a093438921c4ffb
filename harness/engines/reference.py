"""Reference diagnostic engine: measure, read the signature, rank classes.

The engine runs the measurement worker (:mod:`harness.measure.worker`) on the
variant in a subprocess, scans its sources (:mod:`harness.measure.source`),
and interprets both (:func:`interpret`, a pure function tested on synthetic
measurements):

1. the **signature** of the error (:func:`harness.measure.judge.signature_of`):
   NaN/inf, growth across calls, a later call that differs, exactly zero, one
   exact factor, a few elements, or subtly wrong; ``agrees`` when every
   comparison passed;
2. the **verdict**, from measurement only: ``bug`` when autodiff disagrees
   with the truth (finite differences, or ``reference_gradient()`` when the
   problem has one), ``no_bug`` when it agrees, ``inconclusive`` when the
   forward is stochastic and the seed cannot be pinned or the objective itself
   is not finite, ``error`` when the program could not be measured;
3. ranked **classes**: every bug class whose taxonomy signatures include the
   measured one starts at :data:`FLOOR`; :data:`PRIORS` adds the weight the
   signature gives each class; then measured findings add theirs: tracker
   warnings (``overwrite``), a stochastic forward that disagrees under a
   pinned seed (``rng_replay``), an exact factor of 2 (``double_count``),
   later calls that are exactly zero (``stale_gradient_read``), a param whose
   gradient alone is exactly zero (the cut-chain classes), the per-launch
   check (a kernel failing alone points inside kernels; all passing points at
   the taping pattern), and source findings by their specificity, gated by
   the Warp release where the pattern is release-dependent. Weights are
   normalised to scores that sum to 1.

A source finding never sets the verdict: on a variant whose gradient agrees it
is reported as a smell in the evidence.
"""

from __future__ import annotations

import math

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from .. import __version__
from ..measure import source
from ..measure.judge import comparisons, signature_of
from ..taxonomy import BUG_CLASSES, CLASSES
from .base import WorkerEngine, ev as _ev

#: Signature -> {class id: prior weight}. Weights are relative and hand-set
#: from the signature column of docs/taxonomy.md (how often an expert sees
#: each class behind that signature), not fitted to the corpus; they are
#: normalised after the findings are added. docs/engines.md measures what
#: this table alone achieves (the fd-only engine).
PRIORS = {
    "nan_inf": {"nonsmooth_nan": 0.45, "where_nan": 0.35, "inplace_math": 0.05, "component_reassign": 0.05,
                "custom_adjoint_error": 0.05, "warp_adjoint_bug": 0.05},
    "growth": {"missing_tape_zero": 0.8, "double_count": 0.15, "stale_gradient_read": 0.05},
    "iteration": {"stale_gradient_read": 0.5, "missing_tape_zero": 0.25, "offtape_mutation": 0.1,
                  "double_count": 0.1, "overwrite": 0.05},
    "zero": {"missing_requires_grad": 0.3, "backward_disabled": 0.15, "tape_scope": 0.15, "copy_adjoint": 0.1,
             "warp_adjoint_bug": 0.1, "overwrite": 0.1, "native_no_adjoint": 0.05, "dynamic_loop": 0.05},
    "exact_factor": {"component_reassign": 0.25, "inplace_math": 0.2, "custom_adjoint_error": 0.15,
                     "dynamic_loop": 0.15, "double_count": 0.1, "overwrite": 0.1, "copy_adjoint": 0.05},
    "sparse": {"overwrite": 0.3, "copy_adjoint": 0.15, "warp_adjoint_bug": 0.15, "dynamic_loop": 0.1,
               "custom_adjoint_error": 0.1, "offtape_mutation": 0.1, "inplace_math": 0.1},
    "subtly_wrong": {"overwrite": 0.25, "offtape_mutation": 0.15, "dynamic_loop": 0.15, "inplace_math": 0.1,
                     "custom_adjoint_error": 0.1, "truncation": 0.1, "copy_adjoint": 0.05,
                     "component_reassign": 0.05, "warp_adjoint_bug": 0.05},
}

#: Weight shared by the tracker's warnings (to ``overwrite``, or to
#: ``inplace_math`` for a kernel doing ``a[i] *= ...``) when the gradient is wrong.
TRACKER_BOOST = 0.6
#: Weight added to ``rng_replay`` when a stochastic forward disagrees under a pinned seed.
SEED_BOOST = 0.8
#: Weight added to ``double_count`` for an exact factor of 2 (within 1e-6).
FACTOR2_BOOST = 0.4
#: Weight added to ``stale_gradient_read`` when later calls return exactly zero.
LATER_ZERO_BOOST = 0.5

#: Relative growth of the gradient norm from each call to the next (same
#: point) that reads as partial accumulation, and the weight it adds to
#: ``missing_tape_zero`` when the calls are not exact multiples.
GROWING_NORM = 0.1
GROWING_NORM_BOOST = 0.5

#: Prior weight of every bug class whose taxonomy signatures include the
#: measured one (so that findings can lift a class the table does not name).
FLOOR = 0.02

#: Weight of the "iteration" priors when calls at the same point differ but
#: call 1 already disagrees (state carried between iterations on top of
#: another signature, e.g. a gradient read one iteration late).
ITERATION_WEIGHT = 1.0

#: Weight of a parameter whose gradient is exactly zero while finite
#: differences are not (the chain to that parameter is cut): the "zero"
#: priors are added at this fraction even when the overall signature is
#: another one.
PARAM_ZERO_WEIGHT = 1.5

#: Source rules that only point at a class on some Warp releases (from the
#: Warp changelog for 1.13.0, 1.14.0 and 1.17.0): component
#: writes to array elements were fixed in 1.14, copy/clone adjoints in 1.17,
#: output adjoints are consumed by backward() from 1.13.
RELEASE_GATES = {
    "array_component_write": SpecifierSet("<1.14"),
    "copy_on_tape": SpecifierSet("<1.17"),
    "grad_buffer_reuse": SpecifierSet(">=1.13"),
}

#: Per-launch check (every recorded kernel against finite differences in
#: isolation): weight added per family when some kernel fails alone (the
#: error is inside a kernel) and when every kernel passes while the end-to-end
#: check fails (the error is in the taping pattern). See docs/taxonomy.md.
LAUNCH_FAIL_BOOST = {"kernel": 0.4, "custom": 0.4, "warp": 0.2}
LAUNCH_PASS_BOOST = {"taping": 0.3, "warp": 0.1}
#: Weight added to backward_disabled for a recorded kernel compiled without adjoint.
NO_ADJOINT_BOOST = 0.8

#: How a disagreement between finite differences and a trusted
#: reference_gradient() is explained (harness.measure.compare.reference_disagreement).
REFERENCE_EXPLANATIONS = {"kink": "nonsmooth_tie", "precision": "fd_precision",
                          "smooth_other": "surrogate_gradient", "erratic": "chaotic_horizon"}

#: Tracker warnings raised in these stages count (later gradient calls can
#: carry read flags left from an earlier iteration on releases before 1.17).
TRACKER_STAGES = ("load", "objective", "gradient_1")


def _rank(weights: dict) -> list:
    # fsum: exactly rounded, so the scores do not depend on the order the
    # weights were added in (that order followed string hashing, which
    # differs between processes)
    total = math.fsum(weights.values()) or 1.0
    ranked = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"id": k, "score": round(v / total, 4)} for k, v in ranked if v > 0]


def _zero_params(doc: dict) -> list:
    """Params whose checked elements are all exactly zero in call 1 while
    finite differences are not."""
    calls = (doc.get("fd") or {}).get("calls") or []
    if not calls or doc.get("reference"):
        return []
    per = calls[0]["elements"].get("per_param", {})
    return sorted(k for k, s in per.items() if s["signature"] == "zero")


def _fd_artefact(doc: dict, sig: str) -> str | None:
    """``kink`` or ``staircase`` when the step sweep explains every element
    that disagreed in call 1 as a finite-difference artefact, the calls agree
    with each other, there is no NaN, and the perturbed point agrees; else None."""
    fd = doc.get("fd") or {}
    sweep = fd.get("sweep") or {}
    coords = sweep.get("coords") or []
    det = doc.get("determinism", {})
    if not coords or sweep.get("n_mismatch", 0) > len(coords) or sig in ("nan_inf", "growth", "iteration"):
        return None
    if det.get("first_call_differs"):
        return None
    pert = (fd.get("perturbed") or {}).get("elements")
    if pert and pert["signature"] != "agrees":
        return None
    kinds = {c["verdict"] for c in coords}
    if not kinds <= {"kink", "staircase"}:
        return None
    return "kink" if "kink" in kinds else "staircase"


def _flat_params(doc: dict) -> list:
    """Params whose autodiff and finite differences are both exactly zero."""
    calls = (doc.get("fd") or {}).get("calls") or []
    per = calls[0]["elements"].get("per_param", {}) if calls else {}
    return sorted(k for k, s in per.items() if s["ad_zero"] and s["fd_zero"])


def _release_ok(rule: str, warp_version) -> bool:
    gate = RELEASE_GATES.get(rule)
    if gate is None or not warp_version:
        return True
    try:
        return gate.contains(Version(warp_version), prereleases=True)
    except InvalidVersion:
        return True


def interpret(doc: dict, findings: list | None = None) -> dict:
    """Turn a worker measurement document and source findings (dicts of
    :class:`harness.measure.source.Finding`) into a diagnosis (without ``cost``).

    Returns
    -------
    dict
        ``verdict``, ``classes``, ``signature``, ``evidence`` as in
        :mod:`harness.engines.base`.
    """
    evidence = []
    det = doc.get("determinism", {})
    nan = doc.get("nan_scan", {})
    tracker = doc.get("tracker", {})

    # determinism
    if det:
        if det.get("stochastic"):
            msg = f"objective() changed between two calls (relative change {det['objective_relative_change']:.3g})"
            msg += "; seed pinned through set_seed" if det.get("seed_pinned") else "; no usable set_seed"
            evidence.append(_ev("determinism", False, msg, {"objective": det.get("objective")}))
        else:
            evidence.append(_ev("determinism", True, "objective() is repeatable", {"objective": det.get("objective")}))
        gf = det.get("growth_factors")
        if gf:
            evidence.append(_ev("determinism", False,
                                "gradient() grows across calls at the same point: factors " + ", ".join(f"{f:.6g}" for f in gf),
                                {"factors": gf}))
        elif det.get("first_call_differs"):
            extra = " (later calls are exactly zero)" if det.get("later_calls_zero") else ""
            evidence.append(_ev("determinism", False, "gradient() differs between the first and second call at the same point" + extra,
                                {"norms": det.get("gradient_norms")}))
        elif "calls_identical" in det:
            evidence.append(_ev("determinism", True, "gradient() is identical across calls at the same point",
                                {"norms": det.get("gradient_norms")}))

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
        if c["signature"] == "agrees":
            evidence.append(_ev("fd" if "finite" in label else "reference", True,
                                f"{label}: agrees on {c['n']} checked (relative error {c['relative_error']:.2g})", None))
        else:
            text = f"{label}: {c['n_mismatch']} of {c['n']} disagree, relative error {c['relative_error']:.3g}, signature {c['signature']}"
            if c.get("factor") is not None:
                text += f" (factor {c['factor']:.6g})"
            evidence.append(_ev("fd" if "finite" in label else "reference", False, text,
                                {k: c.get(k) for k in ("mismatched", "factor", "zero_fraction")}))
    ref = doc.get("reference") or {}
    fd_vs_ref = ref.get("fd_vs_reference")
    if fd_vs_ref and fd_vs_ref["signature"] != "agrees":
        evidence.append(_ev("reference", False,
                            f"finite differences disagree with reference_gradient() (relative error {fd_vs_ref['relative_error']:.3g}): FD cannot judge here",
                            None))

    # tracker
    warns = [w for w in tracker.get("warnings", []) if set(w.get("stages", [])) & set(TRACKER_STAGES)]
    if tracker.get("enabled"):
        if warns:
            desc = "; ".join(
                f"{w.get('arg') or w.get('operation') or 'array'} in {w.get('kernel') or '?'} at {', '.join(w['sites']) or '?'}"
                for w in warns[:5]
            )
            evidence.append(_ev("tracker", False, f"overwrite tracker: {len(warns)} write-after-read warning(s): {desc}", warns))
        else:
            evidence.append(_ev("tracker", True, "overwrite tracker raised no warning during the first gradient() call", None))

    # step sweep
    for c in ((doc.get("fd") or {}).get("sweep") or {}).get("coords", []):
        evidence.append(_ev("sweep", c["verdict"] in ("kink", "staircase"),
                            f"step sweep at {c['param']}[{c['index']}]: autodiff {c['autodiff']:.4g}, one-sided differences "
                            f"{c['forward'][0]:.4g} (forward) / {c['backward'][0]:.4g} (backward) at the smallest step: {c['verdict']}",
                            c))

    # horizon bisection
    hz = doc.get("horizon")
    if hz:
        if hz["first_disagreement"] is None:
            evidence.append(_ev("horizon", True, f"with steps={hz['steps']} set again the directional check agrees", hz))
        else:
            evidence.append(_ev("horizon", False, f"autodiff and finite differences first part at steps={hz['first_disagreement']} "
                                f"of {hz['steps']} (bisection over the horizon)", hz))

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

    # source evidence
    findings = findings or []
    live = [f for f in findings if _release_ok(f["rule"], doc.get("warp_version"))]
    if findings:
        for f in findings:
            gated = f not in live
            evidence.append(_ev("source", False, f"{f['file']}:{f['line']}: {f['detail']}" +
                                (f" (not on Warp {doc.get('warp_version')})" if gated else ""),
                                {"rule": f["rule"], "classes": f["classes"], "counted": not gated}))
    else:
        evidence.append(_ev("source", True, "no source pattern found", None))

    # verdict and signature
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
    artefact = _fd_artefact(doc, sig)
    if artefact:
        cls = {"kink": "nonsmooth_tie", "staircase": "piecewise_constant"}[artefact]
        evidence.append(_ev("sweep", True, f"the disagreement is a finite-difference artefact at a {artefact}: "
                            "one-sided differences at smaller steps explain the autodiff value", None))
        return {"verdict": "no_bug", "classes": [{"id": cls, "score": 0.8}, {"id": "correct", "score": 0.2}],
                "signature": "agrees", "evidence": evidence}
    if sig == "agrees":
        weights = {"correct": 1.0}
        flat = _flat_params(doc)
        n_params = len(doc.get("protocol", {}).get("params", {})) or 1
        piecewise = any(f["rule"] == "piecewise_constant_op" for f in live)
        if flat and (piecewise or len(flat) == n_params):
            weights["piecewise_constant"] = 0.8 + (0.8 if piecewise else 0.0)
            evidence.append(_ev("fd", False, "gradient and finite differences are both exactly zero for " + ", ".join(flat) +
                                ": the objective is locally flat in them", {"params": flat}))
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
            if any(f["rule"] == "custom_adjoint" for f in live):
                weights["surrogate_gradient"] = weights.get("surrogate_gradient", 0.0) + 0.5
            if len(weights) == 1:
                weights["fd_precision"] = 0.9
        return {"verdict": "no_bug", "classes": _rank(weights), "signature": sig, "evidence": evidence}

    weights = {c: FLOOR for c in sorted(BUG_CLASSES) if sig in CLASSES[c].signatures}
    for c, w in PRIORS.get(sig, PRIORS["subtly_wrong"]).items():
        weights[c] = weights.get(c, 0.0) + w
    inplace = {f.get("scope") for f in live if f["rule"] == "inplace_array_op"}
    for w in warns:
        # a warning on a kernel that does `a[i] *= ...` is the in-place op, not a second kernel's write
        target = "inplace_math" if w.get("kernel") in inplace else "overwrite"
        weights[target] = weights.get(target, 0.0) + TRACKER_BOOST / len(warns)
    if det.get("stochastic") and det.get("seed_pinned"):
        weights["rng_replay"] = weights.get("rng_replay", 0.0) + SEED_BOOST
    factors = [c.get("factor") for _, c in comps if c.get("factor") is not None]
    if sig == "exact_factor" and factors and abs(factors[0] - 2.0) < 1e-6 * 2:
        weights["double_count"] = weights.get("double_count", 0.0) + FACTOR2_BOOST
    if det.get("later_calls_zero"):
        weights["stale_gradient_read"] = weights.get("stale_gradient_read", 0.0) + LATER_ZERO_BOOST
    norms = [n for n in det.get("gradient_norms", []) if isinstance(n, float)]
    if not det.get("growth") and len(norms) >= 3 and all(b > a * (1 + GROWING_NORM) for a, b in zip(norms, norms[1:])):
        # part of the gradient accumulates across calls while another part does not
        weights["missing_tape_zero"] = weights.get("missing_tape_zero", 0.0) + GROWING_NORM_BOOST
        evidence.append(_ev("determinism", False, "gradient norm grows on every call at the same point: "
                            + ", ".join(f"{n:.4g}" for n in norms), {"norms": norms}))
    if det.get("first_call_differs") and sig not in ("growth", "iteration"):
        for c, w in PRIORS["iteration"].items():
            weights[c] = weights.get(c, 0.0) + ITERATION_WEIGHT * w
    zero_params = _zero_params(doc)
    if zero_params and sig != "zero":
        for c, w in PRIORS["zero"].items():
            weights[c] = weights.get(c, 0.0) + PARAM_ZERO_WEIGHT * w
        evidence.append(_ev("fd", False, "autodiff is exactly zero for param(s) " + ", ".join(zero_params) +
                            " where finite differences are not", {"params": zero_params}))
    for rule in {f["rule"] for f in live}:
        for c in source.RULES[rule]:
            if c in weights:
                weights[c] += source.SPECIFICITY.get(rule, source.DEFAULT_SPECIFICITY)
    boost = LAUNCH_FAIL_BOOST if failing else (LAUNCH_PASS_BOOST if passing else {})
    for c in weights:
        weights[c] += boost.get(CLASSES[c].family, 0.0)
    if no_adjoint and "backward_disabled" in weights:
        weights["backward_disabled"] += NO_ADJOINT_BOOST
    return {"verdict": "bug", "classes": _rank(weights), "signature": sig, "evidence": evidence}


class ReferenceEngine(WorkerEngine):
    """The reference engine. See the module docstring.

    Parameters
    ----------
    timeout_s : float
        Wall-clock limit of one variant's measurement.
    options : dict, optional
        Overrides of the worker's probe settings
        (:data:`harness.measure.worker.DEFAULTS`).
    python : str, optional
        Interpreter that runs the measurement (a per-release environment from
        :mod:`harness.envs`); default: this one.
    """

    name = "reference"
    version = __version__

    def judge(self, doc: dict, path) -> dict:
        return interpret(doc, [f.to_dict() for f in source.scan(path)])
