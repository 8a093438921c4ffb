"""Plan the thrust schedule of a small lifting drone whose motor controller only accepts thrust in
steps of 0.25 (normalised units). Tracking error of the climb plus a thrust-effort penalty."""
import numpy as np
import warp as wp
import warp.optim

wp.init()

T = 30
DT = 0.1
GRAVITY = 1.0
DRAG = 0.3
LEVEL = 0.25
EFFORT = 0.01


@wp.func
def quantize(u: float, level: float):
    return wp.round(u / level) * level


@wp.func_grad(quantize)
def adj_quantize(u: float, level: float, adj_ret: float):
    wp.adjoint[u] += adj_ret


@wp.kernel
def climb(z: wp.array(dtype=float), vz: wp.array(dtype=float), thrust: wp.array(dtype=float), step: int,
          level: float, gravity: float, drag: float, dt: float,
          z_out: wp.array(dtype=float), vz_out: wp.array(dtype=float)):
    a = quantize(thrust[step], level) - gravity - drag * vz[0]
    v = vz[0] + dt * a
    vz_out[0] = v
    z_out[0] = z[0] + dt * v


@wp.kernel
def tracking(z: wp.array(dtype=float), ref: float, w: float, loss: wp.array(dtype=float)):
    d = z[0] - ref
    wp.atomic_add(loss, 0, w * d * d)


@wp.kernel
def effort(thrust: wp.array(dtype=float), w: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, w * thrust[i] * thrust[i])


def reference_altitude(t):
    return float(1.0 - np.exp(-0.8 * t * DT)) * 1.5


def main():
    thrust = wp.array(np.full(T, 1.1, dtype=np.float32), dtype=float, requires_grad=True)
    zs = [wp.zeros(1, dtype=float, requires_grad=True) for _ in range(T + 1)]
    vzs = [wp.zeros(1, dtype=float, requires_grad=True) for _ in range(T + 1)]
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    opt = warp.optim.Adam([thrust], lr=0.05)

    for it in range(40):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            for t in range(T):
                wp.launch(climb, dim=1, inputs=[zs[t], vzs[t], thrust, t, LEVEL, GRAVITY, DRAG, DT],
                          outputs=[zs[t + 1], vzs[t + 1]])
                wp.launch(tracking, dim=1, inputs=[zs[t + 1], reference_altitude(t + 1), 1.0 / T], outputs=[loss])
            wp.launch(effort, dim=T, inputs=[thrust, EFFORT / T], outputs=[loss])
        tape.backward(loss)
        opt.step([thrust.grad])
        tape.zero()
        if it % 5 == 0 or it == 39:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6e}")
    print("thrust levels", np.round(thrust.numpy(), 3))


if __name__ == "__main__":
    main()
