import numpy as np
import warp as wp


@wp.kernel
def pose_cost(
    tilt: wp.array(dtype=wp.float64),
    height: wp.array(dtype=wp.float64),
    slope: wp.array(dtype=wp.float64),
    half_track: wp.float64,
    clearance: wp.float64,
    level_weight: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    t = tilt[i]
    h = height[i]
    left = h - half_track * wp.sin(t)
    right = h + half_track * wp.sin(t)
    lowest = wp.min(left, right)
    roll = t + slope[i]
    r = lowest - clearance
    wp.atomic_add(loss, 0, r * r + level_weight * roll * roll)


class LandingPose:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        self.half_track = 1.2
        self.clearance = 0.3
        self.level_weight = 0.5
        rng = np.random.default_rng(17)
        self.slope_np = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0) * rng.uniform(0.05, 0.2, n)
        self.slope = wp.array(self.slope_np, dtype=wp.float64, device=device)
        self.tilt = wp.array(-self.slope_np, dtype=wp.float64, requires_grad=True, device=device)
        self.height = wp.array(rng.uniform(0.8, 1.5, n), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"tilt": self.tilt, "height": self.height}

    def forward(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            pose_cost,
            dim=self.n,
            inputs=[
                self.tilt,
                self.height,
                self.slope,
                wp.float64(self.half_track),
                wp.float64(self.clearance),
                wp.float64(self.level_weight),
            ],
            outputs=[loss],
            device=self.device,
        )
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        grads = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return grads

    def reference_gradient(self):
        t = self.tilt.numpy().astype(np.float64)
        h = self.height.numpy().astype(np.float64)
        left = h - self.half_track * np.sin(t)
        right = h + self.half_track * np.sin(t)
        use_left = left < right
        lowest = np.where(use_left, left, right)
        d_lowest = np.where(use_left, -1.0, 1.0) * self.half_track * np.cos(t)
        r = lowest - self.clearance
        g_tilt = 2.0 * r * d_lowest + 2.0 * self.level_weight * (t + self.slope_np)
        g_height = 2.0 * r
        return {"tilt": g_tilt, "height": g_height}

    def train(self, iterations, lr=0.1):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return LandingPose(device, n=512)
    return LandingPose(device, n=8)
