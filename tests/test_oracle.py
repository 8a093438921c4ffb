"""The independent oracle (defects4warp.oracle) and ``validate`` built on it.

Tiny programs with known answers live in tests/programs/oracle_*/. Numerics
tests run without Warp; everything that runs a Warp program is marked slow.
"""

import math
import shutil

import numpy as np
import pytest

from defects4warp.oracle import compare_pair, measure_variant
from defects4warp.oracle.numerics import ecnoise, gamma, initial_step, param_scale, pick_estimate

# -- numerics (no Warp) -------------------------------------------------------


def test_ecnoise_constants_and_known_noise():
    assert gamma(1) == 0.5 and math.isclose(gamma(2), 1 / 6) and math.isclose(gamma(3), 1 / 20)
    rng = np.random.default_rng(0)
    t = np.arange(9) - 4.0
    sigma = 1e-8
    estimates = []
    for _ in range(50):
        f = 3.0 + 0.2 * t * 1e-4 + 0.5 * (t * 1e-4) ** 2 + rng.normal(0.0, sigma, 9)
        est = ecnoise(f)
        assert est["method"] == "ecnoise"
        estimates.append(est["sigma"])
    # the median of 50 estimates is within 30 % of the true standard deviation
    assert 0.7 * sigma < np.median(estimates) < 1.3 * sigma
    assert ecnoise(np.full(9, 2.5)) == {"sigma": 0.0, "order": None, "sigmas": [0.0] * 6, "method": "constant"}
    assert ecnoise([1.0, math.nan] + [1.0] * 7)["sigma"] == math.inf


def test_steps_and_estimate_choice():
    eps = float(np.finfo(np.float64).eps)
    assert math.isclose(initial_step(2.0, 0.5, eps), 2.0 * eps ** (1 / 3))
    assert math.isclose(initial_step(0.0, 0.5, eps), 0.5 * eps ** (1 / 3))
    assert param_scale([0.0, 0.0]) == 1.0 and param_scale([1.0, -3.0]) == 2.0
    # h/4 and h agree within noise: the larger step is kept
    assert pick_estimate({0.25: 1.0000001, 1.0: 1.0}, noise=1e-6) == (1.0, 1.0, pytest.approx(1e-7))
    # truncation regime: the pair that agrees best wins, its smaller step reported
    est = {1 / 16: 1.0001, 0.25: 1.0016, 1.0: 1.0256, 4.0: 1.4096}
    v, h, dis = pick_estimate(est, noise=1e-9)
    assert (v, h) == (1.0001, 1 / 16) and dis == pytest.approx(0.0015)


# -- measurements of the tiny programs -------------------------------------------


@pytest.fixture(scope="module")
def measured(programs):
    names = ["oracle_correct", "oracle_double", "oracle_zero", "oracle_below_resolution", "oracle_refuses",
             "growth", "kink"]
    return {n: measure_variant(programs / n, timeout_s=120) for n in names}


@pytest.mark.slow
def test_correct_program_agrees_with_every_coordinate_resolved(measured):
    d = measured["oracle_correct"]
    assert d["verdict"] == "agrees", d
    assert (d["resolved"], d["unresolved"]) == (4, 0)
    assert d["fd"]["coordinates"] == 4 and not d["fd"]["sampled"]
    assert d["max_relative_error"] < 1e-7
    # float64 objective of magnitude ~10: noise at the ulp level
    assert 0 < d["noise"]["sigma"] < 1e-13
    assert [c["disagree"] for c in d["calls"]] == [0, 0, 0]


@pytest.mark.slow
def test_exact_factor_two(measured):
    d = measured["oracle_double"]
    assert d["verdict"] == "wrong"
    assert d["signature"]["kind"] == "factor"
    assert d["signature"]["ratio"] == pytest.approx(2.0, rel=1e-6)
    assert d["max_relative_error"] == pytest.approx(1.0, rel=1e-6)


@pytest.mark.slow
def test_zero_chain(measured):
    d = measured["oracle_zero"]
    assert d["verdict"] == "wrong"
    assert d["signature"] == {"kind": "zero", "zero_items": 3}
    assert d["max_relative_error"] == pytest.approx(1.0)


@pytest.mark.slow
def test_float32_gradient_below_resolution_is_unresolved(measured):
    d = measured["oracle_below_resolution"]
    assert d["verdict"] == "unresolved"
    assert (d["resolved"], d["unresolved"]) == (0, 4)
    # the objective (~1000 in float32) has noise of at least one ulp (6.1e-5) ...
    assert d["noise"]["sigma"] >= float(np.spacing(np.float32(1000.0)))
    assert d["objective"]["precision"] == "float32"
    # ... so each item's resolution is far above the true gradient 2e-5 * x (at most 4e-5)
    assert d["fd"]["median_resolution"] > 100 * 4e-5


@pytest.mark.slow
def test_build_error_is_refused_with_type_and_first_line(measured):
    d = measured["oracle_refuses"]
    assert d["verdict"] == "refused"
    assert d["failure"]["stage"] == "objective"
    assert "energy" in d["failure"]["first_line"]
    assert d["warp_version"]


@pytest.mark.slow
def test_growth_and_kink(measured):
    g = measured["growth"]
    assert g["verdict"] == "wrong" and g["signature"]["kind"] == "growth"
    assert g["signature"]["ratios"] == pytest.approx([2.0, 3.0], rel=1e-6)
    assert g["calls"][0]["disagree"] == 0 and g["calls"][1]["disagree"] > 0
    k = measured["kink"]
    # at x = 0 central FD gives 0.5 while autodiff picks a one-sided slope: valid
    assert k["verdict"] == "agrees" and k["fd"]["kink_items"] == 1


@pytest.mark.slow
def test_hang_is_killed_as_error(programs):
    d = measure_variant(programs / "hangs", timeout_s=4)
    assert d["verdict"] == "error" and "timed out after 4 s" in d["message"]


# -- pair checks ------------------------------------------------------------------


@pytest.mark.slow
def test_pair_factor_two_is_confirmed(programs):
    r = compare_pair(programs / "oracle_double", programs / "oracle_correct", timeout_s=120)
    assert r["confirmed"], r.get("reason")
    assert r["same_point"] and r["objective_relative_difference"] == 0.0
    assert r["ratio_median"] == pytest.approx(2.0, rel=1e-12) and r["ratio_spread"] < 1e-12
    assert r["max_relative_error"] == pytest.approx(1.0, rel=1e-6)
    assert r["right"]["verdict"] == "agrees" and r["wrong"]["verdict"] == "wrong"
    same = compare_pair(programs / "oracle_correct", programs / "oracle_correct", timeout_s=120)
    assert not same["confirmed"] and "not wrong" in same["reason"] and same["gradients_differ"] is False


@pytest.mark.slow
def test_pair_with_differing_objectives(programs):
    r = compare_pair(programs / "oracle_pair_wrong", programs / "oracle_pair_right", timeout_s=120)
    assert not r["confirmed"]
    assert "objectives differ" in r["reason"]
    assert r["objective_relative_difference"] == pytest.approx(1.0)
    assert r["ratio_median"] == pytest.approx(3.0)
    ok = compare_pair(programs / "oracle_pair_wrong", programs / "oracle_pair_right", timeout_s=120,
                      objectives_differ="the wrong one reports twice the loss")
    assert ok["confirmed"], ok.get("reason")


# -- validate on a small corpus ---------------------------------------------------

CASE = """id: {id}
title: t
summary: s
explanation: e
provenance: original
tags:
  domain: test
{extra}variants:
  buggy:
    - verdict: {verdict}
      classes: [{cls}]
  fixed:
    - verdict: no_bug
      classes: [correct]
"""


def _case(root, cid, buggy, fixed, programs, verdict="bug", cls="seed_mismatch", extra=""):
    d = root / cid
    shutil.copytree(programs / buggy, d / "buggy")
    shutil.copytree(programs / fixed, d / "fixed")
    (d / "case.yaml").write_text(CASE.format(id=cid, verdict=verdict, cls=cls, extra=extra))
    return d


@pytest.mark.slow
def test_validate_statuses(tmp_path, programs):
    from defects4warp.corpus.case import load_corpus
    from defects4warp.validate import counts, validate_cases

    _case(tmp_path, "factor-ok", "oracle_double", "oracle_correct", programs)
    _case(tmp_path, "factor-mislabelled", "oracle_double", "oracle_correct", programs, cls="missing_tape_zero")
    _case(tmp_path, "objectives-unexplained", "oracle_pair_wrong", "oracle_pair_right", programs,
          cls="double_count")
    _case(tmp_path, "objectives-explained", "oracle_pair_wrong", "oracle_pair_right", programs,
          cls="double_count", extra="objectives_differ: the buggy program reports twice the loss\n")
    _case(tmp_path, "below-resolution", "oracle_below_resolution", "oracle_correct", programs, verdict="no_bug",
          cls="fd_precision")
    cases, errors = load_corpus(tmp_path)
    assert not errors
    out = {cc.case: {v.variant: v for v in cc.variants} for cc in validate_cases(cases, jobs=2, timeout_s=120)}
    b = out["factor-ok"]["buggy"]
    assert b.status == "passed", b.message
    assert b.pair["confirmed"] and b.pair["ratio_median"] == pytest.approx(2.0)
    assert b.oracle["verdict"] == "wrong" and b.signature == "exact_factor"
    assert out["factor-ok"]["fixed"].status == "passed"
    m = out["factor-mislabelled"]["buggy"]
    assert m.status == "failed" and "exact_factor" in m.message
    u = out["objectives-unexplained"]["buggy"]
    assert u.status == "failed" and "objectives differ" in u.message
    e = out["objectives-explained"]["buggy"]
    assert e.status == "passed", e.message
    assert e.pair["ratio_median"] == pytest.approx(3.0)
    r = out["below-resolution"]["buggy"]
    assert r.status == "unresolved" and not r.ok and r.oracle["resolved"] == 0
    n = counts([v for per in out.values() for v in per.values()])
    assert n == {"passed": 7, "failed": 2, "unresolved": 1, "skipped": 0, "unsupported": 0}


def test_build_error_classification_without_warp():
    from defects4warp.oracle.worker import warp_build_error

    class WarpCodegenTypeError(TypeError):
        pass

    class Child(WarpCodegenTypeError):
        pass

    assert warp_build_error(WarpCodegenTypeError("bad"))
    assert warp_build_error(Child("bad"))
    try:
        raise ValueError("user code")
    except ValueError as exc:
        assert not warp_build_error(exc)


def test_oracle_column_cells():
    from defects4warp.run.matrix import oracle_cell
    from defects4warp.report.markdown import version_matrix_markdown

    wrong = {"case": "c1", "variant": "buggy", "scale": "small", "status": "passed", "ok": True, "message": "",
             "expected": {"verdict": "bug", "classes": ["double_count"]}, "signature": "exact_factor",
             "oracle": {"verdict": "wrong", "max_relative_error": 0.54, "signature": {"kind": "factor", "ratio": 2.0}},
             "pair": {"ratio_median": 2.0}}
    assert oracle_cell(wrong) == "wrong 0.54 r=2"
    nan = dict(wrong, oracle={"verdict": "wrong", "max_relative_error": "inf", "signature": {"kind": "nan"}})
    assert oracle_cell(nan) == "wrong nan"
    agrees = dict(wrong, variant="fixed", signature="agrees", expected={"verdict": "no_bug", "classes": ["correct"]},
                  oracle={"verdict": "agrees", "max_relative_error": 3e-9}, pair=None)
    assert oracle_cell(agrees) == "agrees 3e-09"
    assert oracle_cell(dict(wrong, status="unresolved", oracle={"verdict": "unresolved"})) == "unres"
    assert oracle_cell(dict(wrong, oracle={"verdict": "refused"})) == "refused"
    assert oracle_cell(dict(wrong, status="skipped", message="skipped: requires x")) == "skip"
    # a check written before the oracle keeps its old cell
    assert oracle_cell({"signature": "agrees", "message": ""}) == "right"
    failed = dict(wrong, variant="rebound", status="failed", ok=False)
    doc = {"device": "cpu", "machine": {}, "releases": {"1.19.0": {"wall_s": 1.0, "checks": [wrong, agrees, failed]}}}
    md = version_matrix_markdown(doc)
    assert "| c1 | buggy | bug double_count | wrong 0.54 r=2 |" in md
    assert "| c1 | rebound | bug double_count | wrong 0.54 r=2 **(contradicts tags)** |" in md
    assert "All 1 fixed-variant checks agree" in md


@pytest.mark.slow
def test_validate_cli_prints_status_counts(tmp_path, programs):
    from click.testing import CliRunner

    from defects4warp.cli import main

    _case(tmp_path, "factor-ok", "oracle_double", "oracle_correct", programs)
    out = tmp_path / "v.json"
    res = CliRunner().invoke(main, ["validate", "--corpus", str(tmp_path), "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "2 passed, 0 failed, 0 unresolved, 0 skipped" in res.output
    import json

    doc = json.loads(out.read_text())
    (rel,) = doc["releases"].values()
    assert rel["counts"] == {"passed": 2, "failed": 0, "unresolved": 0, "skipped": 0, "unsupported": 0}
    buggy = next(c for c in rel["checks"] if c["variant"] == "buggy")
    assert buggy["pair"]["ratio_median"] == pytest.approx(2.0) and buggy["oracle"]["resolved"] == 4
    assert buggy["oracle"]["noise_sigma"] > 0 and buggy["pair"]["objective_relative_difference"] == 0.0


def test_oracle_shares_no_module_with_the_engine():
    """harness/oracle and harness/validate.py import nothing from the engine's
    modules (engines, measure, probes, isolation) -- checked on the source."""
    import ast
    from pathlib import Path

    import defects4warp

    root = Path(defects4warp.__file__).parent
    allowed_parent = {"problem", "case", "envs", "taxonomy", "blind", "oracle", "paths",
                      "kernel_cache", "sandbox"}  # paths: where the package is; kernel_cache: neutral, imports
    # nothing of it; sandbox: the one place that starts processes (standard library only, measures nothing)
    forbidden = {"engines", "measure", "probes", "isolation"}
    files = sorted((root / "oracle").glob("*.py"))
    assert {f.name for f in files} >= {"__init__.py", "api.py", "runner.py", "worker.py", "numerics.py", "replay.py"}
    for f in files:
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                mod = (node.module or node.names[0].name).split(".")[0]
                target = mod if node.level == 2 else "oracle"
                assert target in allowed_parent, f"{f.name} imports ..{node.module}"
            elif isinstance(node, ast.ImportFrom):
                assert node.module.split(".")[0] not in ("defects4warp",) or node.module.split(".")[1] in allowed_parent
            elif isinstance(node, ast.Import):
                for a in node.names:
                    assert a.name.split(".")[0] in {"argparse", "hashlib", "json", "math", "os", "sys", "time",
                                                    "traceback", "numpy", "warp", "signal", "subprocess",
                                                    "tempfile", "threading", "resource", "pathlib",
                                                    "importlib", "ctypes", "contextlib", "io", "runpy"}, \
                        f"{f.name} imports {a.name}"
    tree = ast.parse((root / "validate.py").read_text())
    mods = {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level}
    assert not mods & forbidden, mods
    # the capture that writes a script variant's replay record (the oracle gets it as data and
    # replays the script itself) imports nothing from the engine (engines, probes, isolation, the
    # measurement worker) except the runtime trace it is built on
    # (harness/measure/trace.py: the instrumentation of Warp's public API and the
    # findings read from it, which import no other harness module)
    allowed_measure = {"measure.trace"}
    for f in sorted((root / "capture").glob("*.py")) if (root / "capture").is_dir() else []:
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom):
                parts = (node.module or "").split(".")
                if node.level == 2:
                    target = ".".join(parts)
                elif node.level == 0 and parts[0] == "harness":
                    target = ".".join(parts[1:])
                else:
                    continue
                if node.level == 2 and target == "measure":
                    target = "measure." + ",".join(a.name for a in node.names)
                assert target.split(".")[0] not in forbidden or target in allowed_measure, \
                    f"capture/{f.name} imports {node.module} (level {node.level})"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    parts = a.name.split(".")
                    assert not (parts[0] == "harness" and len(parts) > 1 and parts[1] in forbidden
                                and ".".join(parts[1:]) not in allowed_measure), f"capture/{f.name} imports {a.name}"
    # the runtime trace is seven modules (recorder and the trace state it records into, detectors and the
    # event dataflow they read, the returned-view and tape-session measurements the recorder calls, and the
    # patches module that installs and restores every wrapper of Warp's API, the capture's too) and
    # trace.py, which re-exports them, plus the kernel access analysis one layer below
    # (harness/kernel_access.py, shared with the source rules): at module level they import one another
    # and no other harness module
    trio = {"trace", "recorder", "trace_state", "detectors", "dataflow", "aliasing", "tape_sessions", "patches"}
    for name in sorted(trio):
        tree = ast.parse((root / "measure" / f"{name}.py").read_text())
        for n in tree.body:
            if isinstance(n, ast.ImportFrom):
                assert not (n.module or "").startswith(("harness", "defects4warp")), f"measure/{name}.py imports {n.module}"
                if n.level == 2:
                    assert n.module == "kernel_access", f"measure/{name}.py imports ..{n.module}"
                elif n.level:
                    assert n.level == 1 and ((n.module in trio) or (n.module is None and
                                                                   {a.name for a in n.names} <= trio)), \
                        f"measure/{name}.py imports .{n.module}"
    assert not [n for n in ast.walk(ast.parse((root / "kernel_access.py").read_text()))
                if isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").startswith("defects4warp"))]
    # and importing the capture (which writes the oracle's replay records) loads no module of the engine
    import subprocess
    import sys

    code = ("import sys, defects4warp.capture.core, defects4warp.oracle.api; "
            "print(sorted(m for m in sys.modules if m.startswith('defects4warp.') "
            "and m.split('.')[1] in ('engines', 'probes', 'isolation')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_release_not_installed_is_skipped_not_passed(tmp_path, programs, monkeypatch):
    import json

    from click.testing import CliRunner

    import defects4warp.envs
    from defects4warp.cli import main

    def not_installed(version, log=None):
        raise defects4warp.envs.ReleaseEnvError(f"pip could not install warp-lang=={version}: no network")

    monkeypatch.setattr(defects4warp.envs, "python_for", not_installed)
    _case(tmp_path, "factor-ok", "oracle_double", "oracle_correct", programs)
    out = tmp_path / "v.json"
    res = CliRunner().invoke(main, ["validate", "--corpus", str(tmp_path), "--warp", "1.15.0", "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "0 passed, 0 failed, 0 unresolved, 2 skipped" in res.output
    checks = json.loads(out.read_text())["releases"]["1.15.0"]["checks"]
    assert [c["status"] for c in checks] == ["skipped", "skipped"]
    assert "not installed" in checks[0]["message"]
    bad = CliRunner().invoke(main, ["validate", "--corpus", str(tmp_path), "--warp", "not-a-release"])
    assert bad.exit_code == 2


def test_worker_uses_a_private_kernel_cache_only_where_warp_names_objects_without_a_hash(monkeypatch, tmp_path):
    import os
    import sys
    import types

    from defects4warp import kernel_cache
    from defects4warp.oracle import worker

    def fake(version):
        mod = types.ModuleType("warp")
        mod.config = types.SimpleNamespace(version=version, kernel_cache_dir=None)
        monkeypatch.setitem(sys.modules, "warp", mod)
        return mod

    old = fake("1.0.2")
    d = worker.private_kernel_cache()
    assert d is not None and os.path.isdir(d.name) and old.config.kernel_cache_dir == d.name
    d.cleanup()
    assert not os.path.exists(d.name)
    assert worker.private_kernel_cache.__doc__ and kernel_cache.SHARED_CACHE_BEFORE == (1, 3)
    new = fake("1.3.3")
    assert worker.private_kernel_cache() is None and new.config.kernel_cache_dir is None
