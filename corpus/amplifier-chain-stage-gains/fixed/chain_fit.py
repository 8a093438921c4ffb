import argparse

import numpy as np
import warp as wp

STAGES = wp.constant(4)


@wp.kernel
def chain_response(
    gains: wp.array(dtype=wp.float64),
    drive: wp.array(dtype=wp.float64),
    out: wp.array(dtype=wp.float64),
):
    c = wp.tid()
    level = drive[c]
    for s in range(STAGES):
        g = gains[c * STAGES + s]
        level = level * g / (wp.float64(1.0) + wp.float64(0.05) * level)
    out[c] = level


@wp.kernel
def db_error(out: wp.array(dtype=wp.float64), target_db: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    c = wp.tid()
    e = wp.float64(20.0) * wp.log10(out[c]) - target_db[c]
    wp.atomic_add(loss, 0, e * e)


class ChainCalibration:
    def __init__(self, channels, seed):
        rng = np.random.default_rng(seed)
        self.channels = channels
        self.drive = wp.array(rng.uniform(0.5, 1.5, channels), dtype=wp.float64)
        self.target_db = wp.array(rng.uniform(14.0, 22.0, channels), dtype=wp.float64)
        init = rng.uniform(1.6, 2.4, channels * STAGES)
        self.gains = wp.array(init, dtype=wp.float64, requires_grad=True)
        self.out = wp.zeros(channels, dtype=wp.float64, requires_grad=True)

    def loss(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(chain_response, dim=self.channels, inputs=[self.gains, self.drive], outputs=[self.out])
        wp.launch(db_error, dim=self.channels, inputs=[self.out, self.target_db], outputs=[loss])
        return loss

    def step(self, lr):
        tape = wp.Tape()
        with tape:
            loss = self.loss()
        tape.backward(loss)
        g = self.gains.grad.numpy()
        self.gains.assign(np.clip(self.gains.numpy() - lr * g, 0.5, 10.0))
        tape.zero()
        return float(loss.numpy()[0])


def main():
    ap = argparse.ArgumentParser(description="calibrate per-stage gains of amplifier chains to measured output levels")
    ap.add_argument("--channels", type=int, default=6)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--lr", type=float, default=0.002)
    ap.add_argument("--seed", type=int, default=8)
    args = ap.parse_args()
    cal = ChainCalibration(args.channels, args.seed)
    for it in range(args.iters):
        loss = cal.step(args.lr)
        if it % 5 == 0:
            print(f"iter {it:3d}  loss {loss:.4f} dB^2")
    print(cal.gains.numpy().reshape(args.channels, STAGES))


if __name__ == "__main__":
    main()
