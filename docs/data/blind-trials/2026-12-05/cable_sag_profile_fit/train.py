"""Reconstruct the sag profile of a suspended cable from a few laser range readings.

Node heights are fitted to the readings (linear interpolation between nodes) together with the
cable's potential energy: tension between neighbouring nodes plus its weight.
"""
import numpy as np
import warp as wp

wp.init()

NODES = 16
SPAN = 30.0
TENSION = 1.0
WEIGHT = 0.05
LR = 0.05


@wp.kernel
def cable_energy(y: wp.array(dtype=float), dx: float, tension: float, weight: float,
                 energy: wp.array(dtype=float)):
    i = wp.tid()
    e = weight * dx * y[i]
    if i < y.shape[0] - 1:
        s = (y[i + 1] - y[i]) / dx
        e = e + 0.5 * tension * dx * s * s
    wp.atomic_add(energy, 0, e)


@wp.kernel
def range_misfit(y: wp.array(dtype=float), node: wp.array(dtype=int), frac: wp.array(dtype=float),
                 reading: wp.array(dtype=float), loss: wp.array(dtype=float)):
    j = wp.tid()
    k = node[j]
    a = frac[j]
    h = (1.0 - a) * y[k] + a * y[k + 1]
    d = h - reading[j]
    wp.atomic_add(loss, 0, d * d)


@wp.kernel
def descend(y: wp.array(dtype=float), g_data: wp.array(dtype=float), g_energy: wp.array(dtype=float),
            lr: float):
    i = wp.tid()
    y[i] = y[i] - lr * (g_data[i] + g_energy[i])


def energy_gradient(y, dx):
    energy = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(cable_energy, dim=NODES, inputs=[y, dx, TENSION, WEIGHT], outputs=[energy])
    tape.backward(energy)
    g = wp.clone(y.grad)
    tape.zero()
    return g


def main():
    dx = SPAN / (NODES - 1)
    s = np.array([0.7, 4.1, 9.5, 15.2, 21.8, 26.0, 29.3])
    node = np.minimum((s / dx).astype(np.int32), NODES - 2)
    frac = (s - node * dx) / dx
    truth = -2.5 * np.sin(np.pi * s / SPAN) ** 1.2
    readings = truth + np.array([0.03, -0.02, 0.01, 0.0, -0.04, 0.02, 0.01])

    node_wp = wp.array(node, dtype=int)
    frac_wp = wp.array(frac.astype(np.float32), dtype=float)
    read_wp = wp.array(readings.astype(np.float32), dtype=float)

    y = wp.zeros(NODES, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    energy = wp.zeros(1, dtype=float)

    g_energy = energy_gradient(y, dx)

    for it in range(40):
        energy.zero_()
        wp.launch(cable_energy, dim=NODES, inputs=[y, dx, TENSION, WEIGHT], outputs=[energy])
        loss.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(range_misfit, dim=len(s), inputs=[y, node_wp, frac_wp, read_wp], outputs=[loss])
        tape.backward(loss)
        wp.launch(descend, dim=NODES, inputs=[y, y.grad, g_energy, LR])
        tape.zero()
        if it % 5 == 0 or it == 39:
            data = loss.numpy()[0]
            pot = energy.numpy()[0]
            print(f"iter {it:3d}  total {data + pot:.6e}  data {data:.6e}  energy {pot:.6e}")
    print("heights", np.round(y.numpy(), 3))


if __name__ == "__main__":
    main()
