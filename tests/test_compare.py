"""Unit tests of the comparison rules on arrays with known answers."""

import numpy as np
import pytest

from defects4warp.measure import compare


def test_agrees_within_rtol():
    truth = np.array([1.0, -2.0, 3.0])
    s = compare.signature(truth * (1 + 1e-6), truth, rtol=1e-4)
    assert s["signature"] == "agrees"
    assert s["n_mismatch"] == 0
    assert s["relative_error"] == pytest.approx(1e-6, rel=1e-3)


def test_exact_factor_reports_the_factor():
    truth = np.array([1.0, -2.0, 3.0, 0.5])
    s = compare.signature(2.0 * truth, truth, rtol=1e-4)
    assert s["signature"] == "exact_factor"
    assert s["factor"] == pytest.approx(2.0)
    assert s["relative_error"] == pytest.approx(1.0)


def test_zero_when_every_mismatch_is_exactly_zero():
    truth = np.array([1.0, -2.0, 3.0])
    ad = np.array([0.0, -2.0, 0.0])
    s = compare.signature(ad, truth, rtol=1e-4)
    assert s["signature"] == "zero"
    assert s["n_mismatch"] == 2
    assert s["zero_fraction"] == 1.0


def test_nan_inf_takes_precedence():
    truth = np.array([1.0, 2.0])
    s = compare.signature(np.array([np.nan, 0.0]), truth, rtol=1e-4)
    assert s["signature"] == "nan_inf"
    assert s["relative_error"] == float("inf")


def test_sparse_error_is_not_averaged_away():
    truth = np.arange(1.0, 21.0)
    ad = truth.copy()
    ad[7] += 0.5  # 2.5 % of the norm, one element of twenty
    s = compare.signature(ad, truth, rtol=1e-4)
    assert s["signature"] == "sparse"
    assert s["n_mismatch"] == 1
    assert s["relative_error"] < 0.02


def test_subtly_wrong_without_pattern():
    truth = np.array([1.0, 2.0, 3.0])
    ad = np.array([1.3, 1.5, 3.9])
    assert compare.signature(ad, truth, rtol=1e-4)["signature"] == "subtly_wrong"


def test_single_ratio_is_not_a_factor():
    assert compare.exact_factor(np.array([3.0]), np.array([1.0]), atol=0.0) is None


def test_growth_linear_and_triangular():
    g = np.array([1.0, -3.0, 0.25])
    assert compare.growth_factors([g, 2 * g, 3 * g]) == pytest.approx([1, 2, 3])
    assert compare.growth_factors([g, 3 * g, 6 * g]) == pytest.approx([1, 3, 6])
    assert compare.growth_factors([g, g, g]) is None
    assert compare.growth_factors([g, 2 * g, 2.5 * g + 0.1]) is None
    assert compare.growth_factors([0 * g, 0 * g]) is None


def test_calls_identical_treats_matching_nans_as_equal():
    a = np.array([1.0, np.nan])
    assert compare.calls_identical(a, a.copy())
    assert not compare.calls_identical(a, np.array([1.0, 2.0]))
    assert not compare.calls_identical(np.array([1.0, 2.0]), np.array([1.0, 2.1]))


def test_mismatch_uses_atol_relative_to_largest_truth():
    truth = np.array([1000.0, 1e-9])
    ad = np.array([1000.0, 0.0])  # tiny element off by its whole value: below atol
    assert not compare.mismatch(ad, truth, rtol=1e-4).any()


def test_rtol_for_loosest_dtype():
    assert compare.rtol_for(["float64"]) == 1e-4
    assert compare.rtol_for(["float64", "float32"]) == 1e-2


def test_combine_precedence():
    assert compare.combine(["agrees", "sparse", "zero"]) == "zero"
    assert compare.combine(["agrees"]) == "agrees"
    assert compare.combine([]) == "agrees"


def test_one_sided_rules():
    # kink: sides 1 and 0, stable across steps; autodiff picks one side
    assert compare.one_sided(0.0, [1.0, 1.0], [0.0, 0.0], 1e-4) == "kink"
    assert compare.one_sided(0.5, [1.0, 1.0], [0.0, 0.0], 1e-4) == "kink"
    # staircase: flat on both sides, or flat on one side and a jump growing like 1/h on the other
    assert compare.one_sided(0.0, [0.0, 0.0], [0.0, 0.0], 1e-4) == "staircase"
    assert compare.one_sided(0.0, [0.0, 0.0], [1e6, 1e5], 1e-4) == "staircase"
    # smooth: both sides agree, the disagreement is real
    assert compare.one_sided(0.0, [2.0, 2.0], [2.0, 2.0], 1e-4) == "smooth"
    # autodiff outside the one-sided range
    assert compare.one_sided(5.0, [1.0, 1.0], [0.0, 0.0], 1e-4) == "unclear"
    assert compare.one_sided(float("nan"), [1.0, 1.0], [0.0, 0.0], 1e-4) == "unclear"


def test_reference_disagreement_explanations():
    steps5 = lambda v: [v] * 5  # noqa: E731
    # float32 cancellation: small steps give 0, the base step and larger approach the reference
    assert compare.reference_disagreement(1.72, steps5(1.7), steps5(1.7), [0, 0, 2.05, 1.707, 1.72], 1e-2) == "precision"
    # smooth function, the reference is deliberately another quantity (a surrogate)
    assert compare.reference_disagreement(-0.11, steps5(0.0), steps5(0.0), [0, 0, 0, 0, 0], 1e-4) == "smooth_other"
    # chaotic: differences wander over orders of magnitude, none near the reference
    assert compare.reference_disagreement(3e10, steps5(1.0), steps5(2.0), [3.4e6, 5.3e4, 6.7e3, 4.7e3, -225], 1e-4) == "erratic"
    # tie: one-sided differences 2.17 and -2.27, the reference picks one side
    assert compare.reference_disagreement(2.17, steps5(2.17), steps5(-2.27), steps5(-0.05), 1e-4) == "kink"


def _sweep(ad, fwd, bwd, cen, sigma):
    """sweep_verdict with the noise of probes/sweep.py: steps (0.1, 1) one-sided, (0.1, 1, 10) central."""
    u1 = [2 ** 0.5 * sigma / t for t in (0.1, 1.0)]
    uc = [sigma / (2 ** 0.5 * t) for t in (0.1, 1.0, 10.0)]
    return compare.sweep_verdict(ad, fwd, bwd, cen, u1, uc, 1e-2)


def test_sweep_round_off_shrinking_with_the_step_is_precision():
    # measured on warp/examples/optim/example_navier_stokes_perturbation.py (Warp 1.19.0, a correct
    # program): the central differences approach autodiff as the step GROWS and the largest agrees
    ad = -7.32e-05
    fwd, bwd = [-1.121e-04, -9.0e-05], [-1.085e-04, -8.0e-05]
    assert _sweep(ad, fwd, bwd, [-1.103e-04, -8.506e-05, -7.315e-05], 1.09e-06) == "precision"


def test_sweep_consistent_disagreement_is_still_confirmed():
    # a wrong adjoint (half the derivative): every step agrees on -1.1e-4, autodiff says -5.5e-5
    fwd, bwd = [-1.101e-04, -1.10e-04], [-1.099e-04, -1.10e-04]
    assert _sweep(-5.5e-05, fwd, bwd, [-1.10e-04, -1.10e-04, -1.101e-04], 1e-9) == "confirmed"
    # curvature moving the large step's secant onto a wrong autodiff: the differences barely move
    # between the small and base steps (h^2), so it is no round-off and the disagreement stands
    assert _sweep(-5.5e-05, fwd, bwd, [-1.10e-04, -1.0995e-04, -5.5e-05], 1e-9) == "confirmed"
    # and without the h^2 test it would have read as precision
    u1 = [2 ** 0.5 * 1e-9 / t for t in (0.1, 1.0)]
    uc = [1e-9 / (2 ** 0.5 * t) for t in (0.1, 1.0, 10.0)]
    assert compare.sweep_verdict(-5.5e-05, fwd, bwd, [-1.10e-04, -1.0995e-04, -5.5e-05], u1, uc, 1e-2,
                                 truncation_ratio=0.0) == "precision"


def test_sweep_truncation_with_a_little_round_off_is_not_precision():
    """A reviewer's counter-example (float32, rtol 1e-2): true derivative 1.0, autodiff 1.025 (2.5 %
    wrong), the large step 1.8 % high by truncation (an exp(6x)-like objective) and a little round-off
    at the smallest step. The small steps move 0.1 times what the large one does: truncation, so the
    disagreement stands (with truncation_ratio=0.1 it read as precision)."""
    fwd, bwd = [0.9985, 1.0001], [0.9981, 1.0003]
    cen = [0.9983, 1.0002, 1.018]
    assert _sweep(1.025, fwd, bwd, cen, 2e-5) == "confirmed"
    u1 = [2 ** 0.5 * 2e-5 / t for t in (0.1, 1.0)]
    uc = [2e-5 / (2 ** 0.5 * t) for t in (0.1, 1.0, 10.0)]
    assert compare.sweep_verdict(1.025, fwd, bwd, cen, u1, uc, 1e-2, truncation_ratio=0.1) == "precision"
