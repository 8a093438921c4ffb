import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "spring_bank_swap")
rec.install(kernel_keys=("descend",))
m = rec.load_module(F)
rec.run_script(F)
obs = m.observe(m.K_TRUE)

def loss(k):
    x, v = m.initial_state()
    L = 0.0
    for t in range(m.STEPS):
        v = v + 0.02 * (-k * x - 0.3 * v)
        x = x + 0.02 * v
        L += np.sum((x - obs[t]) ** 2) / (m.N * m.STEPS)
    return L

rows = []
for it, r in enumerate(rec.REC, 1):
    if it in (1, 2, 3, 4, 8):
        k, g = r[2][0], r[2][1]
        rows.append((it, g, rec.cdiff(loss, k)))
rec.report("spring_bank_swap", rows)
