import smooth_tile


class Problem:
    def __init__(self, device, width):
        self.sm = smooth_tile.TileSmoother(smooth_tile.parse_args(["--width", str(width)]), device)
        self.params = self.sm.params

    def objective(self):
        return self.sm.energy()

    def gradient(self):
        return self.sm.compute_gradients()

    def train(self, iterations):
        return [self.sm.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    return Problem(device, 512 if scale == "production" else 128)
