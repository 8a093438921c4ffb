from model import HeatSink


class Problem:
    def __init__(self, device, n_fins):
        self.sink = HeatSink(device, n_fins)
        self.params = {"conductance": self.sink.conductance}

    def objective(self):
        return float(self.sink.loss(False).numpy()[0])

    def gradient(self):
        _, g = self.sink.step_gradient()
        return {"conductance": g}

    def train(self, iterations):
        import numpy as np

        losses = []
        for _ in range(iterations):
            loss, g = self.sink.step_gradient()
            self.sink.conductance.assign(np.maximum(self.sink.conductance.numpy() - 1e-3 * g, 0.05))
            losses.append(loss)
        return losses


def make_problem(device, scale="small"):
    return Problem(device, 12 if scale == "small" else 64)
