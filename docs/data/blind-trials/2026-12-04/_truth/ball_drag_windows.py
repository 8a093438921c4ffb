import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "ball_drag_windows")
rec.install()
m = rec.load_module(F)
rec.run_script(F)
ref = m.tracked_frames(m.C_TRUE)
def loss(c):
    fr = m.tracked_frames(c)
    return sum(np.sum((a - b) ** 2) for a, b in zip(fr, ref))
rows = [(it, r[3][0], rec.cdiff(loss, r[2][0])) for it, r in enumerate(rec.REC, 1) if it in (1, 2, 5, 10)]
rec.report("ball_drag_windows", rows)
