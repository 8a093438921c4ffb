"""asv benchmarks of the reference engine on the bundled corpus.

``track_*`` read one run of the whole corpus (``setup_cache``, so asv runs it
once per environment: on the installed or matrix ``warp-lang`` release);
``time_*`` time one diagnosis of a representative case per class family.
Versions are pinned so that editing corpus programs or the engine keeps the
history of each benchmark (bump them only when the measured quantity changes
meaning).
"""

import resource
from pathlib import Path

from defects4warp.corpus.case import load_case, load_corpus
from defects4warp.engines import ReferenceEngine, get_engine
from defects4warp.run.runner import plan, run

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

#: One case per class family (taping, kernel, custom, warp, not a bug).
REPRESENTATIVE = {
    "taping": "fountain-jet-aiming",
    "kernel": "puck-launch-fit",
    "custom": "tyre-lateral-force-fit",
    "warp": "cylinder-marker-radii",
    "not_a_bug": "line-sensor-emitter-positions",
}


class ReferenceOnCorpus:
    """Accuracy and cost of the reference engine over the whole corpus."""

    timeout = 3600
    version = "1"

    def setup_cache(self):
        cases, _ = load_corpus(CORPUS)
        doc = run(plan(cases), ReferenceEngine(timeout_s=300), jobs=2)
        s = doc["summary"]
        s["worker_peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        return s

    def track_verdict_accuracy(self, s):
        return s["verdict_accuracy"]

    track_verdict_accuracy.unit = "fraction"

    def track_class_accuracy(self, s):
        return s["class_accuracy"]

    track_class_accuracy.unit = "fraction"

    def track_detection_rate(self, s):
        return s["detection_rate"]

    track_detection_rate.unit = "fraction"

    def track_false_positive_rate(self, s):
        return s["false_positive_rate"]

    track_false_positive_rate.unit = "fraction"

    def track_seconds_per_variant(self, s):
        return s["median_wall_s_per_run"]

    track_seconds_per_variant.unit = "seconds"

    def track_objective_evals_per_variant(self, s):
        return s["median_objective_evals"]

    track_objective_evals_per_variant.unit = "evaluations"

    def track_worker_peak_rss(self, s):
        """Largest resident set of any measurement subprocess of the run."""
        return s["worker_peak_rss_bytes"]

    track_worker_peak_rss.unit = "bytes"


class ReferenceWarmCache:
    """Cost of the reference engine per variant once Warp's kernel cache is
    warm (the second of two runs over the dev split): the targets of engine
    v3 are a median of at most 2.5 wall seconds and at most 24 objective
    evaluations per variant on a 2-core CPU (issue "Reference engine v3")."""

    timeout = 7200
    version = "1"

    def setup_cache(self):
        cases, _ = load_corpus(CORPUS)
        dev = [c for c in cases if c.split == "dev"]
        items = plan(dev)
        run(items, ReferenceEngine(timeout_s=300), jobs=2)  # compiles what the cache lacks
        return run(items, ReferenceEngine(timeout_s=300), jobs=2)["summary"]

    def track_warm_seconds_per_variant(self, s):
        return s["median_wall_s_per_run"]

    track_warm_seconds_per_variant.unit = "seconds"

    def track_warm_objective_evals_per_variant(self, s):
        return s["median_objective_evals"]

    track_warm_objective_evals_per_variant.unit = "evaluations"

    def track_warm_compiles(self, s):
        """Modules compiled in the warm run (0 when nothing forces a rebuild)."""
        return s["total_compiles"]

    track_warm_compiles.unit = "modules"


class DiagnoseOneCase:
    """Seconds to diagnose one variant (subprocess, compile, probes)."""

    params = list(REPRESENTATIVE)
    param_names = ["family"]
    number = 1
    repeat = 1
    warmup_time = 0
    timeout = 600
    version = "1"

    def setup(self, family):
        self.variant = load_case(CORPUS / REPRESENTATIVE[family]).variant("buggy").path
        self.engine = ReferenceEngine(timeout_s=300)

    def time_diagnose_buggy_variant(self, family):
        self.engine.diagnose(str(self.variant), "cpu", "small")


class WholeRunMemory:
    """Memory of the harness process over a whole run (the engine itself is
    in subprocesses; ReferenceOnCorpus.track_worker_peak_rss covers those)."""

    timeout = 600
    version = "1"

    def peakmem_run_static_only(self):
        cases, _ = load_corpus(CORPUS)
        run(plan(cases), get_engine("static-only"), warp_version="1.19.0")


class RescoreCommitted:
    """Re-interpreting a release's committed measurements (``defects4warp maint pages --rescore``), no Warp run.

    The target: every committed engine file (20 releases, about 320 runs each) re-scored
    after an interpretation change in under 2 minutes on 2 cores, i.e. under 6 s a release.
    Skipped (``NotImplementedError``) where the release has no committed bundle.
    """

    timeout = 600
    version = "1"
    params = ["1.19.0"]
    param_names = ["release"]

    def setup(self, release):
        from defects4warp.report.engine_matrix import bundle_path, data_path

        self.root = CORPUS.parent
        self.path = data_path(self.root, release)
        if not bundle_path(self.path).is_file():
            raise NotImplementedError(f"no committed measurement bundle for Warp {release}")
        self.cases, _ = load_corpus(CORPUS)

    def time_rescore_release(self, release):
        from defects4warp.report.engine_matrix import rescore_release

        rescore_release(self.path, self.cases, jobs=2)
