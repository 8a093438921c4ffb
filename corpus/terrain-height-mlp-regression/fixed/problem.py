import warp as wp

from train import Trainer


class Problem:
    def __init__(self, device, scale):
        if scale == "small":
            self.trainer = Trainer(256, 32, device=device)
        else:
            self.trainer = Trainer(4096, 128, device=device)
        self.params = self.trainer.net.parameters()

    def objective(self):
        return self.trainer.evaluate()

    def gradient(self):
        _, grads = self.trainer.backprop()
        return grads

    def train(self, iterations):
        return self.trainer.epochs(iterations)


def make_problem(device, scale="small"):
    wp.init()
    return Problem(device, scale)
