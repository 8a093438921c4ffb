import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "softplus_net_custom")
rec.install()
m = rec.load_module(F)
rec.run_script(F)
x, t = m.dataset()
def f(p):
    w, b, v = p[:6], p[6:12], p[12:]
    y = np.logaddexp(0, np.outer(x, w) + b) @ v
    d = np.abs(y - t)
    return np.mean(np.where(d < 0.5, 0.5 * d * d, 0.5 * (d - 0.25)))
rows = [(it, np.concatenate(r[3]), rec.cdiff(f, np.concatenate(r[2]))) for it, r in enumerate(rec.REC, 1) if it in (1, 2, 5, 20)]
rec.report("softplus_net_custom", rows)
