"""Simpler engines a user might reach for instead of the reference engine.

Each uses one source of evidence, so an ablation table (docs/engines.md)
shows what each probe contributes:

``fd-only``       end-to-end central finite differences (the worker without
                  tracker or per-launch check): the verdict from agreement,
                  the class from the signature table alone
                  (:func:`defects4warp.engines.reference.priors` of the engine's table, top entry)
``tracker-only``  Warp's overwrite tracker during one gradient() call:
                  ``bug``/``overwrite`` when it warns, else ``no_bug``
``static-only``   the source findings alone (:mod:`defects4warp.rules`),
                  nothing run: ``bug`` when the summed specificity of the
                  findings for one class reaches :data:`STATIC_THRESHOLD`
"""

from __future__ import annotations

import time

from .. import __version__, rules
from ..measure.judge import signature_of
from .assess.tracker import TRACKER_STAGES
from ..taxonomy import BUG_CLASSES
from .base import WorkerEngine
from .base import ev as _ev
from .reference import priors

#: Summed specificity of one class's findings at which static-only says bug
#: (one specific finding, e.g. a func_grad that assigns, is 0.5).
STATIC_THRESHOLD = 0.5


class FdOnlyEngine(WorkerEngine):
    """End-to-end finite differences only; class from the signature table."""

    name = "fd-only"
    version = __version__
    options = {"probes": ["determinism", "fd", "nan_scan"]}

    def judge(self, doc: dict, path=None) -> dict:
        det = doc.get("determinism", {})
        if det.get("stochastic") and not det.get("seed_pinned"):
            return {"verdict": "inconclusive", "classes": [], "signature": None,
                    "evidence": [_ev("determinism", False, "objective() is not repeatable", None)]}
        sig = signature_of(doc)
        if sig == "agrees":
            return {"verdict": "no_bug", "classes": [{"id": "correct", "score": 1.0}], "signature": sig,
                    "evidence": [_ev("fd", True, "autodiff agrees with finite differences", None)]}
        prior = priors()
        table = prior.get(sig, prior["subtly_wrong"])
        total = sum(table.values())
        ranked = sorted(table.items(), key=lambda kv: (-kv[1], kv[0]))
        return {"verdict": "bug", "classes": [{"id": k, "score": round(v / total, 4)} for k, v in ranked],
                "signature": sig, "evidence": [_ev("fd", False, f"autodiff disagrees with finite differences ({sig})", None)]}


class TrackerOnlyEngine(WorkerEngine):
    """Warp's overwrite tracker during one gradient() call, nothing else."""

    name = "tracker-only"
    version = __version__
    options = {"probes": ["determinism", "tracker"], "knobs": {"determinism": {"calls": 1}}}

    def judge(self, doc: dict, path=None) -> dict:
        warns = [w for w in (doc.get("tracker") or {}).get("warnings", [])
                 if set(w.get("stages", [])) & set(TRACKER_STAGES)]
        if warns:
            return {"verdict": "bug", "classes": [{"id": "overwrite", "score": 1.0}], "signature": None,
                    "evidence": [_ev("tracker", False, f"{len(warns)} write-after-read warning(s)", warns)]}
        return {"verdict": "no_bug", "classes": [{"id": "correct", "score": 1.0}], "signature": None,
                "evidence": [_ev("tracker", True, "no warning", None)]}


class StaticOnlyEngine:
    """Source findings only; the program is never run."""

    name = "static-only"
    version = __version__

    def __init__(self, **_):
        pass

    def diagnose(self, path, device: str = "cpu", scale: str = "small", script=None) -> dict:
        t0 = time.perf_counter()
        findings = rules.scan(path)
        classes, specificity = rules.classes_of(), rules.specificities()
        weights = {}
        for rule in {f.rule for f in findings}:
            for c in classes[rule]:
                weights[c] = weights.get(c, 0.0) + specificity.get(rule, rules.DEFAULT_SPECIFICITY)
        evidence = [_ev("source", False, f"{f.file}:{f.line}: {f.detail}", f.to_dict()) for f in findings]
        cost = {"wall_s": time.perf_counter() - t0, "objective_evals": 0, "gradient_evals": 0, "device": device}
        evidence = evidence or [_ev("source", True, "no source pattern found", None)]
        bug = {c: w for c, w in weights.items() if c in BUG_CLASSES}
        if bug and max(bug.values()) >= STATIC_THRESHOLD:
            total = sum(bug.values())
            ranked = sorted(bug.items(), key=lambda kv: (-kv[1], kv[0]))
            return {"verdict": "bug", "classes": [{"id": k, "score": round(v / total, 4)} for k, v in ranked],
                    "signature": None, "evidence": evidence, "cost": cost}
        benign = {c: w for c, w in weights.items() if c not in BUG_CLASSES and w >= STATIC_THRESHOLD}
        top = max(benign, key=benign.get) if benign else "correct"
        return {"verdict": "no_bug", "classes": [{"id": top, "score": 1.0}], "signature": None,
                "evidence": evidence, "cost": cost}
