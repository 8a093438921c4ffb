"""Tiny 1D neural field with per-channel gain modulation, fitted to a target signal."""
import argparse

import numpy as np
import warp as wp
import warp.optim

wp.config.quiet = True

N_FEAT = wp.constant(4)
HIDDEN = wp.constant(8)


@wp.kernel
def dense_tanh(
    feats: wp.array2d(dtype=float),
    w: wp.array(dtype=float),
    b: wp.array(dtype=float),
    h: wp.array2d(dtype=float),
):
    i, j = wp.tid()
    acc = b[j]
    for k in range(N_FEAT):
        acc += w[j * N_FEAT + k] * feats[i, k]
    h[i, j] = wp.tanh(acc)


@wp.kernel
def modulate(h: wp.array2d(dtype=float), gain: wp.array(dtype=float), hm: wp.array2d(dtype=float)):
    i, j = wp.tid()
    hm[i, j] = h[i, j] * gain[j]


@wp.kernel
def readout(h: wp.array2d(dtype=float), w: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    acc = b[0]
    for j in range(HIDDEN):
        acc += w[j] * h[i, j]
    out[i] = acc


@wp.kernel
def mse(pred: wp.array(dtype=float), target: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = pred[i] - target[i]
    wp.atomic_add(loss, 0, d * d / float(pred.shape[0]))


def fourier_features(t, n_freq=2):
    cols = []
    for k in range(1, n_freq + 1):
        cols += [np.sin(np.pi * k * t), np.cos(np.pi * k * t)]
    return np.stack(cols, axis=1)


def make_data(n=32):
    t = np.linspace(0.0, 1.0, n)
    y = np.sin(3.0 * np.pi * t) * np.exp(-t)
    return fourier_features(t), y


def init_params(hidden, n_feat, seed=7):
    rng = np.random.default_rng(seed)
    return {
        "w1": rng.normal(0.0, 1.0, size=hidden * n_feat),
        "b1": rng.normal(0.0, 0.1, size=hidden),
        "gain": rng.uniform(0.3, 1.5, size=hidden),
        "w2": rng.normal(0.0, 0.5, size=hidden),
        "b2": np.zeros(1),
    }


class NeuralField:
    def __init__(self, hidden=HIDDEN):
        feats, y = make_data()
        self.n = feats.shape[0]
        self.hidden = hidden
        self.feats = wp.array(feats, dtype=float)
        self.target = wp.array(y, dtype=float)
        init = init_params(hidden, feats.shape[1])
        self.params = {k: wp.array(v, dtype=float, requires_grad=True) for k, v in init.items()}
        self.h = wp.zeros((self.n, hidden), dtype=float, requires_grad=True)
        self.hm = wp.zeros((self.n, hidden), dtype=float, requires_grad=True)
        self.pred = wp.zeros(self.n, dtype=float, requires_grad=True)
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)

    def parameters(self):
        return list(self.params.values())

    def forward(self):
        p = self.params
        self.loss.zero_()
        wp.launch(dense_tanh, dim=(self.n, self.hidden), inputs=[self.feats, p["w1"], p["b1"]], outputs=[self.h])
        wp.launch(modulate, dim=(self.n, self.hidden), inputs=[self.h, p["gain"]], outputs=[self.hm])
        wp.launch(readout, dim=self.n, inputs=[self.hm, p["w2"], p["b2"]], outputs=[self.pred])
        wp.launch(mse, dim=self.n, inputs=[self.pred, self.target], outputs=[self.loss])
        return self.loss


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.02)
    args = parser.parse_args(argv)

    field = NeuralField()
    params = field.parameters()
    opt = warp.optim.Adam(params, lr=args.lr)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = field.forward()
        tape.backward(loss)
        opt.step([p.grad for p in params])
        tape.zero()
        if it % 20 == 0:
            print(f"[{it:04d}] loss={loss.numpy()[0]:.5f}")


if __name__ == "__main__":
    main()
