"""Invert a seabed depth profile from two-way travel times of an offset sonar pair, with a
smoothness prior on the profile. Data term and prior are differentiated on separate tapes."""
import numpy as np
import warp as wp

wp.init()

CELLS = 20
CELL = 5.0
OFFSET = 8.0
SOUND = 1.5
PRIOR = 0.5
LR = 0.08


@wp.kernel
def travel_misfit(depth: wp.array(dtype=wp.float64), pos: wp.array(dtype=wp.float64), observed: wp.array(dtype=wp.float64),
                  cell: wp.float64, offset: wp.float64, sound: wp.float64, loss: wp.array(dtype=wp.float64)):
    j = wp.tid()
    s = pos[j] / cell
    k = int(s)
    a = s - wp.float64(k)
    d = (wp.float64(1.0) - a) * depth[k] + a * depth[k + 1]
    t = wp.float64(2.0) * wp.sqrt(d * d + offset * offset) / sound
    r = t - observed[j]
    wp.atomic_add(loss, 0, r * r)


@wp.kernel
def roughness(depth: wp.array(dtype=wp.float64), weight: wp.float64, loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    if i < depth.shape[0] - 1:
        g = depth[i + 1] - depth[i]
        wp.atomic_add(loss, 0, weight * g * g)


def main():
    rng = np.random.default_rng(7)
    pos_np = np.sort(rng.uniform(0.0, CELL * (CELLS - 1) - 1e-3, 30))
    xs = np.arange(CELLS) * CELL
    true_depth = 30.0 + 6.0 * np.sin(xs / 25.0) + 0.08 * xs
    d_at = np.interp(pos_np, xs, true_depth)
    observed_np = 2.0 * np.sqrt(d_at ** 2 + OFFSET ** 2) / SOUND + rng.normal(0.0, 0.05, pos_np.size)

    pos = wp.array(pos_np, dtype=wp.float64)
    observed = wp.array(observed_np, dtype=wp.float64)
    depth = wp.array(np.full(CELLS, 32.0), dtype=wp.float64, requires_grad=True)
    data = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    prior = wp.zeros(1, dtype=wp.float64, requires_grad=True)

    for it in range(40):
        data.zero_()
        prior.zero_()
        tape_data = wp.Tape()
        with tape_data:
            wp.launch(travel_misfit, dim=pos_np.size,
                      inputs=[depth, pos, observed, wp.float64(CELL), wp.float64(OFFSET), wp.float64(SOUND)],
                      outputs=[data])
        tape_data.backward(data)
        tape_prior = wp.Tape()
        with tape_prior:
            wp.launch(roughness, dim=CELLS, inputs=[depth, wp.float64(PRIOR)], outputs=[prior])
        tape_prior.backward(prior)
        g = depth.grad.numpy()
        depth.assign(depth.numpy() - LR * g)
        depth.grad.zero_()
        if it % 5 == 0 or it == 39:
            print(f"iter {it:3d}  loss {data.numpy()[0] + prior.numpy()[0]:.10e}")
    print("depth", np.round(depth.numpy(), 2))


if __name__ == "__main__":
    main()
