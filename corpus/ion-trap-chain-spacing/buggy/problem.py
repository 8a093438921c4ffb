from train import IonChain


class Problem:
    def __init__(self, device, n_ion, n_electrode):
        self.chain = IonChain(device, n_ion=n_ion, n_electrode=n_electrode)
        self.params = {"z": self.chain.z}

    def objective(self):
        return self.chain.evaluate()

    def gradient(self):
        return {"z": self.chain.force()}

    def train(self, iterations):
        return [self.chain.relax_step(0.05) for _ in range(iterations)]


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, n_ion=40, n_electrode=16)
    return Problem(device, n_ion=6, n_electrode=4)
