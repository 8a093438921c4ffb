import numpy as np

import calibrate


class Problem:
    def __init__(self, device, poses):
        self.cal = calibrate.LinkCalibration(calibrate.parse_args(["--poses", str(poses)]), device)
        self.params = self.cal.params

    def objective(self):
        return self.cal.loss()

    def gradient(self):
        return self.cal.compute_gradients()

    def reference_gradient(self):
        c = self.cal
        q = c.joints_np
        dlen = c.dlen.numpy().astype(np.float64)
        doff = c.doff.numpy().astype(np.float64)
        lengths = calibrate.NOMINAL + dlen
        ang = np.cumsum(q + doff, axis=1)
        r = calibrate.forward_np(q, lengths, doff) - c.tips_np
        g_len = np.zeros(3)
        g_off = np.zeros(3)
        for j in range(3):
            g_len[j] = np.mean(2.0 * (r[:, 0] * np.cos(ang[:, j]) + r[:, 1] * np.sin(ang[:, j])))
            dx = -(lengths[j:] * np.sin(ang[:, j:])).sum(axis=1)
            dy = (lengths[j:] * np.cos(ang[:, j:])).sum(axis=1)
            g_off[j] = np.mean(2.0 * (r[:, 0] * dx + r[:, 1] * dy))
        return {"dlen": g_len + c.l1 * np.where(dlen >= 0.0, 1.0, -1.0),
                "doff": g_off + c.l1 * np.where(doff >= 0.0, 1.0, -1.0)}

    def train(self, iterations):
        return [self.cal.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    return Problem(device, 2048 if scale == "production" else 64)
