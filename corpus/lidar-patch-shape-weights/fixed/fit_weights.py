import argparse
from dataclasses import dataclass

import numpy as np
import warp as wp
import warp.optim

K = 4


@dataclass
class Config:
    patches: int = 6
    epochs: int = 40
    lr: float = 0.01
    momentum: float = 0.5
    seed: int = 17


@wp.kernel
def patch_covariance(
    offsets: wp.array(dtype=wp.vec2),
    weights: wp.array(dtype=wp.float32),
    cov: wp.array(dtype=wp.mat22),
):
    p = wp.tid()
    c = wp.mat22()
    for k in range(K):
        d = offsets[p * K + k]
        w = weights[p * K + k]
        c[0, 0] += w * d[0] * d[0]
        c[0, 1] += w * d[0] * d[1]
        c[1, 1] += w * d[1] * d[1]
    c[1, 0] = c[0, 1]
    cov[p] = c


@wp.kernel
def shape_loss(cov: wp.array(dtype=wp.mat22), target: wp.array(dtype=wp.mat22), loss: wp.array(dtype=wp.float32)):
    p = wp.tid()
    e = cov[p] - target[p]
    wp.atomic_add(loss, 0, wp.ddot(e, e))


def make_patches(cfg):
    rng = np.random.default_rng(cfg.seed)
    offsets = rng.normal(0.0, 1.0, (cfg.patches * K, 2)).astype(np.float32)
    w_true = rng.uniform(0.2, 1.0, cfg.patches * K)
    target = np.zeros((cfg.patches, 2, 2), dtype=np.float32)
    for p in range(cfg.patches):
        d = offsets[p * K:(p + 1) * K]
        target[p] = (w_true[p * K:(p + 1) * K, None, None] * d[:, :, None] * d[:, None, :]).sum(0)
    return offsets, target


def build(cfg):
    offsets, target = make_patches(cfg)
    model = {
        "offsets": wp.array(offsets, dtype=wp.vec2),
        "target": wp.array(target, dtype=wp.mat22),
        "weights": wp.array(np.full(cfg.patches * K, 0.5, dtype=np.float32), requires_grad=True),
        "cov": wp.zeros(cfg.patches, dtype=wp.mat22, requires_grad=True),
    }
    return model


def loss_of(model, cfg):
    loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    wp.launch(patch_covariance, dim=cfg.patches, inputs=[model["offsets"], model["weights"]], outputs=[model["cov"]])
    wp.launch(shape_loss, dim=cfg.patches, inputs=[model["cov"], model["target"]], outputs=[loss])
    return loss


def train_epoch(model, cfg, opt):
    tape = wp.Tape()
    with tape:
        loss = loss_of(model, cfg)
    tape.backward(loss)
    opt.step([model["weights"].grad])
    tape.zero()
    return loss.numpy()[0]


def main():
    ap = argparse.ArgumentParser(description="fit neighbour weights of lidar patches to reference shape tensors")
    ap.add_argument("--patches", type=int, default=Config.patches)
    ap.add_argument("--epochs", type=int, default=Config.epochs)
    ap.add_argument("--lr", type=float, default=Config.lr)
    ap.add_argument("--seed", type=int, default=Config.seed)
    a = ap.parse_args()
    cfg = Config(patches=a.patches, epochs=a.epochs, lr=a.lr, seed=a.seed)

    model = build(cfg)
    opt = warp.optim.SGD([model["weights"]], lr=cfg.lr, momentum=cfg.momentum)
    for epoch in range(cfg.epochs):
        loss = train_epoch(model, cfg, opt)
        if epoch % 5 == 0:
            print(f"epoch {epoch:3d}  loss {loss:.5f}")


if __name__ == "__main__":
    main()
