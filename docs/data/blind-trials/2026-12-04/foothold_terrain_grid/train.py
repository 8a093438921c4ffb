"""Place six footholds along a walkway: a height-map cost sampled at the nearest grid cell,
plus a quadratic pull towards the nominal gait positions."""
import numpy as np
import warp as wp
import warp.optim

FEET = 6
CELLS = 32
W_GAIT = 4.0


@wp.kernel
def foothold_cost(x: wp.array(dtype=float), nominal: wp.array(dtype=float), height: wp.array(dtype=float),
                  w_gait: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    xi = wp.clamp(x[i], 0.0, 0.999)
    cell = int(wp.floor(xi * float(CELLS)))
    d = x[i] - nominal[i]
    wp.atomic_add(loss, 0, height[cell] * height[cell] + w_gait * d * d)


def terrain():
    rng = np.random.default_rng(21)
    return np.abs(rng.normal(0.0, 0.05, CELLS))


def nominal():
    return np.linspace(0.08, 0.92, FEET)


def main(iters=20):
    height = wp.array(terrain(), dtype=float)
    nom = wp.array(nominal(), dtype=float)
    x = wp.array(nominal() + np.array([0.05, -0.04, 0.03, 0.06, -0.05, 0.02]), dtype=float, requires_grad=True)
    opt = warp.optim.SGD([x], lr=0.05)
    for it in range(iters):
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(foothold_cost, dim=FEET, inputs=[x, nom, height, W_GAIT], outputs=[loss])
        tape.backward(loss)
        opt.step([x.grad])
        tape.zero()
        if it % 4 == 0:
            print(f"iter {it:3d} cost {loss.numpy()[0]:.6f}")


if __name__ == "__main__":
    main()
