"""Tune the heater power and duty cycle of five greenhouse zones to hold 21 C through a cold night.

The heater relays switch in whole tenths of the control period, so the delivered mean power is
power * floor(10 * duty) / 10.
"""
import numpy as np
import warp as wp

wp.init()

ZONES = 5
STEPS = 48
DT = 0.25
LOSS_COEFF = 0.3
CAPACITY = 2.0
SETPOINT = 21.0


@wp.kernel
def heat_balance(temp: wp.array(dtype=float), power: wp.array(dtype=float), duty: wp.array(dtype=float),
                 outside: float, dt: float, temp_out: wp.array(dtype=float)):
    i = wp.tid()
    slots = wp.floor(duty[i] * 10.0)
    delivered = power[i] * slots / 10.0
    dT = (delivered - LOSS_COEFF * (temp[i] - outside)) / CAPACITY
    temp_out[i] = temp[i] + dt * dT


@wp.kernel
def comfort(temp: wp.array(dtype=float), setpoint: float, w: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = temp[i] - setpoint
    wp.atomic_add(loss, 0, w * d * d)


@wp.kernel
def descend(p: wp.array(dtype=float), g: wp.array(dtype=float), lr: float, lo: float, hi: float):
    i = wp.tid()
    p[i] = wp.clamp(p[i] - lr * g[i], lo, hi)


def outside_temperature(t):
    return float(8.0 - 4.0 * np.sin(np.pi * t / STEPS))


def main():
    start = np.array([18.0, 19.5, 17.0, 20.0, 18.5], dtype=np.float32)
    power = wp.array(np.full(ZONES, 6.0, dtype=np.float32), dtype=float, requires_grad=True)
    duty = wp.array(np.array([0.43, 0.57, 0.36, 0.72, 0.64], dtype=np.float32), dtype=float, requires_grad=True)
    temps = [wp.zeros(ZONES, dtype=float, requires_grad=True) for _ in range(STEPS + 1)]
    temps[0].assign(start)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    w = 1.0 / (STEPS * ZONES)

    for it in range(30):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            for t in range(STEPS):
                wp.launch(heat_balance, dim=ZONES, inputs=[temps[t], power, duty, outside_temperature(t), DT],
                          outputs=[temps[t + 1]])
                wp.launch(comfort, dim=ZONES, inputs=[temps[t + 1], SETPOINT, w], outputs=[loss])
        tape.backward(loss)
        wp.launch(descend, dim=ZONES, inputs=[power, power.grad, 0.5, 0.0, 40.0])
        wp.launch(descend, dim=ZONES, inputs=[duty, duty.grad, 0.05, 0.0, 1.0])
        tape.zero()
        if it % 5 == 0 or it == 29:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6e}")
    print("power", np.round(power.numpy(), 3), "duty", np.round(duty.numpy(), 3))


if __name__ == "__main__":
    main()
