import sys, numpy as np
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rec
F = os.path.join(os.path.dirname(HERE), "layer_opacity_clamp")
rec.install(kernel_keys=("sgd",))
m = rec.load_module(F)
rec.run_script(F)
color, cov = m.scene(); obs = m.render_np(m.A_TRUE, color, cov) + 0.03
f = lambda a: np.sum((m.render_np(a, color, cov) - obs) ** 2)
rows = []
for it, r in enumerate(rec.REC, 1):
    if it in (1, 2, 3, 5, 10, 30):
        print("iter", it, "raw", np.round(r[2][0], 4))
        rows.append((it, r[2][1], rec.cdiff(f, r[2][0])))
rec.report("layer_opacity_clamp", rows)
for it, ad, tr in rows: print(it, np.round(ad, 5), np.round(tr, 5))
