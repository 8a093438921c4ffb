import numpy as np
import warp as wp

from rod import Rod


class FurnaceRod:
    def __init__(self, cells=16, steps=40, device="cpu"):
        probes = np.linspace(1, cells - 2, 5).astype(int)
        self.rod = Rod(cells, steps, probes, device=device)
        self.log_kappa = wp.zeros(cells, dtype=wp.float64, device=device, requires_grad=True)
        self.tape = None

    def evaluate(self, requires_grad=False):
        if not requires_grad:
            return float(self.rod.run(self.log_kappa).numpy()[0])
        self.tape = wp.Tape()
        with self.tape:
            loss = self.rod.run(self.log_kappa)
        self.tape.backward(loss)
        return float(loss.numpy()[0])

    def profile(self):
        return np.exp(self.log_kappa.numpy())
