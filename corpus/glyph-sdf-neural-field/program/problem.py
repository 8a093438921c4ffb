import train
from field import NeuralField


class FieldProblem:
    def __init__(self, device, hidden, depth, n_points):
        self.model = NeuralField(hidden, depth, n_points, device=device)
        self.params = self.model.net.named_parameters()
        self.opt = train.Adam(self.params)

    def objective(self):
        return float(self.model.forward().numpy()[0])

    def gradient(self):
        return train.compute_grads(self.model)[1]

    def train(self, iterations):
        return train.train(self.model, self.opt, iterations)


def make_problem(device, scale="small"):
    if scale == "small":
        return FieldProblem(device, 24, 2, 128)
    return FieldProblem(device, 128, 4, 16384)
