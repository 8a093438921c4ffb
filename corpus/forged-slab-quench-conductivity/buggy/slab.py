import warp as wp


@wp.kernel
def conduct(
    t_in: wp.array(dtype=wp.float64),
    kappa: wp.array(dtype=wp.float64),
    bath: wp.float64,
    dt: wp.float64,
    t_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = t_in.shape[0]
    left = bath
    if i > 0:
        left = t_in[i - 1]
    flux = kappa[i] * (left - t_in[i])
    if i < n - 1:
        flux += kappa[i + 1] * (t_in[i + 1] - t_in[i])
    t_out[i] = t_in[i] + dt * flux


@wp.kernel
def probe_misfit(t: wp.array(dtype=wp.float64), probe: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = t[i] - probe[i]
    wp.atomic_add(out, 0, d * d)


class CheckpointedSlab:
    def __init__(self, cells, segments, steps, dt=0.1, bath=0.0):
        self.cells = cells
        self.segments = segments
        self.steps = steps
        self.dt = wp.float64(dt)
        self.bath = wp.float64(bath)

    def run(self, t0, kappa):
        bufs = [t0, wp.zeros(self.cells, dtype=wp.float64, requires_grad=True)]
        for k in range(self.steps):
            wp.launch(conduct, dim=self.cells, inputs=[bufs[k % 2], kappa, self.bath, self.dt],
                      outputs=[bufs[(k + 1) % 2]])
        return bufs[self.steps % 2]

    def loss_and_grad(self, t0, kappa, probe):
        marks = [t0]
        for s in range(self.segments - 1):
            marks.append(wp.clone(self.run(wp.clone(marks[-1], requires_grad=True), kappa)))
        adj = None
        for s in reversed(range(self.segments)):
            start = wp.clone(marks[s], requires_grad=True)
            tape = wp.Tape()
            with tape:
                end = self.run(start, kappa)
                if s == self.segments - 1:
                    misfit = wp.zeros(1, dtype=wp.float64, requires_grad=True)
                    wp.launch(probe_misfit, dim=self.cells, inputs=[end, probe], outputs=[misfit])
            if adj is None:
                tape.backward(misfit)
            else:
                tape.backward(grads={end: adj})
            adj = wp.clone(start.grad)
        return misfit.numpy()[0]
