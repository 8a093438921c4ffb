import argparse

import numpy as np
import warp as wp

import panel


class WallFit:
    def __init__(self, device="cpu", n_led=8, n_sensor=8, threads=12, seed=5):
        rng = np.random.default_rng(seed)
        self.device = device
        self.n_led = n_led
        self.n_sensor = n_sensor
        self.threads = threads
        self.gamma = 2.2
        target = rng.uniform(0.2, 0.8, n_led)
        self.gain = wp.array(rng.uniform(0.8, 1.2, n_sensor), dtype=wp.float64, device=device)
        meas = rng.uniform(0.05, 0.15, n_sensor)
        self.obs = wp.array(np.concatenate([target, meas]), dtype=wp.float64, device=device)
        theta0 = np.concatenate([np.full(n_led, 0.6), np.full(n_sensor, 0.1)])
        self.theta = wp.array(theta0 + 0.01 * np.arange(theta0.size), dtype=wp.float64, requires_grad=True, device=device)
        self.loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=device)

    def forward(self):
        self.loss.zero_()
        wp.launch(
            panel.emitter_misfit,
            dim=self.threads,
            inputs=[self.theta, self.obs, wp.float64(self.gamma), self.n_led, self.threads],
            outputs=[self.loss],
            device=self.device,
        )
        wp.launch(
            panel.ambient_misfit,
            dim=self.n_sensor,
            inputs=[self.theta, self.n_led, self.gain, self.obs],
            outputs=[self.loss],
            device=self.device,
        )

    def evaluate(self):
        self.forward()
        return float(self.loss.numpy()[0])

    def grad(self):
        tape = wp.Tape()
        with tape:
            self.forward()
        tape.backward(loss=self.loss)
        g = self.theta.grad.numpy().copy()
        tape.zero()
        return g

    def step(self, lr):
        g = self.grad()
        self.theta.assign(self.theta.numpy() - lr * g)
        return self.evaluate()


def main():
    parser = argparse.ArgumentParser(description="fit LED drive levels and ambient offsets of a display wall")
    parser.add_argument("--leds", type=int, default=8)
    parser.add_argument("--sensors", type=int, default=8)
    parser.add_argument("--threads", type=int, default=12)
    parser.add_argument("--iters", type=int, default=300)
    parser.add_argument("--lr", type=float, default=0.2)
    args = parser.parse_args()
    fit = WallFit(n_led=args.leds, n_sensor=args.sensors, threads=args.threads)
    for it in range(args.iters):
        loss = fit.step(args.lr)
        if it % 50 == 0:
            print(f"{it:4d} {loss:.6e}")
    print("ambient offsets", fit.theta.numpy()[args.leds:])


if __name__ == "__main__":
    main()
