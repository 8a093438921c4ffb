"""An exact integer factor is read as the size of a reduction (``factor_reduction_size``, evidence
for ``seed_mismatch``) only when the traced call has that many elements somewhere: an array, one
of its axes, or a launch grid (:func:`defects4warp.probes.trace.element_counts`). A factor 20 from
a hand-written adjoint multiplying by a scalar argument 20 is not a mean over 20 elements."""

import numpy as np
import pytest

from defects4warp.engines.assess.fd import factor_evidence
from defects4warp.probes.trace import element_counts


def _ids(ev):
    return [e.id for e in ev]


def test_element_counts_of_arrays_and_launches():
    trace = {"arrays": {"A0": {"shape": [3, 4]}, "A1": {"shape": [1]}, "A2": {"shape": [7]}}}
    events = [{"kind": "launch", "dim": [5, 2]}, {"kind": "host"}, {"kind": "launch", "dim": ["?"]}]
    assert element_counts(trace, events) == [2, 3, 4, 5, 7, 10, 12]


@pytest.mark.parametrize("factor,extents,want", [
    (20.0, [3, 4, 12], []),                          # no 20 elements anywhere: not a reduction's size
    (12.0, [3, 4, 12], ["factor_reduction_size"]),   # a mean over the 12 elements of an array
    (1.0 / 12.0, [3, 4, 12], ["factor_reduction_size"]),
    (20.0, None, ["factor_reduction_size"]),         # no trace: every integer, as before
])
def test_factor_reduction_size_needs_that_many_elements(factor, extents, want):
    ev, note = factor_evidence(factor, [], extents=extents)
    assert _ids(ev) == want
    assert (note is not None) == bool(want)


def test_element_counts_of_a_traced_call():
    import warp as wp

    from defects4warp.measure import trace as tm

    wp.config.quiet = True

    @wp.kernel
    def sq(x: wp.array2d(dtype=float), out: wp.array(dtype=float)):
        i, j = wp.tid()
        wp.atomic_add(out, 0, x[i, j] * x[i, j])

    x = wp.array(np.ones((3, 5)), dtype=float, requires_grad=True)

    def gradient():
        out = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(sq, dim=(3, 5), inputs=[x], outputs=[out])
        tape.backward(out)
        return x.grad.numpy().copy()

    _, trace = tm.trace_call(gradient, params={"x": x})
    assert element_counts(trace, trace["events"]) == [3, 5, 15]
