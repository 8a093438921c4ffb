import numpy as np

import train


class Problem:
    def __init__(self, device, zones, valves):
        args = train.parse_args(["--zones", str(zones), "--valves", str(valves)])
        self.opt = train.ScheduleOptimizer(args, device)
        self.params = self.opt.params

    def objective(self):
        return self.opt.loss()

    def gradient(self):
        return self.opt.compute_gradients()

    def reference_gradient(self):
        net = self.opt.net
        share = net.share.numpy()
        flow = net.flow.numpy()
        u = self.opening_np()
        delivered = share @ (flow * np.clip(u, 0.0, 1.0))
        r = delivered - net.demand.numpy()
        inside = (u >= 0.0) & (u < 1.0)
        return {"opening": 2.0 * (share.T @ r) * flow * inside + self.opt.pump_cost}

    def opening_np(self):
        return self.opt.opening.numpy().astype(np.float64)

    def train(self, iterations):
        return [self.opt.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, 120, 160)
    return Problem(device, 10, 12)
