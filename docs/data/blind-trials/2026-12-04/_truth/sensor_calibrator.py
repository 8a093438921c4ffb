import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "sensor_calibrator")
rec.install(kernel_keys=("sgd",))
m = rec.load_module(F)
rec.run_script(F)
raw, sensor, ref = m.readings()
def f(p):
    g, o, c = p[:4], p[4:8], p[8:]
    return np.mean((g[sensor] * raw + o[sensor] + c[sensor] * raw ** 2 - ref) ** 2)
R = rec.REC
rows = []
for it in (1, 2, 5, 20):
    rr = R[3 * (it - 1): 3 * it]
    p = np.concatenate([r[2][0] for r in rr]); ad = np.concatenate([r[2][1] for r in rr])
    rows.append((it, ad, rec.cdiff(f, p)))
rec.report("sensor_calibrator (objective = printed mean)", rows)
