from arm import ArmBatch
from solve_ik import IKSolver


class Problem:
    def __init__(self, device, n_arms):
        self.solver = IKSolver(ArmBatch(n_arms, device=device))
        self.params = {"q": self.solver.q}

    def objective(self):
        return self.solver.cost()

    def gradient(self):
        return {"q": self.solver.cost_and_gradient()[1]}

    def train(self, iterations):
        return self.solver.iterate(iterations)


def make_problem(device, scale="small"):
    return Problem(device, 16 if scale == "small" else 4096)
