"""The independent oracle (harness.oracle) and ``validate`` built on it.

Tiny programs with known answers live in tests/programs/oracle_*/. Numerics
tests run without Warp; everything that runs a Warp program is marked slow.
"""

import math
import shutil

import numpy as np
import pytest

from harness.oracle import compare_pair, measure_variant
from harness.oracle.numerics import ecnoise, gamma, initial_step, param_scale, pick_estimate

# -- numerics (no Warp) -------------------------------------------------------


def test_ecnoise_constants_and_known_noise():
    assert gamma(1) == 0.5 and math.isclose(gamma(2), 1 / 6) and math.isclose(gamma(3), 1 / 20)
    rng = np.random.default_rng(0)
    t = np.arange(9) - 4.0
    sigma = 1e-8
    estimates = []
    for _ in range(50):
        f = 3.0 + 0.2 * t * 1e-4 + 0.5 * (t * 1e-4) ** 2 + rng.normal(0.0, sigma, 9)
        est = ecnoise(f)
        assert est["method"] == "ecnoise"
        estimates.append(est["sigma"])
    # the median of 50 estimates is within 30 % of the true standard deviation
    assert 0.7 * sigma < np.median(estimates) < 1.3 * sigma
    assert ecnoise(np.full(9, 2.5)) == {"sigma": 0.0, "order": None, "sigmas": [0.0] * 6, "method": "constant"}
    assert ecnoise([1.0, math.nan] + [1.0] * 7)["sigma"] == math.inf


def test_steps_and_estimate_choice():
    eps = float(np.finfo(np.float64).eps)
    assert math.isclose(initial_step(2.0, 0.5, eps), 2.0 * eps ** (1 / 3))
    assert math.isclose(initial_step(0.0, 0.5, eps), 0.5 * eps ** (1 / 3))
    assert param_scale([0.0, 0.0]) == 1.0 and param_scale([1.0, -3.0]) == 2.0
    # h/4 and h agree within noise: the larger step is kept
    assert pick_estimate({0.25: 1.0000001, 1.0: 1.0}, noise=1e-6) == (1.0, 1.0, pytest.approx(1e-7))
    # truncation regime: the pair that agrees best wins, its smaller step reported
    est = {1 / 16: 1.0001, 0.25: 1.0016, 1.0: 1.0256, 4.0: 1.4096}
    v, h, dis = pick_estimate(est, noise=1e-9)
    assert (v, h) == (1.0001, 1 / 16) and dis == pytest.approx(0.0015)


# -- measurements of the tiny programs -------------------------------------------


@pytest.fixture(scope="module")
def measured(programs):
    names = ["oracle_correct", "oracle_double", "oracle_zero", "oracle_below_resolution", "oracle_refuses",
             "growth", "kink"]
    return {n: measure_variant(programs / n, timeout_s=120) for n in names}


@pytest.mark.slow
def test_correct_program_agrees_with_every_coordinate_resolved(measured):
    d = measured["oracle_correct"]
    assert d["verdict"] == "agrees", d
    assert (d["resolved"], d["unresolved"]) == (4, 0)
    assert d["fd"]["coordinates"] == 4 and not d["fd"]["sampled"]
    assert d["max_relative_error"] < 1e-7
    # float64 objective of magnitude ~10: noise at the ulp level
    assert 0 < d["noise"]["sigma"] < 1e-13
    assert [c["disagree"] for c in d["calls"]] == [0, 0, 0]


@pytest.mark.slow
def test_exact_factor_two(measured):
    d = measured["oracle_double"]
    assert d["verdict"] == "wrong"
    assert d["signature"]["kind"] == "factor"
    assert d["signature"]["ratio"] == pytest.approx(2.0, rel=1e-6)
    assert d["max_relative_error"] == pytest.approx(1.0, rel=1e-6)


@pytest.mark.slow
def test_zero_chain(measured):
    d = measured["oracle_zero"]
    assert d["verdict"] == "wrong"
    assert d["signature"] == {"kind": "zero", "zero_items": 3}
    assert d["max_relative_error"] == pytest.approx(1.0)


@pytest.mark.slow
def test_float32_gradient_below_resolution_is_unresolved(measured):
    d = measured["oracle_below_resolution"]
    assert d["verdict"] == "unresolved"
    assert (d["resolved"], d["unresolved"]) == (0, 4)
    # the objective (~1000 in float32) has noise of at least one ulp (6.1e-5) ...
    assert d["noise"]["sigma"] >= float(np.spacing(np.float32(1000.0)))
    assert d["objective"]["precision"] == "float32"
    # ... so each item's resolution is far above the true gradient 2e-5 * x (at most 4e-5)
    assert d["fd"]["median_resolution"] > 100 * 4e-5


@pytest.mark.slow
def test_build_error_is_refused_with_type_and_first_line(measured):
    d = measured["oracle_refuses"]
    assert d["verdict"] == "refused"
    assert d["failure"]["stage"] == "objective"
    assert "energy" in d["failure"]["first_line"]
    assert d["warp_version"]


@pytest.mark.slow
def test_growth_and_kink(measured):
    g = measured["growth"]
    assert g["verdict"] == "wrong" and g["signature"]["kind"] == "growth"
    assert g["signature"]["ratios"] == pytest.approx([2.0, 3.0], rel=1e-6)
    assert g["calls"][0]["disagree"] == 0 and g["calls"][1]["disagree"] > 0
    k = measured["kink"]
    # at x = 0 central FD gives 0.5 while autodiff picks a one-sided slope: valid
    assert k["verdict"] == "agrees" and k["fd"]["kink_items"] == 1


@pytest.mark.slow
def test_hang_is_killed_as_error(programs):
    d = measure_variant(programs / "hangs", timeout_s=4)
    assert d["verdict"] == "error" and "timed out after 4 s" in d["message"]


# -- pair checks ------------------------------------------------------------------


@pytest.mark.slow
def test_pair_factor_two_is_confirmed(programs):
    r = compare_pair(programs / "oracle_double", programs / "oracle_correct", timeout_s=120)
    assert r["confirmed"], r.get("reason")
    assert r["same_point"] and r["objective_relative_difference"] == 0.0
    assert r["ratio_median"] == pytest.approx(2.0, rel=1e-12) and r["ratio_spread"] < 1e-12
    assert r["max_relative_error"] == pytest.approx(1.0, rel=1e-6)
    assert r["right"]["verdict"] == "agrees" and r["wrong"]["verdict"] == "wrong"
    same = compare_pair(programs / "oracle_correct", programs / "oracle_correct", timeout_s=120)
    assert not same["confirmed"] and "not wrong" in same["reason"] and same["gradients_differ"] is False


@pytest.mark.slow
def test_pair_with_differing_objectives(programs):
    r = compare_pair(programs / "oracle_pair_wrong", programs / "oracle_pair_right", timeout_s=120)
    assert not r["confirmed"]
    assert "objectives differ" in r["reason"]
    assert r["objective_relative_difference"] == pytest.approx(1.0)
    assert r["ratio_median"] == pytest.approx(3.0)
    ok = compare_pair(programs / "oracle_pair_wrong", programs / "oracle_pair_right", timeout_s=120,
                      objectives_differ="the wrong one reports twice the loss")
    assert ok["confirmed"], ok.get("reason")


# -- validate on a small corpus ---------------------------------------------------

CASE = """id: {id}
title: t
summary: s
explanation: e
provenance: original
tags:
  domain: test
{extra}variants:
  buggy:
    - verdict: {verdict}
      classes: [{cls}]
  fixed:
    - verdict: no_bug
      classes: [correct]
"""


def _case(root, cid, buggy, fixed, programs, verdict="bug", cls="seed_mismatch", extra=""):
    d = root / cid
    shutil.copytree(programs / buggy, d / "buggy")
    shutil.copytree(programs / fixed, d / "fixed")
    (d / "case.yaml").write_text(CASE.format(id=cid, verdict=verdict, cls=cls, extra=extra))
    return d


@pytest.mark.slow
def test_validate_statuses(tmp_path, programs):
    from harness.case import load_corpus
    from harness.validate import counts, validate_cases

    _case(tmp_path, "factor-ok", "oracle_double", "oracle_correct", programs)
    _case(tmp_path, "factor-mislabelled", "oracle_double", "oracle_correct", programs, cls="missing_tape_zero")
    _case(tmp_path, "objectives-unexplained", "oracle_pair_wrong", "oracle_pair_right", programs,
          cls="double_count")
    _case(tmp_path, "objectives-explained", "oracle_pair_wrong", "oracle_pair_right", programs,
          cls="double_count", extra="objectives_differ: the buggy program reports twice the loss\n")
    _case(tmp_path, "below-resolution", "oracle_below_resolution", "oracle_correct", programs, verdict="no_bug",
          cls="fd_precision")
    cases, errors = load_corpus(tmp_path)
    assert not errors
    out = {cc.case: {v.variant: v for v in cc.variants} for cc in validate_cases(cases, jobs=2, timeout_s=120)}
    b = out["factor-ok"]["buggy"]
    assert b.status == "passed", b.message
    assert b.pair["confirmed"] and b.pair["ratio_median"] == pytest.approx(2.0)
    assert b.oracle["verdict"] == "wrong" and b.signature == "exact_factor"
    assert out["factor-ok"]["fixed"].status == "passed"
    m = out["factor-mislabelled"]["buggy"]
    assert m.status == "failed" and "exact_factor" in m.message
    u = out["objectives-unexplained"]["buggy"]
    assert u.status == "failed" and "objectives differ" in u.message
    e = out["objectives-explained"]["buggy"]
    assert e.status == "passed", e.message
    assert e.pair["ratio_median"] == pytest.approx(3.0)
    r = out["below-resolution"]["buggy"]
    assert r.status == "unresolved" and not r.ok and r.oracle["resolved"] == 0
    n = counts([v for per in out.values() for v in per.values()])
    assert n == {"passed": 7, "failed": 2, "unresolved": 1, "skipped": 0}
