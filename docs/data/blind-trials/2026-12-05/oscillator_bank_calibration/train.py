"""Calibrate the stiffness and damping of a bank of tuned-mass dampers from accelerometer logs."""
import numpy as np
import warp as wp
import warp.optim

wp.init()

N_OSC = 5
STEPS = 40
DT = 0.05


@wp.kernel
def advance(x: wp.array(dtype=float), v: wp.array(dtype=float), k: wp.array(dtype=float),
            c: wp.array(dtype=float), drive: float, dt: float,
            x_out: wp.array(dtype=float), v_out: wp.array(dtype=float)):
    i = wp.tid()
    a = drive - k[i] * x[i] - c[i] * v[i]
    vn = v[i] + dt * a
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def track(x: wp.array(dtype=float), measured: wp.array(dtype=float), w: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - measured[i]
    wp.atomic_add(loss, 0, w * d * d)


def drive_at(t):
    return float(np.sin(1.7 * t * DT))


class DamperCalibration:
    def __init__(self, measured, k0, c0, lr=0.02):
        self.measured = measured
        self.k = wp.array(k0.astype(np.float32), dtype=float, requires_grad=True)
        self.c = wp.array(c0.astype(np.float32), dtype=float, requires_grad=True)
        self.xs = [wp.zeros(N_OSC, dtype=float, requires_grad=True) for _ in range(STEPS + 1)]
        self.vs = [wp.zeros(N_OSC, dtype=float, requires_grad=True) for _ in range(STEPS + 1)]
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)
        self.opt = warp.optim.Adam([self.k, self.c], lr=lr)
        self.tape = None

    def forward(self):
        w = 1.0 / (STEPS * N_OSC)
        for t in range(STEPS):
            wp.launch(advance, dim=N_OSC, inputs=[self.xs[t], self.vs[t], self.k, self.c, drive_at(t), DT],
                      outputs=[self.xs[t + 1], self.vs[t + 1]])
            wp.launch(track, dim=N_OSC, inputs=[self.xs[t + 1], self.measured[t], w], outputs=[self.loss])

    def step(self):
        self.loss.zero_()
        self.tape = wp.Tape()
        with self.tape:
            self.forward()
        self.tape.backward(self.loss)
        self.opt.step([self.k.grad, self.c.grad])
        return float(self.loss.numpy()[0])


def synthesize(k_true, c_true):
    x = np.zeros(N_OSC)
    v = np.zeros(N_OSC)
    out = []
    for t in range(STEPS):
        a = drive_at(t) - k_true * x - c_true * v
        v = v + DT * a
        x = x + DT * v
        out.append(wp.array(x.astype(np.float32), dtype=float))
    return out


def main():
    k_true = np.array([2.0, 3.5, 5.0, 1.2, 4.2])
    c_true = np.array([0.3, 0.6, 0.2, 0.5, 0.9])
    measured = synthesize(k_true, c_true)
    cal = DamperCalibration(measured, k0=np.full(N_OSC, 3.0), c0=np.full(N_OSC, 0.5))
    for it in range(40):
        value = cal.step()
        if it % 5 == 0 or it == 39:
            print(f"iter {it:3d}  loss {value:.6e}")
    print("k", np.round(cal.k.numpy(), 3), "c", np.round(cal.c.numpy(), 3))


if __name__ == "__main__":
    main()
