"""scripts/merge_validation.py: a later run's checks of some cases replace a
committed validation file's, counts and failures recomputed, inputs recorded."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("merge_validation", ROOT / "scripts" / "merge_validation.py")
mv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mv)


def _check(case, variant, status, message=""):
    return {"case": case, "variant": variant, "scale": "small", "status": status, "ok": status == "passed",
            "message": message}


def test_patch_replaces_its_cases_only_and_recounts(tmp_path):
    base = {"measured_on": "2026-12-01", "wall_s": 100.0, "releases": {"1.18.0": {
        "wall_s": 100.0, "reused": 0,
        "checks": [_check("alpha", "buggy", "passed"), _check("alpha", "fixed", "passed"),
                   _check("beta", "buggy", "failed", "agrees")]}}}
    patch = {"measured_on": "2026-12-02", "wall_s": 2.0, "releases": {"1.18.0": {
        "wall_s": 2.0, "reused": 2,
        "checks": [_check("beta", "buggy", "passed"), _check("beta", "fixed", "passed"),
                   _check("gamma", "buggy", "unresolved", "noise")]}}}
    paths = [tmp_path / n for n in ("base.json", "patch.json", "out.json")]
    for p, d in zip(paths, (base, patch)):
        p.write_text(json.dumps(d))
    assert mv.main([str(p) for p in paths] + ["a case added after the base"]) == 0
    out = json.loads(paths[2].read_text())
    r = out["releases"]["1.18.0"]
    assert [(c["case"], c["variant"], c["status"]) for c in r["checks"]] == [
        ("alpha", "buggy", "passed"), ("alpha", "fixed", "passed"), ("beta", "buggy", "passed"),
        ("beta", "fixed", "passed"), ("gamma", "buggy", "unresolved")]
    assert r["counts"]["passed"] == 4 and r["counts"]["failed"] == 0 and r["counts"]["unresolved"] == 1
    assert r["measured"] == 4  # the base's 3 (its wall time paid for them, beta/buggy replaced or not) + 1 of 3
    assert r["reused"] == 0  # the base's
    assert r["wall_s"] == 102.0 and out["wall_s"] == 102.0 and out["measured_on"] == "2026-12-02"
    assert out["failures"] == ["Warp 1.18.0: gamma/buggy@small: unresolved: noise"]
    assert out["assembled_from"] == [
        {"checks": 3, "measured_on": "2026-12-01", "role": "base"},
        {"checks": 3, "measured_on": "2026-12-02", "role": "a case added after the base"}]
    assert mv.merge(base, patch)["assembled_from"][1]["role"] == mv.DEFAULT_ROLE
    assert mv.main([str(paths[0])]) == 2  # usage


def test_measured_counts_what_the_wall_time_paid_for():
    """A base whose checks were reused, then patched with reused checks: nothing new was measured (a sum of
    reused counts said 322 of 321 checks reused)."""
    base = {"releases": {"1.6.2": {"wall_s": 5.0, "reused": 3, "checks": [
        _check("alpha", "buggy", "passed"), _check("alpha", "fixed", "passed"), _check("beta", "buggy", "passed"),
        _check("beta", "fixed", "skipped")]}}}
    patch = {"releases": {"1.6.2": {"wall_s": 9.0, "reused": 0, "checks": [
        _check("beta", "buggy", "passed"), _check("beta", "fixed", "passed")]}}}
    r = mv.merge(base, patch)["releases"]["1.6.2"]
    assert r["measured"] == 2 and r["reused"] == 3 and r["wall_s"] == 14.0  # 0 of the base (3 reused, 1 skipped)
    r2 = mv.merge({"releases": {"1.6.2": r}}, patch)["releases"]["1.6.2"]
    assert r2["measured"] == 4  # a merged file's own count is kept, not recomputed from its checks
