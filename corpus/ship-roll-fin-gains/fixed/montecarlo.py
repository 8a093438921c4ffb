import numpy as np
import warp as wp


class WaveSampler:
    def __init__(self, realizations, steps, amplitude, device):
        self.realizations = realizations
        self.steps = steps
        self.amplitude = amplitude
        self.device = device
        self.seed = 0
        self.count = 0

    def reseed(self, seed):
        self.seed = seed
        self.count = 0

    def draw(self):
        rng = np.random.default_rng([self.seed, self.count])
        self.count += 1
        white = rng.standard_normal((self.realizations, self.steps + 8))
        kernel = np.hanning(9)
        smooth = np.stack([np.convolve(row, kernel, mode="valid") for row in white])
        return wp.array(self.amplitude * smooth / kernel.sum(), dtype=wp.float64, device=self.device)


def value_and_grad(simulate, sampler, params):
    waves = sampler.draw()
    value = float(simulate(waves).numpy()[0])
    tape = wp.Tape()
    with tape:
        loss = simulate(waves)
    tape.backward(loss)
    grads = {name: arr.grad.numpy().copy() for name, arr in params.items()}
    tape.zero()
    return value, grads
