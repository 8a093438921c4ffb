import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "cannon_adam_trainer")
rec.install()
m = rec.load_module(F)
rec.run_script(F)
tg = m.targets()
def f(p):
    v = p.reshape(m.N, 2).copy(); x = np.zeros((m.N, 2))
    for _ in range(m.STEPS):
        sp = np.linalg.norm(v, axis=1)
        v = v + m.DT * (np.array([0, -9.81]) - 0.05 * sp[:, None] * v)
        x = x + m.DT * v
    return 0.5 * np.sum((x - tg) ** 2)
rows = [(it, r[3][0], rec.cdiff(f, r[2][0].ravel())) for it, r in enumerate(rec.REC, 1) if it in (1, 2, 3, 10, 25)]
rec.report("cannon_adam_trainer", rows)
