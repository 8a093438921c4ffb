import warp as wp

from assimilate import WindowedAssimilation


class Problem:
    def __init__(self, device, scale):
        if scale == "small":
            self.da = WindowedAssimilation(64, 4, 20, device=device)
        else:
            self.da = WindowedAssimilation(256, 16, 40, n_probes=48, device=device)
        self.params = {"forcing": self.da.forcing}
        self.steps = self.da.windows * self.da.spw

    def objective(self):
        return self.da.cost()

    def gradient(self):
        return {"forcing": self.da.cost_and_gradient()[1]}

    def train(self, iterations):
        return self.da.descend(iterations)


def make_problem(device, scale="small"):
    wp.init()
    return Problem(device, scale)
