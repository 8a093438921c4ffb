import numpy as np
import warp as wp


@wp.kernel
def predict(x: wp.array(dtype=wp.float64), data: wp.array(dtype=wp.float64), pred: wp.array(dtype=wp.float64)):
    i = wp.tid()
    pred[i] = x[0] * data[i] + x[1]


@wp.kernel
def squared_error(pred: wp.array(dtype=wp.float64), target: wp.array(dtype=wp.float64),
                  loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = pred[i] - target[i]
    wp.atomic_add(loss, 0, d * d)


@wp.kernel
def count_large(x: wp.array(dtype=wp.float64), counter: wp.array(dtype=wp.int32)):
    i = wp.tid()
    if wp.abs(x[i]) > wp.float64(1.0):
        wp.atomic_add(counter, 0, 1)


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([0.5, -0.25]), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}
        self.n = 8
        self.data = wp.zeros(self.n, dtype=wp.float64, device=device)
        self.target = wp.zeros(self.n, dtype=wp.float64, device=device)
        self.counter = wp.zeros(1, dtype=wp.int32, device=device)

    def _batch(self):
        rng = np.random.default_rng(7)
        d = rng.normal(size=self.n)
        self.data.assign(d)
        self.target.assign(2.0 * d + 1.0 + 0.1 * rng.normal(size=self.n))

    def objective(self):
        self._batch()
        pred = wp.zeros(self.n, dtype=wp.float64, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device)
        wp.launch(predict, dim=self.n, inputs=[self.x, self.data, pred], device=self.device)
        wp.launch(squared_error, dim=self.n, inputs=[pred, self.target, loss], device=self.device)
        return float(loss.numpy()[0])

    def gradient(self):
        self._batch()
        self.counter.zero_()
        wp.launch(count_large, dim=2, inputs=[self.x, self.counter], device=self.device)
        pred = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(predict, dim=self.n, inputs=[self.x, self.data, pred], device=self.device)
            wp.launch(squared_error, dim=self.n, inputs=[pred, self.target, loss], device=self.device)
        self.x.grad.zero_()
        tape.backward(loss)
        return {"x": self.x.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
