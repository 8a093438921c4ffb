"""Fit the coefficient of restitution and the toss velocity of eight rubber balls from high-speed video."""
import numpy as np
import warp as wp
import warp.optim

wp.init()

N_BALLS = 8
STEPS = 60
DT = 0.01
G = 9.81


@wp.kernel
def fall(y: wp.array(dtype=float), v: wp.array(dtype=float), dt: float, g: float,
         y_out: wp.array(dtype=float), v_out: wp.array(dtype=float)):
    i = wp.tid()
    vn = v[i] - g * dt
    v_out[i] = vn
    y_out[i] = y[i] + dt * vn


@wp.kernel
def floor_contact(y: wp.array(dtype=float), v: wp.array(dtype=float), e: wp.array(dtype=float)):
    i = wp.tid()
    if y[i] < 0.0:
        y[i] = -y[i]
        v[i] = -e[i] * v[i]


@wp.kernel
def launch_state(h0: wp.array(dtype=float), v0: wp.array(dtype=float),
                 y: wp.array(dtype=float), v: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = h0[i]
    v[i] = v0[i]


@wp.kernel
def video_misfit(y: wp.array(dtype=float), seen: wp.array(dtype=float), w: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = y[i] - seen[i]
    wp.atomic_add(loss, 0, w * d * d)


def reference(h0, v0, e):
    y, v = h0.copy(), v0.copy()
    frames = []
    for _ in range(STEPS):
        v = v - G * DT
        y = y + DT * v
        hit = y < 0.0
        y = np.where(hit, -y, y)
        v = np.where(hit, -e * v, v)
        frames.append(y.copy())
    return frames


def main():
    rng = np.random.default_rng(4)
    h0_np = rng.uniform(0.4, 0.9, N_BALLS)
    v0_true = rng.uniform(-0.5, 0.5, N_BALLS)
    e_true = rng.uniform(0.55, 0.85, N_BALLS)
    frames = [wp.array(f.astype(np.float32), dtype=float) for f in reference(h0_np, v0_true, e_true)]

    h0 = wp.array(h0_np.astype(np.float32), dtype=float)
    e = wp.array(np.full(N_BALLS, 0.6, dtype=np.float32), dtype=float, requires_grad=True)
    v0 = wp.zeros(N_BALLS, dtype=float, requires_grad=True)
    ys = [wp.zeros(N_BALLS, dtype=float, requires_grad=True) for _ in range(STEPS + 1)]
    vs = [wp.zeros(N_BALLS, dtype=float, requires_grad=True) for _ in range(STEPS + 1)]
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    opt = warp.optim.SGD([e, v0], lr=0.5)
    w = 1.0 / (STEPS * N_BALLS)

    for it in range(30):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(launch_state, dim=N_BALLS, inputs=[h0, v0], outputs=[ys[0], vs[0]])
            for t in range(STEPS):
                wp.launch(fall, dim=N_BALLS, inputs=[ys[t], vs[t], DT, G], outputs=[ys[t + 1], vs[t + 1]])
                wp.launch(floor_contact, dim=N_BALLS, inputs=[ys[t + 1], vs[t + 1], e])
                wp.launch(video_misfit, dim=N_BALLS, inputs=[ys[t + 1], frames[t], w], outputs=[loss])
        tape.backward(loss)
        opt.step([e.grad, v0.grad])
        tape.zero()
        if it % 5 == 0 or it == 29:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6e}")
    print("restitution", np.round(e.numpy(), 3))


if __name__ == "__main__":
    main()
