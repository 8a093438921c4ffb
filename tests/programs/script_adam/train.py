import numpy as np
import warp as wp
import warp.optim


@wp.kernel
def fit(p: wp.array(dtype=float), data: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = p[i] - data[i]
    wp.atomic_add(loss, 0, d * d)


def main():
    rng = np.random.default_rng(3)
    data = wp.array(rng.normal(size=4).astype(np.float32))
    p = wp.zeros(4, dtype=float, requires_grad=True)
    opt = warp.optim.Adam([p], lr=0.1)
    for it in range(3):
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(fit, dim=4, inputs=[p, data, loss])
        tape.backward(loss)
        opt.step([p.grad])
        tape.zero()
        print("loss", loss.numpy()[0])


if __name__ == "__main__":
    main()
