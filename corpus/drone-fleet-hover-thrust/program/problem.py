import warp as wp

from control import HoverPlanner


class Problem:
    def __init__(self, device, scale):
        drones, horizon = (8, 40) if scale == "small" else (256, 120)
        self.planner = HoverPlanner(drones, horizon, device=device)
        self.params = {"thrust": self.planner.u}
        self.steps = horizon

    def objective(self):
        return self.planner.loss()

    def gradient(self):
        _, g = self.planner.compute_gradient()
        return {"thrust": g.numpy()}

    def train(self, iterations):
        return self.planner.optimise(iterations)


def make_problem(device, scale="small"):
    wp.init()
    return Problem(device, scale)
