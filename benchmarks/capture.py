"""asv benchmarks of the script capture: seconds per re-run and per diagnosis.

The issue's target is a median under 30 s per script diagnosis on 2 CPU cores
with a warm kernel cache; this is measured here, not in a timed test.
``setup`` captures once (so kernels are built and cached before timing).
"""

from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent.parent / "tests" / "programs"

#: Scripts in the shapes users write: update by assign, an optimiser kernel, warp.optim.Adam,
#: a grads={...} seed, two params from one helper.
SCRIPTS = ["script_assign", "script_optkernel", "script_adam", "script_seeds", "script_two_params"]


class CaptureScript:
    """One capture (discovery run + two re-runs) and one re-run of each kind, in this process."""

    params = SCRIPTS
    param_names = ["script"]
    timeout = 600

    def setup(self, name):
        from defects4warp.capture import ScriptSpec
        from defects4warp.capture.core import capture_problem

        self.folder = PROGRAMS / name
        self.spec = ScriptSpec("train.py")
        self.problem = capture_problem(self.folder, self.spec)

    def time_capture(self, name):
        from defects4warp.capture.core import capture_problem

        capture_problem(self.folder, self.spec)

    def time_rerun_objective(self, name):
        self.problem.objective()

    def time_rerun_gradient(self, name):
        self.problem.gradient()

    def track_rerun_seconds(self, name):
        self.problem.objective()
        return self.problem.capture_summary()["rerun_s"]

    track_rerun_seconds.unit = "seconds"


class DiagnoseScript:
    """One reference-engine diagnosis of a script (its own worker process), a buggy and a correct one."""

    params = ["script_inplace", "script_inplace_fixed"]
    param_names = ["script"]
    timeout = 1200
    number = 1
    repeat = 1

    def setup(self, name):
        from defects4warp.capture import ScriptSpec
        from defects4warp.engines.reference import ReferenceEngine

        self.engine = ReferenceEngine(differential=False)
        self.spec = ScriptSpec("train.py")
        self.engine.diagnose(str(PROGRAMS / name), "cpu", "small", script=self.spec)  # warm the kernel cache

    def time_diagnose(self, name):
        self.engine.diagnose(str(PROGRAMS / name), "cpu", "small", script=self.spec)


#: Scripts timed against their own first iteration: an assign update, an optimiser kernel,
#: warp.optim.Adam, work before the tape, a checkpointed backward, an in-place bug.
COST_SCRIPTS = ["script_assign", "script_optkernel", "script_adam", "script_pretape", "script_checkpoint",
                "script_inplace"]

#: Runs the script as ``__main__`` from its folder and ends the process when its first
#: ``Tape.backward`` returns (after ``wp.synchronize()``): the script's own first iteration, cold or
#: warm as the kernel cache given to it (the update that follows the backward is a launch or an assign,
#: negligible next to the forward and backward it consumes).
_FIRST_ITERATION = r"""
import os, runpy, sys
import warp as wp
_bw = wp.Tape.backward
def _backward(self, *a, **k):
    r = _bw(self, *a, **k)
    wp.synchronize()
    sys.stdout.flush()
    os._exit(0)
wp.Tape.backward = _backward
folder, entry = sys.argv[1], sys.argv[2]
os.chdir(folder)
sys.path.insert(0, folder)
sys.argv = [entry]
runpy.run_path(entry, run_name="__main__")
"""


def _wall(cmd, cwd, cache_dir, timeout=1200):
    """Wall-clock seconds of ``cmd`` in ``cwd`` with Warp's kernel cache at ``cache_dir``
    (``WARP_CACHE_PATH``); raises ``RuntimeError`` with the output's tail when it fails."""
    import os
    import subprocess
    import time

    env = dict(os.environ, WARP_CACHE_PATH=str(cache_dir))
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {(p.stdout + p.stderr)[-800:]}")
    return wall


def script_cost(name, *, programs=PROGRAMS):
    """Seconds of one script's own first iteration and of its diagnosis (the ``diagnose`` command, the
    reference engine, CPU, no flags), each in a fresh process: ``{"first_iteration_cold",
    "diagnosis_cold", "first_iteration_warm", "diagnosis_warm", "cold_ratio"}``.

    Cold: a fresh, empty Warp kernel cache (every module of the script compiled), first the script,
    then (in another fresh cache) the diagnosis; warm: both again with the cache the diagnosis
    filled. ``cold_ratio`` is ``diagnosis_cold / first_iteration_cold``. Targets (issue "The
    iteration, not the tape"): median cold ratio <= 1.5, median warm diagnosis <= 3 s.

    Raises
    ------
    RuntimeError
        When the script or the diagnosis fails (its output's tail in the message).
    """
    import sys
    import tempfile

    folder = programs / name
    py = sys.executable
    first = [py, "-c", _FIRST_ITERATION, str(folder), "train.py"]
    diag = [py, "-m", "defects4warp", "diagnose", "train.py"]
    out = {}
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        out["first_iteration_cold"] = _wall(first, folder, a)
        out["diagnosis_cold"] = _wall(diag, folder, b)
        out["first_iteration_warm"] = _wall(first, folder, b)
        out["diagnosis_warm"] = _wall(diag, folder, b)
    out["cold_ratio"] = out["diagnosis_cold"] / out["first_iteration_cold"]
    return out


class ScriptDiagnosisCost:
    """A script's diagnosis against the script's own first iteration (:func:`script_cost` of each of
    :data:`COST_SCRIPTS`, measured once in ``setup_cache``)."""

    params = COST_SCRIPTS
    param_names = ["script"]
    timeout = 3600

    def setup_cache(self):
        return {name: script_cost(name) for name in COST_SCRIPTS}

    def track_cold_ratio(self, costs, name):
        return costs[name]["cold_ratio"]

    track_cold_ratio.unit = "diagnosis / first iteration"

    def track_diagnosis_warm_seconds(self, costs, name):
        return costs[name]["diagnosis_warm"]

    track_diagnosis_warm_seconds.unit = "seconds"

    def track_first_iteration_cold_seconds(self, costs, name):
        return costs[name]["first_iteration_cold"]

    track_first_iteration_cold_seconds.unit = "seconds"
