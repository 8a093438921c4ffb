import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "drone_thrust_pretape")
rec.install(kernel_keys=("sgd",))
m = rec.load_module(F)
rec.run_script(F)
heading, goal = m.setup()
def loss(p):
    gain, drag = p[:m.N], p[m.N:]
    x = np.zeros((m.N, 2)); v = np.zeros((m.N, 2))
    for _ in range(m.STEPS):
        sp = np.linalg.norm(v, axis=1)
        a = gain[:, None] * heading + np.array([0.0, -9.81]) - (drag * sp)[:, None] * v
        v = v + m.DT * a
        x = x + m.DT * v
    return np.sum((x - goal) ** 2)
R = rec.REC
rows = []
for it in (1, 2, 5):
    rg, rd = R[2 * (it - 1)], R[2 * (it - 1) + 1]
    p = np.concatenate([rg[2][0], rd[2][0]])
    ad = np.concatenate([rg[2][1], rd[2][1]])
    rows.append((it, ad, rec.cdiff(loss, p)))
rec.report("drone_thrust_pretape (gain[0:6], drag[6:12])", rows)
for it, ad, tr in rows: print(it, "gain ad", ad[:6], "gain true", tr[:6])
