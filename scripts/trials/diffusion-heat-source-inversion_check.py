"""Float64 central-difference check of the gradient consumed by the Adam step (per variant, in subprocesses)."""
import sys

sys.dont_write_bytecode = True  # keep the variant folders free of __pycache__

import os
import subprocess
import sys

import numpy as np

from fd_trial import case_folder, fd_grad, rel_err

HERE = case_folder("diffusion-heat-source-inversion")
ITERS = 3


def np_loss(theta, n=32, stride=4, steps=10, alpha=0.2, dt=0.1):
    import model  # only for make_problem / reference_solution (pure NumPy)

    sensors, readings = model.make_problem(n, stride, steps, alpha, dt)
    u = model.reference_solution(theta, steps, alpha, dt)
    return float(np.mean((u[sensors] - readings) ** 2))


def run_variant(variant):
    folder = os.path.join(HERE, variant)
    sys.path.insert(0, folder)
    os.chdir(folder)
    import warp as wp
    import warp.optim

    records = []
    orig = wp.optim.Adam.step

    def recording_step(self, grad):
        records.append((self.params[0].numpy().astype(np.float64).copy(), grad[0].numpy().astype(np.float64).copy()))
        return orig(self, grad)

    wp.optim.Adam.step = recording_step
    import train

    train.train(ITERS, 0.1)
    for it, (p, g) in enumerate(records):
        ref = fd_grad(np_loss, p)
        print(f"{variant} iter {it + 1}: rel_err = {rel_err(g, ref):.3e}  |g|={np.linalg.norm(g):.4e} |fd|={np.linalg.norm(ref):.4e}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        run_variant(sys.argv[1])
    else:
        for v in ("buggy", "fixed"):
            out = subprocess.run([sys.executable, os.path.abspath(__file__), v], capture_output=True, text=True)
            print("\n".join(l for l in out.stdout.splitlines() if "rel_err" in l) or out.stdout + out.stderr)
