from cloth import Banner
from trainer import Trainer


class BannerProblem:
    def __init__(self, device, nx, ny, steps):
        self.trainer = Trainer(Banner(nx, ny, steps, device=device))
        self.steps = steps
        self.params = {"log_k": self.trainer.log_k}

    def objective(self):
        return float(self.trainer.banner.simulate(self.trainer.log_k).numpy()[0])

    def gradient(self):
        return {"log_k": self.trainer.compute_gradient()[1]}

    def train(self, iterations):
        return self.trainer.fit(iterations)


def make_problem(device, scale="small"):
    if scale == "small":
        return BannerProblem(device, 4, 4, 30)
    return BannerProblem(device, 24, 16, 200)
