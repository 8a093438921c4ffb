import numpy as np
import warp as wp

import fins


@wp.kernel
def misfit(flux: wp.array(dtype=wp.float64), measured: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = flux[i] - measured[i]
    wp.atomic_add(loss, 0, d * d)


class HeatSink:
    def __init__(self, device, n_fins, seed=0):
        rng = np.random.default_rng(seed)
        self.device = device
        self.n = n_fins
        self.ambient = wp.float64(25.0)
        self.base_temp = wp.array(rng.uniform(55.0, 75.0, n_fins), dtype=wp.float64, device=device)
        true_g = rng.uniform(0.6, 1.4, n_fins)
        m = np.sqrt(true_g)
        clean = m * np.tanh(m) * (self.base_temp.numpy() - 25.0)
        self.measured = wp.array(clean + rng.normal(0.0, 0.2, n_fins), dtype=wp.float64, device=device)
        self.conductance = wp.array(np.full(n_fins, 1.0), dtype=wp.float64, requires_grad=True, device=device)

    def loss(self, requires_grad):
        flux = wp.zeros(self.n, dtype=wp.float64, requires_grad=requires_grad, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=requires_grad, device=self.device)
        wp.launch(fins.fin_flux, dim=self.n, inputs=[self.conductance, self.base_temp, self.ambient, flux],
                  device=self.device)
        wp.launch(misfit, dim=self.n, inputs=[flux, self.measured, loss], device=self.device)
        return loss

    def step_gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.loss(True)
        tape.backward(loss)
        g = self.conductance.grad.numpy().copy()
        tape.zero()
        return float(loss.numpy()[0]), g
