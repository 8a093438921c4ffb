import warp as wp


class StripFields:
    def __init__(self, n, steps, device):
        self.temp = [wp.zeros(n, dtype=wp.float64, requires_grad=True, device=device) for _ in range(steps + 1)]
        self.flux = [wp.zeros(n + 1, dtype=wp.float64, requires_grad=True, device=device) for _ in range(steps)]
        self.loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=device)
