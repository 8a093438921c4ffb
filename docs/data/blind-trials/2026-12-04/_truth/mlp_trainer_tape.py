import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "mlp_trainer_tape")
rec.install()
m = rec.load_module(F)
rec.run_script(F)
x, t = m.dataset()
def f(p):
    w1, b1, w2 = p[:6], p[6:12], p[12:]
    h = np.tanh(np.outer(x, w1) + b1)
    return np.mean((h @ w2 - t) ** 2)
rows = [(it, np.concatenate(r[3]), rec.cdiff(f, np.concatenate(r[2]))) for it, r in enumerate(rec.REC, 1) if it in (1, 2, 3, 5, 10)]
rec.report("mlp_trainer_tape", rows)
