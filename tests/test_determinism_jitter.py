"""The determinism probe's line between float-atomic jitter and a stochastic forward depends on the device:
Warp runs a CPU launch's threads in order (a repeatable forward repeats to the last bit), a CUDA device's
float atomics reorder sums on every launch (harness/probes/determinism.py, JITTER_RTOL_CUDA)."""

import numpy as np
import pytest

from defects4warp.probes.determinism import JITTER_RTOL, JITTER_RTOL_CUDA, measure


class Ctx:
    """The members of the probe context the determinism probe uses; objective() returns the given values."""

    def __init__(self, device, values):
        self.doc = {"device": device, "protocol": {"optional": {"set_seed": False}}}
        self._values = iter(values)
        self.pinned = False
        self.want_trace = False

    def objective(self):
        return next(self._values)

    def gradient(self):
        return np.array([1.0, 2.0])

    def stage(self, name):
        pass

    def save(self):
        pass


@pytest.mark.parametrize("device, values, stochastic", [
    # the H200 measurement: a correct program of 50,001 atomic terms moved by 2.6e-6 between calls
    ("cuda:0", (32032.29296875, 32032.376953125), False),
    ("cpu", (32032.29296875, 32032.376953125), True),
    # a forward that resamples its noise (0.22 relative) is stochastic everywhere
    ("cuda:0", (2.4801665259269687, 3.1846785088503524), True),
    ("cpu", (1.0, 1.0), False),
])
def test_atomic_jitter_is_not_a_stochastic_forward_on_cuda(device, values, stochastic):
    ctx = Ctx(device, values)
    det = measure(ctx, calls=2)
    assert det["stochastic"] is stochastic
    assert det["objective_relative_change"] == pytest.approx(abs(values[0] - values[1]) / max(values), rel=1e-12)


def test_the_measured_jitter_lies_between_the_two_lines():
    rel = (32032.376953125 - 32032.29296875) / 32032.376953125
    assert JITTER_RTOL < rel < JITTER_RTOL_CUDA
