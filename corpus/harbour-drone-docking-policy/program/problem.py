import torch
import warp as wp

from train import DockingTrainer


class Problem:
    def __init__(self, device, scale):
        n = 32 if scale == "small" else 1024
        self.trainer = DockingTrainer(n, device=device)
        self.named = dict(self.trainer.policy.named_parameters())
        self.params = {k.replace(".", "_"): wp.from_torch(p.detach(), requires_grad=True)
                       for k, p in self.named.items()}
        self.steps = self.trainer.harbour.steps

    def objective(self):
        with torch.no_grad():
            return float(self.trainer.loss())

    def gradient(self):
        self.trainer.backward_pass()
        return {k.replace(".", "_"): p.grad.detach().numpy().copy() for k, p in self.named.items()}

    def train(self, iterations):
        return self.trainer.fit(iterations)


def make_problem(device, scale="small"):
    wp.init()
    return Problem(device, scale)
