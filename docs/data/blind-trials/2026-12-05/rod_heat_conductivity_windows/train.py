"""Recover the cell-wise thermal conductivity of a metal rod from thermocouple snapshots.

The rod is simulated with an explicit finite-volume scheme; the 60-step record is processed in
three windows of 20 steps, each compared with the snapshot taken at its end.
"""
import numpy as np
import warp as wp

wp.init()

CELLS = 12
WINDOW = 20
N_WINDOWS = 3
DT = 0.2
LR = 0.8


@wp.kernel
def conduct(temp: wp.array(dtype=wp.float64), kappa: wp.array(dtype=wp.float64), dt: wp.float64,
            temp_out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    n = temp.shape[0]
    t = temp[i]
    flux = wp.float64(0.0)
    if i > 0:
        k_left = wp.float64(0.5) * (kappa[i - 1] + kappa[i])
        flux = flux + k_left * (temp[i - 1] - t)
    if i < n - 1:
        k_right = wp.float64(0.5) * (kappa[i] + kappa[i + 1])
        flux = flux + k_right * (temp[i + 1] - t)
    temp_out[i] = t + dt * flux


@wp.kernel
def snapshot_misfit(temp: wp.array(dtype=wp.float64), snap: wp.array(dtype=wp.float64),
                    scale: wp.float64, loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = temp[i] - snap[i]
    wp.atomic_add(loss, 0, scale * d * d)


def simulate_reference(temp0, kappa):
    temp = temp0.copy()
    snaps = []
    for w in range(N_WINDOWS):
        for _ in range(WINDOW):
            k_face = 0.5 * (kappa[:-1] + kappa[1:])
            flux = np.zeros_like(temp)
            flux[:-1] += k_face * (temp[1:] - temp[:-1])
            flux[1:] += k_face * (temp[:-1] - temp[1:])
            temp = temp + DT * flux
        snaps.append(temp.copy())
    return snaps


def main():
    x = np.linspace(0.0, 1.0, CELLS)
    temp0_np = 20.0 + 80.0 * np.exp(-((x - 0.35) / 0.15) ** 2)
    kappa_true = 1.0 + 0.4 * np.sin(2.0 * np.pi * x)
    snaps = [wp.array(s, dtype=wp.float64) for s in simulate_reference(temp0_np, kappa_true)]

    kappa = wp.array(np.full(CELLS, 1.0), dtype=wp.float64, requires_grad=True)
    temps = [wp.zeros(CELLS, dtype=wp.float64, requires_grad=True) for _ in range(WINDOW + 1)]
    losses = [wp.zeros(1, dtype=wp.float64, requires_grad=True) for _ in range(N_WINDOWS)]
    scale = 1.0 / (CELLS * 100.0)

    for it in range(25):
        temps[0].assign(temp0_np)
        total = 0.0
        for w in range(N_WINDOWS):
            losses[w].zero_()
            tape = wp.Tape()
            with tape:
                for t in range(WINDOW):
                    wp.launch(conduct, dim=CELLS, inputs=[temps[t], kappa, wp.float64(DT)], outputs=[temps[t + 1]])
                wp.launch(snapshot_misfit, dim=CELLS, inputs=[temps[WINDOW], snaps[w], wp.float64(scale)],
                          outputs=[losses[w]])
            tape.backward(losses[w])
            total += float(losses[w].numpy()[0])
            wp.copy(temps[0], temps[WINDOW])
            for a in temps:
                a.grad.zero_()
        g = kappa.grad.numpy()
        kappa.assign(np.clip(kappa.numpy() - LR * g, 0.2, 2.0))
        kappa.grad.zero_()
        if it % 5 == 0 or it == 24:
            print(f"iter {it:3d}  loss {total:.8e}")
    print("kappa", np.round(kappa.numpy(), 3))


if __name__ == "__main__":
    main()
