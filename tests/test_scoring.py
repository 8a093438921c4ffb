"""Scoring on synthetic results with hand-computed metrics."""

import pytest

from defects4warp.run.scoring import judge, summarize


def rec(case, variant, exp_verdict, exp_classes, verdict, top, wall=1.0, evals=10):
    expected = {"verdict": exp_verdict, "classes": exp_classes}
    diag = {"verdict": verdict, "classes": [{"id": top, "score": 1.0}] if top else [],
            "cost": {"wall_s": wall, "objective_evals": evals}}
    return {"case": case, "variant": variant, "scale": "small", "expected": expected,
            "diagnosis": diag, "correct": judge(expected, diag)}


def test_judge():
    assert judge(None, {"verdict": "bug"}) is None
    assert judge({"verdict": "bug", "classes": ["overwrite"]},
                 {"verdict": "bug", "classes": [{"id": "overwrite", "score": 1}]}) == {"verdict": True, "class": True}
    assert judge({"verdict": "bug", "classes": ["overwrite"]},
                 {"verdict": "bug", "classes": [{"id": "dynamic_loop", "score": 1}]}) == {"verdict": True, "class": False}
    assert judge({"verdict": "no_bug", "classes": ["correct"]},
                 {"verdict": "bug", "classes": [{"id": "correct", "score": 1}]}) == {"verdict": False, "class": False}


def test_summary_metrics():
    results = [
        rec("a", "buggy", "bug", ["overwrite"], "bug", "overwrite", wall=1, evals=10),
        rec("a", "fixed", "no_bug", ["correct"], "no_bug", "correct", wall=2, evals=20),
        rec("b", "buggy", "bug", ["nonsmooth_nan"], "bug", "where_nan", wall=3, evals=30),
        rec("b", "fixed", "no_bug", ["correct"], "bug", "overwrite", wall=4, evals=40),
        rec("c", "buggy", "bug", ["growth_is_not_a_class"], "error", None, wall=5, evals=None),
    ]
    results[-1]["expected"]["classes"] = ["missing_tape_zero"]
    results[-1]["correct"] = judge(results[-1]["expected"], results[-1]["diagnosis"])
    s = summarize(results)
    assert s["cases"] == 3 and s["variants"] == 5 and s["scored"] == 5
    assert s["verdict_accuracy"] == pytest.approx(3 / 5)
    assert s["class_accuracy"] == pytest.approx(2 / 5)
    assert s["detection_rate"] == pytest.approx(2 / 3)
    assert s["false_positive_rate"] == pytest.approx(1 / 2)
    assert s["errors"] == 1
    assert s["per_class"]["overwrite"] == {"support": 1, "recall": 1.0, "precision": 0.5}
    assert s["per_class"]["nonsmooth_nan"]["recall"] == 0.0
    assert s["per_class"]["where_nan"] == {"support": 0, "recall": None, "precision": 0.0}
    assert s["confusion"]["correct -> overwrite"] == 1
    assert s["median_wall_s_per_run"] == 3
    assert s["median_objective_evals"] == 25


def test_empty_denominators_are_none():
    s = summarize([rec("a", "fixed", "no_bug", ["correct"], "no_bug", "correct")])
    assert s["detection_rate"] is None
    assert s["false_positive_rate"] == 0.0


def test_groups_by_domain_and_family():
    from defects4warp.run.scoring import summarize_groups

    results = [
        rec("a", "buggy", "bug", ["overwrite"], "bug", "overwrite"),
        rec("a", "fixed", "no_bug", ["correct"], "no_bug", "correct"),
        rec("b", "buggy", "bug", ["dynamic_loop"], "no_bug", "correct"),
    ]
    for r, dom in zip(results, ["cloth", "cloth", "fluid"]):
        r["domain"] = dom
    by_domain = summarize_groups(results, "domain")
    assert list(by_domain) == ["cloth", "fluid"]
    assert by_domain["cloth"]["class_accuracy"] == 1.0 and by_domain["fluid"]["detection_rate"] == 0.0
    by_family = summarize_groups(results, "family")
    assert by_family["kernel"]["scored"] == 1 and by_family["taping"]["scored"] == 1


def test_refusals_are_scored_apart_from_detection():
    results = [
        rec("r", "buggy", "refused", ["inplace_math"], "refused", "inplace_math"),
        rec("s", "buggy", "refused", ["inplace_math"], "bug", "overwrite"),
        rec("t", "buggy", "bug", ["overwrite"], "bug", "overwrite"),
        rec("t", "fixed", "no_bug", ["correct"], "refused", "inplace_math"),
    ]
    assert results[0]["correct"] == {"verdict": True, "class": True}
    assert results[1]["correct"] == {"verdict": False, "class": False}
    s = summarize(results)
    assert s["refused_runs"] == 2 and s["refusal_accuracy"] == pytest.approx(0.5)
    assert s["detection_rate"] == pytest.approx(1.0)  # the refused runs are not bug runs
    assert s["false_positive_rate"] == pytest.approx(0.0)  # a refusal is not a bug verdict


def test_metrics_per_provenance_tier():
    from defects4warp.corpus.case import provenance_tier
    from defects4warp.run.scoring import summarize_tiers

    assert [provenance_tier(p) for p in ("original", "mined", "https://github.com/NVIDIA/warp/issues/1")] == [
        "original", "mined", "report"]

    def tiered(tier, *a):
        return dict(rec(*a), tier=tier)

    results = [
        tiered("mined", "m", "buggy", "bug", ["warp_adjoint_bug"], "bug", "warp_adjoint_bug"),
        tiered("mined", "m2", "buggy", "bug", ["copy_adjoint"], "no_bug", "correct"),
        tiered("mined", "m", "fixed", "no_bug", ["correct"], "no_bug", "correct"),
        tiered("original", "o", "buggy", "bug", ["overwrite"], "bug", "inplace_math"),
        tiered("original", "o", "fixed", "no_bug", ["correct"], "bug", "overwrite"),
        dict(rec("old", "buggy", "bug", ["overwrite"], "bug", "overwrite")),  # a record without a tier
    ]
    t = summarize_tiers(results)
    assert list(t) == ["original", "mined"]  # the tiers present, in TIERS order; no 'report'
    assert t["mined"] == {"runs": 3, "scored": 3, "bug_runs": 2, "no_bug_runs": 1, "detection_rate": 0.5,
                          "false_positive_rate": 0.0, "class_accuracy": pytest.approx(2 / 3),
                          "verdict_accuracy": pytest.approx(2 / 3)}
    assert t["original"] == {"runs": 2, "scored": 2, "bug_runs": 1, "no_bug_runs": 1, "detection_rate": 1.0,
                             "false_positive_rate": 1.0, "class_accuracy": 0.0, "verdict_accuracy": 0.5}
    assert summarize_tiers(results[:3]) is None  # one tier: the summary's own numbers
