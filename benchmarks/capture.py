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
