import numpy as np
import warp as wp


@wp.kernel
def diffuse(
    temp: wp.array(dtype=wp.float64),
    log_kappa: wp.array(dtype=wp.float64),
    left: wp.float64,
    right: wp.float64,
    r: wp.float64,
    out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = temp.shape[0]
    tl = left
    tr = right
    if i > 0:
        tl = temp[i - 1]
    if i < n - 1:
        tr = temp[i + 1]
    kl = wp.exp(log_kappa[i])
    kr = kl
    if i > 0:
        kl = wp.float64(0.5) * (kl + wp.exp(log_kappa[i - 1]))
    if i < n - 1:
        kr = wp.float64(0.5) * (kr + wp.exp(log_kappa[i + 1]))
    out[i] = temp[i] + r * (kl * (tl - temp[i]) + kr * (tr - temp[i]))


@wp.kernel
def probe_misfit(
    temp: wp.array(dtype=wp.float64),
    probes: wp.array(dtype=wp.int32),
    readings: wp.array2d(dtype=wp.float64),
    frame: int,
    w: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    j = wp.tid()
    e = temp[probes[j]] - readings[frame, j]
    wp.atomic_add(loss, 0, w * e * e)


class Rod:
    def __init__(self, cells, steps, probes, device="cpu", seed=11):
        self.cells, self.steps, self.device = cells, steps, device
        rng = np.random.default_rng(seed)
        self.r = 0.2
        self.left, self.right = 1.0, 0.0
        self.probes = wp.array(np.asarray(probes, dtype=np.int32), device=device)
        self.t0 = wp.array(np.linspace(0.6, 0.1, cells) + 0.02 * rng.standard_normal(cells), dtype=wp.float64, device=device)
        true_kappa = 0.9 + 0.5 * np.sin(np.linspace(0.0, 3.0, cells))
        self.readings = wp.array(self._reference(np.log(true_kappa), rng), dtype=wp.float64, device=device)
        self.frames = [self.t0] + [wp.zeros(cells, dtype=wp.float64, device=device, requires_grad=True) for _ in range(steps)]
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)

    def _reference(self, log_kappa, rng):
        k = np.exp(log_kappa)
        kl = k.copy()
        kr = k.copy()
        kl[1:] = 0.5 * (k[1:] + k[:-1])
        kr[:-1] = 0.5 * (k[:-1] + k[1:])
        t = self.t0.numpy().copy()
        out = []
        idx = self.probes.numpy()
        for _ in range(self.steps):
            tl = np.concatenate([[self.left], t[:-1]])
            tr = np.concatenate([t[1:], [self.right]])
            t = t + self.r * (kl * (tl - t) + kr * (tr - t))
            out.append(t[idx] + 0.002 * rng.standard_normal(len(idx)))
        return np.array(out)

    def run(self, log_kappa):
        self.loss.zero_()
        w = wp.float64(1.0 / (self.steps * self.probes.shape[0]))
        for s in range(self.steps):
            wp.launch(
                diffuse,
                dim=self.cells,
                inputs=[self.frames[s], log_kappa, wp.float64(self.left), wp.float64(self.right), wp.float64(self.r)],
                outputs=[self.frames[s + 1]],
                device=self.device,
            )
            wp.launch(
                probe_misfit,
                dim=self.probes.shape[0],
                inputs=[self.frames[s + 1], self.probes, self.readings, s, w],
                outputs=[self.loss],
                device=self.device,
            )
        return self.loss
