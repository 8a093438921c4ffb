# Fit w of a tanh model with warp.optim.Adam. One wp.Tape() is made before the loop and re-recorded
# every iteration; tape.zero() is called but never tape.reset(), and the intermediates are allocated
# once. BUG (double_count): from iteration 2 backward replays the old launches too (2x, 3x, ...).
import numpy as np
import warp as wp
from warp.optim import Adam

wp.init()
N = 12

@wp.kernel
def forward(w: wp.array(dtype=float), x: wp.array(dtype=float), h: wp.array(dtype=float)):
    i = wp.tid()
    h[i] = wp.tanh(w[i] * x[i])

@wp.kernel
def loss_k(h: wp.array(dtype=float), t: wp.array(dtype=float), L: wp.array(dtype=float)):
    i = wp.tid()
    d = h[i] - t[i]
    wp.atomic_add(L, 0, d * d)

def main(iters=30):
    rng = np.random.default_rng(3)
    x = wp.array(rng.uniform(0.5, 1.5, N), dtype=float)
    t = wp.array(np.tanh(rng.uniform(-1, 1, N) * x.numpy()), dtype=float)
    w = wp.array(rng.uniform(-0.5, 0.5, N), dtype=float, requires_grad=True)
    h = wp.zeros(N, dtype=float, requires_grad=True)
    L = wp.zeros(1, dtype=float, requires_grad=True)
    opt = Adam([w], lr=0.05)
    tape = wp.Tape()
    for it in range(iters):
        L.zero_()
        with tape:
            wp.launch(forward, dim=N, inputs=[w, x, h])
            wp.launch(loss_k, dim=N, inputs=[h, t, L])
        tape.backward(L)
        opt.step([w.grad])
        tape.zero()
        print(f"iter {it} loss {L.numpy()[0]:.6f}")

if __name__ == "__main__":
    main()
