import train


class Problem:
    def __init__(self, device, samples):
        self.clf = train.FaultClassifier(train.parse_args(["--samples", str(samples)]), device)
        self.params = self.clf.params

    def objective(self):
        return self.clf.loss()

    def gradient(self):
        return self.clf.compute_gradients()

    def train(self, iterations):
        return [self.clf.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    return Problem(device, 20000 if scale == "production" else 400)
