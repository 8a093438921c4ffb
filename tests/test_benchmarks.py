"""The asv suite imports and its benchmarks are discoverable (`asv check`)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_asv_check_passes():
    asv = shutil.which("asv") or str(Path(sys.executable).parent / "asv")
    if not Path(asv).exists():
        pytest.fail("asv is not installed: pip install -e '.[test]'")
    res = subprocess.run([asv, "check", "--python=same"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "No problems found" in res.stdout


def test_benchmark_names_follow_asv_conventions():
    sys.path.insert(0, str(ROOT))
    import benchmarks.engine as eng

    names = [n for n in dir(eng.ReferenceOnCorpus) if n.startswith(("track_", "time_", "peakmem_"))]
    assert {"track_verdict_accuracy", "track_class_accuracy", "track_detection_rate", "track_false_positive_rate",
            "track_seconds_per_variant"} <= set(names)
    assert eng.DiagnoseOneCase.params == ["taping", "kernel", "custom", "warp", "not_a_bug"]
