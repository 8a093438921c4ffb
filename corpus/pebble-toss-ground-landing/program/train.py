import argparse

import numpy as np
import warp as wp

import losses
import sim

DT = 2.0e-3


def make_scene(n_balls, device, seed=7):
    rng = np.random.default_rng(seed)
    start = np.stack([np.linspace(0.0, 0.5, n_balls), 0.4 + 0.3 * rng.random(n_balls)], axis=1)
    throw = np.stack([1.0 + 0.5 * rng.random(n_balls), 0.5 + 1.5 * rng.random(n_balls)], axis=1)
    goal = np.stack([start[:, 0] + 0.6 + 0.2 * rng.random(n_balls), np.full(n_balls, 0.05)], axis=1)
    q0 = wp.array(start, dtype=wp.vec2d, device=device)
    qd0 = wp.array(throw, dtype=wp.vec2d, device=device, requires_grad=True)
    target = wp.array(goal, dtype=wp.vec2d, device=device)
    return q0, qd0, target


def forward(q0, qd0, target, steps):
    q, _ = sim.simulate(q0, qd0, steps, DT)
    return losses.landing_loss(q, target)


def iteration(q0, qd0, target, steps):
    tape = wp.Tape()
    with tape:
        loss = forward(q0, qd0, target, steps)
    tape.backward(loss=loss)
    grad = qd0.grad.numpy().copy()
    qd0.grad.zero_()
    return float(loss.numpy()[0]), grad


def sgd_momentum(qd0, grad, velocity, lr=0.05, beta=0.8):
    velocity *= beta
    velocity -= lr * grad
    qd0.assign(qd0.numpy() + velocity)


def fit(q0, qd0, target, steps, iterations, verbose=False):
    velocity = np.zeros(qd0.shape + (2,))
    history = []
    for it in range(iterations):
        value, grad = iteration(q0, qd0, target, steps)
        sgd_momentum(qd0, grad, velocity)
        history.append(value)
        if verbose:
            print(f"{it:3d} loss={value:.5f} grad_norm={np.linalg.norm(grad):.4f}")
    return history


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--balls", type=int, default=6)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    q0, qd0, target = make_scene(args.balls, args.device)
    fit(q0, qd0, target, args.steps, args.iterations, verbose=True)
    traj = []
    sim.simulate(q0, qd0, args.steps, DT, keep=traj)
    ys = np.array([t.numpy()[:, 1] for t in traj])
    print("lowest point per ball:", ys.min(axis=0))


if __name__ == "__main__":
    main()
