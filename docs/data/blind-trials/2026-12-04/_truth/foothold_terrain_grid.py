import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "foothold_terrain_grid")
rec.install()
m = rec.load_module(F)
rec.run_script(F)
hgt = m.terrain(); nom = m.nominal()
def f(x):
    cell = np.floor(np.clip(x, 0, 0.999) * m.CELLS).astype(int)
    return np.sum(hgt[cell] ** 2 + m.W_GAIT * (x - nom) ** 2)
rows = []
for it, r in enumerate(rec.REC, 1):
    if it in (1, 2, 5, 15):
        x = r[2][0]
        # distance of each foot to the nearest cell edge, to show FD steps do not straddle one
        edge = np.min(np.abs(x * m.CELLS - np.round(x * m.CELLS)) / m.CELLS)
        print("iter", it, "min distance to a cell edge", edge)
        rows.append((it, r[3][0], rec.cdiff(f, x, 1e-7)))
rec.report("foothold_terrain_grid", rows)
