"""Fit pendulum lengths so the final angles match a measurement.

Memory-light gradient: the forward keeps only segment checkpoints; the backward replays each
segment under its own tape, last segment first, and hands the state adjoint to the previous one."""
import numpy as np
import warp as wp

from pendulum import angle_error, descend, swing

N = 6
SEGMENTS = 4
SEG_STEPS = 12
DT = 0.02
DAMPING = 0.1


def start():
    return np.linspace(0.4, 1.4, N), np.zeros(N)


def final_angle_np(length):
    th, om = start()
    for _ in range(SEGMENTS * SEG_STEPS):
        om = om + DT * (-9.81 / length * np.sin(th) - DAMPING * om)
        th = th + DT * om
    return th


L_TRUE = np.linspace(0.6, 1.1, N)


class SegmentRunner:
    def __init__(self):
        self.th = [wp.zeros(N, dtype=float, requires_grad=True) for _ in range(2)]
        self.om = [wp.zeros(N, dtype=float, requires_grad=True) for _ in range(2)]

    def run(self, th0, om0, length):
        wp.copy(self.th[0], th0)
        wp.copy(self.om[0], om0)
        for k in range(SEG_STEPS):
            a, b = k % 2, (k + 1) % 2
            wp.launch(swing, dim=N, inputs=[self.th[a], self.om[a], length, DAMPING, DT],
                      outputs=[self.th[b], self.om[b]])
        return self.th[SEG_STEPS % 2], self.om[SEG_STEPS % 2]


def main(iters=12, lr=0.2):
    target = wp.array(final_angle_np(L_TRUE), dtype=float)
    length = wp.array(np.full(N, 0.85), dtype=float, requires_grad=True)
    runner = SegmentRunner()
    th0_np, om0_np = start()
    for it in range(iters):
        # forward: store checkpoints only
        ck_th = [wp.array(th0_np, dtype=float, requires_grad=True)]
        ck_om = [wp.array(om0_np, dtype=float, requires_grad=True)]
        for s in range(SEGMENTS):
            th_end, om_end = runner.run(ck_th[s], ck_om[s], length)
            ck_th.append(wp.clone(th_end, requires_grad=True))
            ck_om.append(wp.clone(om_end, requires_grad=True))

        # backward, segment by segment
        adj_th = adj_om = None
        loss_value = 0.0
        for s in reversed(range(SEGMENTS)):
            tape = wp.Tape()
            with tape:
                th_end, om_end = runner.run(ck_th[s], ck_om[s], length)
                if s == SEGMENTS - 1:
                    loss = wp.zeros(1, dtype=float, requires_grad=True)
                    wp.launch(angle_error, dim=N, inputs=[th_end, target], outputs=[loss])
            if s == SEGMENTS - 1:
                tape.backward(loss)
                loss_value = float(loss.numpy()[0])
            else:
                tape.backward(grads={th_end: adj_th, om_end: adj_om})
            adj_th = ck_th[s].grad
            adj_om = ck_om[s].grad
            for buf in runner.th + runner.om:
                buf.grad.zero_()

        wp.launch(descend, dim=N, inputs=[length, length.grad, lr, 0.1])
        length.grad.zero_()
        print(f"iter {it:3d} loss {loss_value:.6e}")


if __name__ == "__main__":
    main()
