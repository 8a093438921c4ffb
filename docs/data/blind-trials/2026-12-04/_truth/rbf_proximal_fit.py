import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "rbf_proximal_fit")
rec.install(kernel_keys=("gd",))
m = rec.load_module(F)
rec.run_script(F)
x, y = m.dataset(); c = np.linspace(0, 1, m.M)
Phi = np.exp(-0.5 * ((x[:, None] - c[None, :]) / m.WIDTH) ** 2)
R = rec.REC
rows = []
for it in (1, 2, 3, 5, 10):
    w = R[it - 1][2][0]
    anchor = R[it - 2][2][0] if it > 1 else w.copy()   # the iterate before the previous update
    f = lambda p: np.mean((np.tanh(Phi @ p) - y) ** 2) + m.RHO * np.sum((p - anchor) ** 2)
    rows.append((it, R[it - 1][2][1], rec.cdiff(f, w)))
rec.report("rbf_proximal_fit", rows)
