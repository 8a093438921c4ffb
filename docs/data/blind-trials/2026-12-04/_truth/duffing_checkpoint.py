import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "duffing_checkpoint")
rec.install(kernel_keys=("update",))
m = rec.load_module(F)
rec.run_script(F)
ref = m.observations(m.K_TRUE)
loss = lambda k: sum(np.sum((a - b) ** 2) / m.N for a, b in zip(m.observations(k), ref))
rows = [(it, r[2][1], rec.cdiff(loss, r[2][0])) for it, r in enumerate(rec.REC, 1) if it in (1, 2, 5, 10)]
rec.report("duffing_checkpoint", rows)
