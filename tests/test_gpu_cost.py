"""scripts/gpu_cost.py, the prepared CUDA check, on its CPU path (no GPU is
lent to the tests): the records, the comparison with a baseline device and
the tables."""

import importlib.util
import json
import sys
from pathlib import Path

from tiny_corpus import make_tiny_corpus

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("gpu_cost", ROOT / "scripts" / "gpu_cost.py")
gpu_cost = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gpu_cost)


def test_cpu_path_end_to_end(tmp_path):
    corpus = make_tiny_corpus(tmp_path / "corpus", ["tiny-factor-two"])
    out = tmp_path / "gpu.json"
    md = tmp_path / "gpu.md"
    rc = gpu_cost.main(["--device", "cpu", "--warp", "installed", "--corpus", str(corpus), "--baseline", "none",
                        "--json", str(out), "--markdown", str(md), "--timeout", "200"])
    assert rc == 0
    doc = json.loads(out.read_text())
    (rel, entry), = doc["releases"].items()
    rec = entry["device"]["variants"]["tiny-factor-two/main@small"]
    assert rec["verdict"] == "bug" and rec["class"] == "double_count" and rec["oracle"] == "wrong"
    assert rec["objective_evals"] > 0 and rec["wall_s"] > 0 and rec["compile_s"] is not None
    assert rec["device_s"] is None and rec["device_peak_bytes"] is None  # CPU: absent, never a made-up zero
    assert "differences" not in entry  # --baseline none: nothing compared
    assert gpu_cost.differences(entry["device"], entry["device"]) == []
    text = md.read_text()
    assert f"| {rel} | tiny-factor-two/main@small | bug | double_count | wrong |" in text
    assert "Verdicts that differ between the device and the CPU: 0" in text


def test_differences_name_the_field():
    a = {"device": "cuda:0", "variants": {"c/buggy@small": {"verdict": "bug", "class": "overwrite", "oracle": "passed"},
                                          "c/fixed@small": {"verdict": "no_bug", "class": None, "oracle": "passed"}}}
    b = {"device": "cpu", "variants": {"c/buggy@small": {"verdict": "bug", "class": "double_count", "oracle": "passed"},
                                       "c/fixed@small": {"verdict": "no_bug", "class": None, "oracle": "failed"}}}
    assert gpu_cost.differences(a, b) == [
        {"variant": "c/buggy@small", "field": "class", "cuda:0": "overwrite", "cpu": "double_count"},
        {"variant": "c/fixed@small", "field": "oracle", "cuda:0": "passed", "cpu": "failed"}]
