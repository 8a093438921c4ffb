import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "logistic_momentum_prox")
rec.install(kernel_keys=("heavy_ball",))
m = rec.load_module(F)
rec.run_script(F)
x, y = m.dataset()
R = rec.REC
rows = []
for it in (1, 2, 3, 5, 12):
    w = R[it - 1][2][0]
    anchor = R[it - 2][2][0] if it > 1 else w.copy()
    def f(p):
        z = x @ p[:2] + p[2]
        return np.mean(np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0) - y * z) + m.RHO * np.sum((p - anchor) ** 2)
    rows.append((it, R[it - 1][2][1], rec.cdiff(f, w)))
rec.report("logistic_momentum_prox", rows)
