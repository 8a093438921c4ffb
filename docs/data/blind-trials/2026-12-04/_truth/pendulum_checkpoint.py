import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "pendulum_checkpoint")
rec.install(kernel_keys=("descend",))
m = rec.load_module(F)
rec.run_script(F)
tgt = m.final_angle_np(m.L_TRUE)
loss = lambda L: np.sum((m.final_angle_np(L) - tgt) ** 2)
rows = [(it, r[2][1], rec.cdiff(loss, r[2][0])) for it, r in enumerate(rec.REC, 1) if it in (1, 2, 5, 10)]
rec.report("pendulum_checkpoint", rows)
