import warp as wp

import solve


class IKProblem:
    def __init__(self, device, scale):
        self.solver = solve.build(16 if scale == "small" else 2048, device)
        self.params = {"joint_angles": self.solver.q}

    def objective(self):
        return self.solver.value()

    def gradient(self):
        _, g = self.solver.gradient()
        return {"joint_angles": g}

    def train(self, iterations):
        return self.solver.solve(iterations)


def make_problem(device, scale="small"):
    wp.init()
    return IKProblem(device, scale)
