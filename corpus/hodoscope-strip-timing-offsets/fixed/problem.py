import numpy as np
import warp as wp

import detector


class StripTiming:
    def __init__(self, device, n_strips, n_pulses):
        rng = np.random.default_rng(30)
        self.device = device
        self.n_pulses = n_pulses
        strip = rng.integers(0, n_strips, n_pulses).astype(np.int32)
        true_t0 = rng.uniform(-2.0, 2.0, n_strips)
        ref = rng.uniform(10.0, 20.0, n_pulses)
        raw = ref + true_t0[strip] + 0.05 * rng.standard_normal(n_pulses)
        amp = rng.uniform(0.0, 1.0, n_pulses)
        self.threshold = 0.6
        self.raw = wp.array(raw, dtype=wp.float64, device=device)
        self.ref = wp.array(ref, dtype=wp.float64, device=device)
        self.amp = wp.array(amp, dtype=wp.float64, device=device)
        self.strip = wp.array(strip, dtype=wp.int32, device=device)
        self.t0 = wp.zeros(n_strips, dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"t0": self.t0}
        self.counter = wp.zeros(1, dtype=wp.int32, device=device)
        self.slot_of = wp.zeros(n_pulses, dtype=wp.int32, device=device)
        self.hit_time = wp.zeros(n_pulses, dtype=wp.float64, requires_grad=True, device=device)
        self.hit_ref = wp.zeros(n_pulses, dtype=wp.float64, device=device)

    def run(self):
        self.counter.zero_()
        self.hit_time.zero_()
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            detector.collect_hits,
            dim=self.n_pulses,
            inputs=[self.raw, self.amp, self.strip, self.t0, wp.float64(self.threshold), self.counter, self.slot_of],
            outputs=[self.hit_time, self.hit_ref, self.ref],
            device=self.device,
        )
        n_hits = int(self.counter.numpy()[0])
        wp.launch(detector.timing_residual, dim=n_hits, inputs=[self.hit_time, self.hit_ref], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.run().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.run()
        tape.backward(loss=loss)
        g = self.t0.grad.numpy().copy()
        tape.zero()
        return {"t0": g}


def make_problem(device, scale="small"):
    if scale == "production":
        return StripTiming(device, n_strips=64, n_pulses=2048)
    return StripTiming(device, n_strips=4, n_pulses=24)
