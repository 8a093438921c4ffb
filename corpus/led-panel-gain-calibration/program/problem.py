import warp as wp

import calibrate


class LedProblem:
    def __init__(self, device, scale):
        leds, frames = (64, 4) if scale == "small" else (256, 4)
        self.session = calibrate.load_session(leds, frames, device=device)
        self.params = {"gain": self.session.gain}

    def objective(self):
        return float(calibrate.panel_loss(self.session).numpy()[0])

    def gradient(self):
        _, g = calibrate.loss_and_grad(self.session)
        return {"gain": g}

    def train(self, iterations):
        return calibrate.run(self.session, iterations)


def make_problem(device, scale="small"):
    wp.init()
    return LedProblem(device, scale)
