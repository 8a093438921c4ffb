import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "fir_quant_ste")
rec.install(kernel_keys=("sgd",))
m = rec.load_module(F)
rec.run_script(F)
u, d = m.signals()
def f_q(q):  # loss as a function of the quantised taps
    return np.mean((np.convolve(u, q)[:m.T] - d) ** 2)
def f_h(h):
    return f_q(np.round(h / m.STEP) * m.STEP)
rows = []; rows_fd = []
for it, r in enumerate(rec.REC, 1):
    if it in (1, 2, 5, 20):
        h = r[2][0]; q = np.round(h / m.STEP) * m.STEP
        rows.append((it, r[2][1], rec.cdiff(f_q, q)))   # surrogate (straight-through) truth
        rows_fd.append((it, r[2][1], rec.cdiff(f_h, h, 1e-6)))
rec.report("fir_quant_ste: vs straight-through surrogate dL/dq at q=round(h)", rows)
rec.report("fir_quant_ste: vs central differences of the quantised objective", rows_fd)
