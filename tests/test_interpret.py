"""The reference engine's interpretation, on synthetic measurement documents
(no Warp): each rule of the ranking changes the answer it should."""

from defects4warp.engines.reference import interpret


def sig(signature, n=4, factor=None, rel=0.5, per_param=None):
    return {"signature": signature, "n": n, "n_mismatch": 0 if signature == "agrees" else n,
            "relative_error": 0.0 if signature == "agrees" else rel, "factor": factor, "zero_fraction": 0.0,
            "mismatched": [], "per_param": per_param or {}}


def doc(call_sig="agrees", calls=3, warp="1.19.0", **det):
    d = {"warp_version": warp, "protocol": {"params": {"x": {}}, "optional": {}},
         "determinism": {"objective": [1.0, 1.0], "objective_relative_change": 0.0, "stochastic": False,
                         "seed_pinned": False, "gradient_norms": [1.0] * calls, "calls_identical": True,
                         "first_call_differs": False, "later_calls_zero": False, "growth_factors": None,
                         "growth": False},
         "fd": {"calls": [{"elements": sig(call_sig), "directions": sig(call_sig, n=2)} for _ in range(calls)],
                "fd_all_zero": False},
         "nan_scan": {"objective_finite": True, "gradient_nonfinite": {}},
         "tracker": {"enabled": True, "warnings": []}}
    d["determinism"].update(det)
    return d


def finding(rule, classes, scope="k"):
    return {"rule": rule, "file": "problem.py", "line": 3, "detail": rule, "classes": list(classes), "scope": scope}


def top(diag):
    return diag["classes"][0]["id"]


def test_agreement_is_no_bug_correct():
    d = interpret(doc())
    assert d["verdict"] == "no_bug" and top(d) == "correct"


def test_growth_is_missing_tape_zero():
    d = interpret(doc("agrees", growth=True, growth_factors=[1, 2, 3], first_call_differs=True))
    assert d["verdict"] == "bug" and d["signature"] == "growth" and top(d) == "missing_tape_zero"


def test_unpinnable_noise_is_inconclusive():
    d = interpret(doc(stochastic=True, seed_pinned=False, objective_relative_change=0.1))
    assert d["verdict"] == "inconclusive" and top(d) == "stochastic_forward"


def test_nonfinite_objective_is_inconclusive():
    x = doc("subtly_wrong")
    x["nan_scan"]["objective_finite"] = False
    assert interpret(x)["verdict"] == "inconclusive"


def test_source_finding_moves_the_class_not_the_verdict():
    wrong = doc("subtly_wrong")
    assert top(interpret(wrong)) == "overwrite"
    d = interpret(wrong, [finding("func_grad_assign", ["custom_adjoint_error"])])
    assert top(d) == "custom_adjoint_error"
    ok = interpret(doc(), [finding("func_grad_assign", ["custom_adjoint_error"])])
    assert ok["verdict"] == "no_bug" and top(ok) == "correct"
    assert any(e["probe"] == "source" and not e["clean"] for e in ok["evidence"])


def test_release_gate_on_copy_findings():
    f = [finding("copy_on_tape", ["copy_adjoint"], scope="rollout")]
    assert top(interpret(doc("subtly_wrong", warp="1.16.0"), f)) == "copy_adjoint"
    d = interpret(doc("subtly_wrong", warp="1.19.0"), f)
    assert top(d) != "copy_adjoint"
    assert any("not on Warp 1.19.0" in e["finding"] for e in d["evidence"])


def test_tracker_warning_on_an_inplace_kernel_counts_for_inplace_math():
    x = doc("subtly_wrong")
    x["tracker"]["warnings"] = [{"kind": "launch", "arg": "v", "kernel": "drag", "sites": ["p.py:3"], "stages": ["gradient_1"]}]
    assert top(interpret(x)) == "overwrite"
    assert top(interpret(x, [finding("inplace_array_op", ["inplace_math"], scope="drag")])) == "inplace_math"


def test_per_launch_failure_points_inside_kernels():
    x = doc("subtly_wrong")
    x["launches"] = {"kernels": [{"kernel": "k", "ok": False, "skipped": None,
                                  "worst": {"input": "a", "output": "b", "signature": "subtly_wrong", "relative_error": 1.0}}]}
    d = interpret(x)
    assert top(d) != "overwrite"
    assert any("disagrees with finite differences in isolation" in e["finding"] for e in d["evidence"])


def test_zero_param_adds_cut_chain_classes():
    x = doc("subtly_wrong")
    x["fd"]["calls"][0]["elements"]["per_param"] = {
        "k": {"signature": "zero", "ad_zero": True, "fd_zero": False},
        "s": {"signature": "subtly_wrong", "ad_zero": False, "fd_zero": False}}
    assert top(interpret(x)) == "missing_requires_grad"


def test_growing_norms_without_exact_growth_point_at_accumulation():
    x = doc("agrees", first_call_differs=True, calls_identical=False, gradient_norms=[1.0, 1.9, 2.8])
    for c in x["fd"]["calls"][1:]:
        c["elements"] = sig("subtly_wrong")
    assert top(interpret(x)) == "missing_tape_zero"
    y = doc("agrees", first_call_differs=True, calls_identical=False, gradient_norms=[1.0, 0.0, 0.0], later_calls_zero=True)
    assert top(interpret(y)) == "stale_gradient_read"


def test_exact_factor_size_names_the_seed_only_when_it_can_be_a_reduction():
    from defects4warp.engines.reference import factor_weights

    w, note = factor_weights(4096.0, [4096])
    assert w["seed_mismatch"] > 1.0 and "4096 elements" in note
    w, _ = factor_weights(1 / 64.0, [])
    assert "seed_mismatch" in w
    w, _ = factor_weights(2.0, [])
    assert "double_count" in w and "seed_mismatch" not in w
    assert factor_weights(2.81884e7, [])[0] == {}  # a blown-up gradient, not a mean over 28 million elements
    assert factor_weights(1.37, [])[0] == {}


def test_an_unswept_inexact_disagreement_is_not_counted():
    """The worker recorded that it planned the step sweep but the document has none (time ran out
    before it): a subtly-wrong disagreement nobody swept is inconclusive, an exact factor still a bug."""
    planned = {"probes": ["determinism", "noise", "fd", "sweep", "nan_scan"], "knobs": {}}
    subtle = doc("subtly_wrong")
    subtle["options"] = planned
    d = interpret(subtle)
    assert d["verdict"] == "inconclusive"
    assert any(e["probe"] == "sweep" and "did not run" in e["finding"] for e in d["evidence"])
    exact = doc("factor", factor=2.0)
    exact["options"] = planned
    assert interpret(exact)["verdict"] == "bug"
    # a worker that never planned a sweep (an engine configured without it) counts the disagreement
    unplanned = doc("subtly_wrong")
    unplanned["options"] = {"probes": ["determinism", "fd"], "knobs": {}}
    assert interpret(unplanned)["verdict"] == "bug"


def _swept(verdict, ad=-7.32e-05, central=(-1.103e-04, -8.506e-05, -7.315e-05)):
    return {"kind": "dir", "point": "perturbed", "autodiff": ad, "steps": [0.1, 1.0, 10.0],
            "forward": [-1.121e-04, -9.0e-05], "backward": [-1.085e-04, -8.0e-05], "central": list(central),
            "verdict": verdict}


def test_a_disagreement_the_sweep_reads_as_round_off_is_fd_precision():
    """Every disagreeing item swept reads as round-off (precision, as on Warp's navier-stokes example):
    no bug, class fd_precision, and the sentence says why; one confirmed item keeps it a bug."""
    d = doc("subtly_wrong")
    d["sweep"] = {"items": [_swept("precision"), _swept("precision")], "unswept": 0}
    got = interpret(d)
    assert got["verdict"] == "no_bug" and top(got) == "fd_precision"
    assert any("agree at the largest step" in e["finding"] for e in got["evidence"])
    d["sweep"]["items"].append(_swept("confirmed"))
    assert interpret(d)["verdict"] == "bug"


def _flat_swept(doc_, *items):
    doc_["sweep"] = {"items": [dict({"kind": "coord", "param": "x", "index": i, "point": "given",
                                     "steps": [0.1, 1.0, 10.0], "verdict": "confirmed"}, **it)
                               for i, it in enumerate(items)], "unswept": 0}
    return doc_


FLAT = {"autodiff": 0.8, "forward": [0.0, 0.0], "backward": [0.0, 0.0], "central": [0.0, 0.0, 0.0]}
SMOOTH = {"autodiff": 0.8, "forward": [1.42, 1.43], "backward": [1.42, 1.41], "central": [1.42, 1.42, 1.42]}
ADJ = [finding("custom_adjoint", ["custom_adjoint_error"], scope="adj_q")]


def test_a_custom_adjoint_over_a_bit_constant_forward_is_a_surrogate():
    d = interpret(_flat_swept(doc("subtly_wrong"), FLAT, FLAT), ADJ)
    assert d["verdict"] == "no_bug" and top(d) == "surrogate_gradient"
    assert any(c["id"] == "surrogate_on_flat_forward" for c in d["cited"])


def test_the_flat_reading_needs_every_confirmed_item_flat_and_a_hand_written_adjoint():
    # one smooth confirmed disagreement: the custom adjoint is wrong where the forward can judge it
    mixed = interpret(_flat_swept(doc("subtly_wrong"), FLAT, SMOOTH), ADJ)
    assert mixed["verdict"] == "bug" and top(mixed) == "custom_adjoint_error"
    # a gradient over a constant forward without a hand-written adjoint stays a bug
    assert interpret(_flat_swept(doc("subtly_wrong"), FLAT, FLAT))["verdict"] == "bug"
    # autodiff exactly zero over a flat forward is no disagreement of this kind
    zero = dict(FLAT, autodiff=0.0)
    assert interpret(_flat_swept(doc("subtly_wrong"), zero), ADJ)["verdict"] == "bug"


def test_flat_items_the_sweep_could_not_settle_are_a_surrogate_too():
    # a jump at the base step leaves the item unclear; bit-constant at the smallest step all the same
    jump = dict(FLAT, verdict="unclear", backward=[0.0, 325.6], central=[0.0, 162.8, 16.3])
    d = interpret(_flat_swept(doc("subtly_wrong"), jump, jump), ADJ)
    assert d["verdict"] == "no_bug" and top(d) == "surrogate_gradient"
    assert interpret(_flat_swept(doc("subtly_wrong"), jump, jump))["verdict"] == "inconclusive"


def test_a_staircase_on_part_of_the_path_is_piecewise_constant_only_with_its_source():
    """An agreeing gradient, a launch flat where measured but not constant over a wide step, and a counted
    floor/round in the source: piecewise_constant first; either alone leaves it correct."""
    stair = doc()
    stair["launches"] = {"kernels": [{"kernel": "quantise", "launches": 1, "ok": True, "skipped": None,
                                      "staircase": [{"input": "u", "output": "y", "wide_max": 1.0}]}],
                         "recorded": 1}
    floor = [finding("piecewise_constant_op", ["piecewise_constant"], scope="quantise")]
    d = interpret(stair, floor)
    assert d["verdict"] == "no_bug" and top(d) == "piecewise_constant"
    assert top(interpret(stair)) == "correct"
    assert top(interpret(doc(), floor)) == "correct"
