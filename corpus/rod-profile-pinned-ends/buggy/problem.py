import numpy as np
import warp as wp


@wp.kernel
def fill_profile(log_temp: wp.array(dtype=wp.float64), temp: wp.array(dtype=wp.float64)):
    i = wp.tid()
    temp[i] = wp.exp(log_temp[i])


@wp.kernel
def pin_ends(ends: wp.array(dtype=wp.float64), temp: wp.array(dtype=wp.float64)):
    n = temp.shape[0]
    temp[0] = ends[0]
    temp[n - 1] = ends[1]


@wp.kernel
def profile_loss(
    temp: wp.array(dtype=wp.float64),
    measured: wp.array(dtype=wp.float64),
    smooth: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = temp.shape[0]
    r = temp[i] - measured[i]
    e = r * r
    if i < n - 1:
        d = temp[i + 1] - temp[i]
        e = e + smooth * d * d
    wp.atomic_add(loss, 0, e)


class RodProfile:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        s = np.linspace(0.0, 1.0, n)
        measured = 1.0 + 0.6 * s + 0.3 * np.sin(3.0 * s)
        self.measured = wp.array(measured, dtype=wp.float64, device=device)
        self.log_temp = wp.array(np.log(measured) + 0.1 * np.cos(5.0 * s), dtype=wp.float64, requires_grad=True, device=device)
        self.ends = wp.array([0.9, 1.8], dtype=wp.float64, requires_grad=True, device=device)
        self.smooth = 0.5
        self.params = {"log_temp": self.log_temp, "ends": self.ends}

    def forward(self):
        temp = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(fill_profile, dim=self.n, inputs=[self.log_temp], outputs=[temp], device=self.device)
        wp.launch(pin_ends, dim=1, inputs=[self.ends], outputs=[temp], device=self.device)
        wp.launch(profile_loss, dim=self.n, inputs=[temp, self.measured, wp.float64(self.smooth)], outputs=[loss], device=self.device)
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


def make_problem(device, scale="small"):
    if scale == "production":
        return RodProfile(device, n=64)
    return RodProfile(device, n=12)
