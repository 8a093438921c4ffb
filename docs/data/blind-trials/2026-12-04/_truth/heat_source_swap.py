import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "heat_source_swap")
rec.install(kernel_keys=("gd_step",))
m = rec.load_module(F)
rec.run_script(F)
tgt = m.simulate_np(m.Q_TRUE)
loss = lambda q: np.mean((m.simulate_np(q) - tgt) ** 2)
rows = [(it, r[2][1], rec.cdiff(loss, r[2][0])) for it, r in enumerate(rec.REC, 1) if it in (1, 2, 3, 4, 10)]
rec.report("heat_source_swap", rows)
