import argparse
from dataclasses import dataclass, field

import numpy as np
import warp as wp

import led


@dataclass
class Session:
    gain: wp.array
    command: wp.array
    reading: wp.array
    gamma: float = 2.2
    prior: float = 1.0e-2
    history: list = field(default_factory=list)

    @property
    def shape(self):
        return self.command.shape


def load_session(n_leds=64, n_frames=4, seed=1, device=None):
    rng = np.random.default_rng(seed)
    true_gain = 0.85 + 0.3 * rng.random(n_leds)
    command = 0.1 + 0.6 * rng.random((n_frames, n_leds))
    bright = (np.round(15.0 * np.clip(true_gain * command, 0.0, 1.0)) / 15.0 + 1.0e-3) ** 2.2
    reading = bright * (1.0 + 0.01 * rng.standard_normal(bright.shape))
    gain0 = 1.0 + 0.05 * rng.standard_normal(n_leds)
    return Session(
        gain=wp.array(gain0, dtype=wp.float64, device=device, requires_grad=True),
        command=wp.array(command, dtype=wp.float64, device=device),
        reading=wp.array(reading, dtype=wp.float64, device=device),
    )


def panel_loss(s):
    frames, leds = s.shape
    out = wp.zeros((frames, leds), dtype=wp.float64, device=s.gain.device, requires_grad=True)
    wp.launch(led.panel_response, dim=(frames, leds), inputs=[s.gain, s.command, wp.float64(s.gamma)], outputs=[out],
              device=s.gain.device)
    loss = wp.zeros(1, dtype=wp.float64, device=s.gain.device, requires_grad=True)
    wp.launch(led.photometer_loss, dim=(frames, leds),
              inputs=[out, s.reading, s.gain, wp.float64(1.0 / (frames * leds)), wp.float64(s.prior / leds)],
              outputs=[loss], device=s.gain.device)
    return loss


def loss_and_grad(s):
    tape = wp.Tape()
    with tape:
        loss = panel_loss(s)
    tape.backward(loss)
    g = s.gain.grad.numpy().copy()
    tape.zero()
    return float(loss.numpy()[0]), g


def run(s, iterations, lr=5.0, verbose=False):
    for it in range(iterations):
        value, g = loss_and_grad(s)
        s.gain.assign(s.gain.numpy() - lr * g)
        s.history.append(value)
        if verbose and it % 10 == 0:
            print(f"{it:4d}  loss {value:.6e}  max|g| {np.abs(g).max():.2e}")
    return s.history[-iterations:]


def main():
    p = argparse.ArgumentParser(description="per-LED gain calibration against photometer readings")
    p.add_argument("--leds", type=int, default=64)
    p.add_argument("--frames", type=int, default=4)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--lr", type=float, default=5.0)
    p.add_argument("--save", default=None)
    a = p.parse_args()
    wp.init()
    s = load_session(a.leds, a.frames)
    run(s, a.iterations, a.lr, verbose=True)
    if a.save:
        np.save(a.save, s.gain.numpy())


if __name__ == "__main__":
    main()
