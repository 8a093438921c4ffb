import warp as wp


@wp.kernel
def loop_source(power: wp.array(dtype=wp.float64), cells_per_loop: int, q: wp.array(dtype=wp.float64)):
    i = wp.tid()
    q[i] = power[i // cells_per_loop]


@wp.kernel
def jacobi_sweep(
    t_in: wp.array(dtype=wp.float64),
    q: wp.array(dtype=wp.float64),
    h2: wp.float64,
    loss_rate: wp.float64,
    t_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = t_in.shape[0]
    left = wp.float64(0.0)
    right = wp.float64(0.0)
    if i > 0:
        left = t_in[i - 1]
    if i < n - 1:
        right = t_in[i + 1]
    t_out[i] = (left + right + h2 * q[i]) / (wp.float64(2.0) + h2 * loss_rate)


class JacobiSolver:
    def __init__(self, cells, loops, sweeps, h2=0.5, loss_rate=0.4):
        self.cells = cells
        self.loops = loops
        self.sweeps = sweeps
        self.h2 = wp.float64(h2)
        self.loss_rate = wp.float64(loss_rate)
        self.tape = None

    def solve(self, power):
        self.tape = wp.Tape()
        with self.tape:
            q = wp.zeros(self.cells, dtype=wp.float64, requires_grad=True)
            wp.launch(loop_source, dim=self.cells, inputs=[power, self.cells // self.loops], outputs=[q])
            t = wp.zeros(self.cells, dtype=wp.float64, requires_grad=True)
            for _ in range(self.sweeps):
                t_next = wp.zeros(self.cells, dtype=wp.float64, requires_grad=True)
                wp.launch(jacobi_sweep, dim=self.cells, inputs=[t, q, self.h2, self.loss_rate], outputs=[t_next])
                t = t_next
        return t

    def backward(self, t, adj_t):
        self.tape.backward(grads={t: adj_t})

    def clear(self):
        self.tape.reset()
