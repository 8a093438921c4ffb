import numpy as np
import warp as wp


@wp.kernel
def square(k: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = k[i] * k[i]


@wp.kernel
def shift(y: wp.array(dtype=float), c: float):
    i = wp.tid()
    y[i] = y[i] + c


@wp.kernel
def total(y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, y[i])


class Tape:
    def __init__(self, device):
        self.device = device
        self.k = wp.array(np.array([1.0, 2.0], dtype=np.float32), device=device, requires_grad=True)
        self.y = wp.zeros(2, dtype=float, device=device, requires_grad=True)
        self.loss = wp.zeros(1, dtype=float, device=device, requires_grad=True)
        self.params = {"k": self.k}

    def gradient(self):
        self.k.grad.zero_()
        self.loss.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(square, dim=2, inputs=[self.k], outputs=[self.y], device=self.device)
            wp.launch(total, dim=2, inputs=[self.y], outputs=[self.loss], device=self.device)
        wp.launch(shift, dim=2, inputs=[self.y, 1.0], outputs=[self.y], device=self.device)
        tape.backward(self.loss)
        return {"k": self.k.grad.numpy().copy()}
