"""A tie (kink) needs one-sided differences whose gap does not shrink with the step; a gap in
proportion to the step is curvature (:func:`defects4warp.measure.compare.curvature_gap`), as in
an objective over a long chaotic horizon whose second derivative is huge. Synthetic sweeps with
closed-form one-sided differences (steps smallest first, 10x apart)."""

import numpy as np
import pytest

from defects4warp.measure.compare import curvature_gap, reference_disagreement

STEPS = 1e-6 * 10.0 ** np.arange(5)


def _sides(f, x):
    fwd = [(f(x + h) - f(x)) / h for h in STEPS]
    bwd = [(f(x) - f(x - h)) / h for h in STEPS]
    cen = [(f(x + h) - f(x - h)) / (2 * h) for h in STEPS]
    return fwd, bwd, cen


def test_a_kink_keeps_its_gap():
    fwd, bwd, cen = _sides(lambda x: 3.0 * max(x, 0.0) - 0.5 * min(x, 0.0), 0.0)  # slopes 3 and -0.5
    assert not curvature_gap(fwd, bwd)
    assert reference_disagreement(3.0, fwd, bwd, cen, 1e-4) == "kink"
    assert reference_disagreement(-0.5, fwd, bwd, cen, 1e-4) == "kink"


def test_a_gap_in_proportion_to_the_step_is_curvature():
    # f = a x^2 at x = 1e-4: derivative 2e3, one-sided differences 2e3 +- a h (gap 20 at the
    # smallest step, 200 at the next: far above rtol, in proportion to the step)
    a, x0 = 1e7, 1e-4
    fwd, bwd, cen = _sides(lambda x: a * x * x, x0)
    assert curvature_gap(fwd, bwd)
    assert abs(fwd[0] - bwd[0]) == pytest.approx(2 * a * STEPS[0], rel=1e-6)
    # central differences that wander across steps (chaotic) are erratic, not a tie
    wandering = [cen[0], 1.02 * cen[0], -0.2 * cen[0], 0.2 * cen[0], 6e-4 * cen[0]]
    assert reference_disagreement(2 * a * x0, fwd, bwd, wandering, 1e-4) == "erratic"


@pytest.mark.parametrize("fwd,bwd", [([1.0], [0.0]), ([np.nan, 1.0], [0.0, 0.0])])
def test_curvature_gap_needs_two_finite_steps(fwd, bwd):
    assert not curvature_gap(fwd, bwd)
