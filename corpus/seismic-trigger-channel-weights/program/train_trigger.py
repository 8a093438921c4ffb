import argparse

import numpy as np
import warp as wp

from trigger import detection_loss, stack_channels


@wp.kernel
def descend(w: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    k = wp.tid()
    w[k] = w[k] - lr * g[k]


def load_events(events, channels, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, (events, channels))
    label = (x @ np.linspace(0.9, 0.1, channels) > 0.5 * channels * 0.5).astype(np.float64)
    return x, label


def main():
    parser = argparse.ArgumentParser(description="train channel weights of a spiking seismic event trigger")
    parser.add_argument("--events", type=int, default=40)
    parser.add_argument("--channels", type=int, default=5)
    parser.add_argument("--iters", type=int, default=80)
    parser.add_argument("--lr", type=float, default=0.3)
    args = parser.parse_args()

    xs, labels = load_events(args.events, args.channels, 17)
    x = wp.array(xs, dtype=wp.float64)
    label = wp.array(labels, dtype=wp.float64)
    w = wp.array(np.full(args.channels, 0.4), dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            v = wp.zeros(args.events, dtype=wp.float64, requires_grad=True)
            wp.launch(stack_channels, dim=(args.events, args.channels), inputs=[w, x], outputs=[v])
            loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            wp.launch(detection_loss, dim=args.events,
                      inputs=[v, wp.float64(1.0), label, wp.float64(1.0 / args.events)], outputs=[loss])
        tape.backward(loss)
        wp.launch(descend, dim=args.channels, inputs=[w, w.grad, wp.float64(args.lr)])
        tape.zero()
        if it % 10 == 0:
            print(f"it {it}: misdetection rate {loss.numpy()[0]:.3f}")
    print("weights", w.numpy())


if __name__ == "__main__":
    main()
