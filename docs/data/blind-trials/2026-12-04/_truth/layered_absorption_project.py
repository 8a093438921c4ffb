import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "layered_absorption_project")
rec.install()
m = rec.load_module(F)
rec.run_script(F)
path = m.geometry(); meas = m.I0 * np.exp(-(path @ m.MU_TRUE))
def loss(mu):
    out = m.I0 * np.exp(-(path @ mu))
    return np.sum((np.log(out) - np.log(meas)) ** 2 + 0.1 * (out - meas) ** 2)
rows = [(it, r[3][0], rec.cdiff(loss, r[2][0])) for it, r in enumerate(rec.REC, 1) if it in (1, 2, 3, 10, 25)]
rec.report("layered_absorption_project", rows)
print("min mu seen", min(r[2][0].min() for r in rec.REC))
