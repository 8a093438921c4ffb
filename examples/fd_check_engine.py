"""An outside engine that runs the program: a finite-difference gradient check with Warp.

    defects4warp run --engine cmd:"python examples/fd_check_engine.py" --cases ball-drag-identification

It is called as ``fd_check_engine.py PATH DEVICE SCALE`` (PATH: a copy of one
variant folder), imports the variant's ``problem.py``, builds the problem with
``make_problem(DEVICE, SCALE)``, and compares the directional derivative of
the program's own ``gradient()`` with central finite differences of
``objective()`` along a few random directions. It writes its answer, one JSON
diagnosis, to the file named by ``$DEFECTS4WARP_ANSWER``: standard output is
Warp's (its banner and "Module ... load" lines go there) and the engine's own
log lines, and the harness does not read it.

Knobs (environment variables, for experiments): ``FD_DIRECTIONS`` (default 3
random directions) and ``FD_RTOL`` (default 1e-4 when every parameter is
float64, else 3e-2: the central-difference truncation and round-off error for a
step of eps^(1/3) times the parameter scale, Nocedal & Wright, 2nd ed., §8.1).
A finite-difference check cannot name the bug's class, so a ``bug`` answer
carries no class; the runner scores its verdict.
"""

import importlib.util
import json
import os
import sys
import time

import numpy as np
import warp as wp

path, device, scale = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
wp.init()  # prints Warp's banner on stdout: harmless, the answer goes to a file
print(f"fd-check: loading {path}/problem.py on {device}, scale {scale}")
if os.environ.get("DEFECTS4WARP_SCRIPT"):
    # the user's training script with no make_problem adapter: this tool only reads problem.py
    with open(os.environ["DEFECTS4WARP_ANSWER"], "w") as f:
        json.dump({"verdict": "inconclusive", "classes": [], "signature": None,
                   "evidence": [{"probe": "fd-check", "clean": True,
                                 "finding": "a training script with no problem.py: not measured by this tool"}],
                   "cost": {"wall_s": time.perf_counter() - t0}}, f)
    sys.exit(0)

sys.path.insert(0, path)
spec = importlib.util.spec_from_file_location("problem", os.path.join(path, "problem.py"))
module = importlib.util.module_from_spec(spec)
sys.modules["problem"] = module
spec.loader.exec_module(module)
problem = module.make_problem(device, scale)

params = problem.params
start = {name: a.numpy().astype(np.float64) for name, a in params.items()}
all_f64 = all(a.numpy().dtype == np.float64 for a in params.values())
eps = np.finfo(np.float64 if all_f64 else np.float32).eps
rtol = float(os.environ.get("FD_RTOL", 1e-4 if all_f64 else 3e-2))
n_dir = int(os.environ.get("FD_DIRECTIONS", 3))
evals = 0


def objective_at(shift: dict) -> float:
    """The objective with every parameter moved by ``shift[name]`` (then restored)."""
    global evals
    for name, a in params.items():
        a.assign((start[name] + shift[name]).astype(a.numpy().dtype))
    try:
        evals += 1
        return float(problem.objective())
    finally:
        for name, a in params.items():
            a.assign(start[name].astype(a.numpy().dtype))


grad = {name: np.asarray(g, dtype=np.float64).reshape(start[name].shape) for name, g in problem.gradient().items()}
rng = np.random.default_rng(0)
evidence, wrong = [], 0
for k in range(n_dir):
    d = {name: rng.standard_normal(x.shape) for name, x in start.items()}
    h = {name: eps ** (1 / 3) * max(1.0, float(np.abs(x).max(initial=0.0))) for name, x in start.items()}
    step = min(h.values())
    fd = (objective_at({n: step * d[n] for n in d}) - objective_at({n: -step * d[n] for n in d})) / (2 * step)
    ad = float(sum(np.sum(grad[n] * d[n]) for n in d if n in grad))
    agree = np.isfinite(ad) and abs(ad - fd) <= rtol * max(abs(fd), abs(ad), 1e-12)
    wrong += not agree
    print(f"fd-check: direction {k}: autodiff {ad:.6g}  finite differences {fd:.6g}  {'ok' if agree else 'DIFFERENT'}")
    evidence.append({"probe": "fd_direction", "clean": bool(agree),
                     "finding": f"direction {k}: autodiff {ad:.6g} vs central differences {fd:.6g}",
                     "data": {"ad": ad if np.isfinite(ad) else str(ad), "fd": fd if np.isfinite(fd) else str(fd),
                              "step": step, "rtol": rtol}})

diagnosis = {
    "verdict": "bug" if wrong else "no_bug",
    "classes": [] if wrong else [{"id": "correct", "score": 1.0}],
    "signature": "subtly_wrong" if wrong else "agrees",
    "evidence": evidence,
    "cost": {"wall_s": time.perf_counter() - t0, "objective_evals": evals, "gradient_evals": 1, "device": device},
}
with open(os.environ["DEFECTS4WARP_ANSWER"], "w") as f:
    json.dump(diagnosis, f)
print(f"fd-check: {diagnosis['verdict']} ({wrong} of {n_dir} directions disagree)")
