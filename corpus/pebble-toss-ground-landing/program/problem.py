import warp as wp

import train


class TossProblem:
    def __init__(self, device, scale):
        n = 6 if scale == "small" else 64
        self.steps = 300
        self.q0, self.qd0, self.target = train.make_scene(n, device)
        self.params = {"throw_velocity": self.qd0}

    def objective(self):
        return float(train.forward(self.q0, self.qd0, self.target, self.steps).numpy()[0])

    def gradient(self):
        _, g = train.iteration(self.q0, self.qd0, self.target, self.steps)
        return {"throw_velocity": g}

    def train(self, iterations):
        return train.fit(self.q0, self.qd0, self.target, self.steps, iterations)


def make_problem(device, scale="small"):
    wp.init()
    return TossProblem(device, scale)
