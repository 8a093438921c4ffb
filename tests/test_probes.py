"""Each probe of the reference engine on tiny programs with known answers.

The programs live in tests/programs/<name>/problem.py; their true gradients
are known in closed form, so the measured numbers are asserted exactly.
All programs are diagnosed once, in parallel, by a module-scoped fixture.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from defects4warp.engines import ReferenceEngine, check_diagnosis
from defects4warp.isolation import run_worker

pytestmark = pytest.mark.slow

NAMES = ["cubic", "growth", "factor_two", "zero_chain", "nan_sqrt", "write_after_read", "noisy",
         "wrong_shape", "raises", "hangs", "segfaults", "kink", "staircase"]


@pytest.fixture(scope="module")
def diag(programs):
    engine = ReferenceEngine(timeout_s=20)
    with ThreadPoolExecutor(max_workers=4) as pool:
        futs = {n: pool.submit(engine.diagnose, str(programs / n), "cpu", "small") for n in NAMES}
        return {n: f.result() for n, f in futs.items()}


def finding(d, probe, clean):
    return [e["finding"] for e in d["evidence"] if e["probe"] == probe and e["clean"] is clean]


@pytest.mark.parametrize("name", NAMES)
def test_every_diagnosis_follows_the_schema(diag, name):
    assert check_diagnosis(diag[name]) is None


def test_correct_program_agrees_and_reports_clean_checks(diag):
    d = diag["cubic"]
    assert d["verdict"] == "no_bug"
    assert d["signature"] == "agrees"
    assert d["classes"][0]["id"] == "correct"
    assert finding(d, "nan_scan", True) and finding(d, "noise", True)
    assert len(finding(d, "fd", True)) >= 4  # 3 calls x elements + the perturbed point's direction
    # cost: 2 (determinism) + 3 (noise) + 2*3 coords (all of them, so no direction) + 2*1 direction at the
    # perturbed point; train() would add more, but cubic has none; nothing disagrees, so nothing is swept
    assert d["cost"]["objective_evals"] == 2 + 3 + 6 + 2
    assert d["cost"]["gradient_evals"] == 4


def test_determinism_probe_sees_linear_growth(diag):
    d = diag["growth"]
    assert d["verdict"] == "bug" and d["signature"] == "growth"
    assert d["classes"][0]["id"] == "missing_tape_zero"
    assert any("factors 1, 2, 3" in f for f in finding(d, "determinism", False))


def test_fd_probe_measures_exact_factor_two(diag):
    d = diag["factor_two"]
    assert d["signature"] == "exact_factor"
    assert d["classes"][0]["id"] == "double_count"
    assert any("(factor 2)" in f for f in finding(d, "fd", False))


def test_fd_probe_sees_a_cut_chain_as_exact_zero(diag):
    d = diag["zero_chain"]
    assert d["signature"] == "zero"
    assert d["classes"][0]["id"] == "missing_requires_grad"


def test_nan_scan_flags_sqrt_at_zero(diag):
    d = diag["nan_sqrt"]
    assert d["verdict"] == "bug" and d["signature"] == "nan_inf"
    assert d["classes"][0]["id"] == "nonsmooth_nan"
    assert any("NaN/inf in the gradient of x while the objective is finite" in f for f in finding(d, "nan_scan", False))


def test_tracker_names_the_array_and_kernel(diag, programs):
    d = diag["write_after_read"]
    assert d["verdict"] == "bug"
    assert d["classes"][0]["id"] == "overwrite"
    from defects4warp.engines import get_engine

    t = get_engine("tracker-only", timeout_s=60).diagnose(str(programs / "write_after_read"), "cpu", "small")
    (w,) = [e for e in t["evidence"] if e["probe"] == "tracker" and not e["clean"]]
    assert w["data"][0]["arg"] == "a" and w["data"][0]["kernel"] == "reset"


def test_stochastic_forward_is_pinned_and_agrees(diag):
    d = diag["noisy"]
    assert d["verdict"] == "no_bug"
    assert d["classes"][0]["id"] == "stochastic_forward"
    assert any("seed pinned" in f for f in finding(d, "determinism", False))


@pytest.mark.parametrize("name, text", [
    ("raises", "RuntimeError: cannot build the scene"),
    ("wrong_shape", "gradient()['x'] has shape (2,), param has shape (3,)"),
    ("hangs", "timeout"),
    ("segfaults", "SIGSEGV"),
])
def test_failures_become_error_diagnoses(diag, name, text):
    d = diag[name]
    assert d["verdict"] == "error"
    assert text in d["error"]


def test_worker_keeps_partial_results_when_a_probe_fails(programs):
    res = run_worker(programs / "wrong_shape", timeout_s=60)
    assert res.doc["determinism"]["objective"] == [pytest.approx(1.0 + 8.0 - 0.125)] * 2
    assert res.doc["protocol"]["params"]["x"]["shape"] == [3]
    assert res.failure.startswith("determinism failed")


def test_fd_values_match_the_analytic_gradient(programs):
    res = run_worker(programs / "cubic", options={"probes": ["determinism", "fd"], "knobs": {"fd": {"perturbed_dirs": 0}}})
    fd = res.doc["fd"]
    assert [c["index"] for c in fd["coords"]] == [0, 1, 2]
    assert fd["fd_norm"] == pytest.approx(np.linalg.norm([3.0, 12.0, 0.75]), rel=1e-9)
    assert fd["calls"][0]["elements"]["relative_error"] < 1e-8


def test_step_sweep_explains_a_kink(diag):
    d = diag["kink"]  # max(x, 0) at x = 0: Warp picks the 0 side, central FD says 0.5
    assert d["verdict"] == "no_bug"
    assert d["classes"][0]["id"] == "nonsmooth_tie"
    sws = [e for e in d["evidence"] if e["probe"] == "sweep" and e["data"]]
    assert sws and all(sw["data"]["verdict"] == "kink" for sw in sws)
    coord = [sw for sw in sws if sw["data"]["kind"] == "coord"]
    assert coord[0]["data"]["forward"][0] == pytest.approx(1.0, rel=1e-6)
    assert abs(coord[0]["data"]["backward"][0]) < 1e-6


def test_step_sweep_explains_a_staircase(diag):
    d = diag["staircase"]  # round(4x)/4 at x = 0.125: the base step straddles the jump
    assert d["verdict"] == "no_bug"
    assert d["classes"][0]["id"] == "piecewise_constant"


def test_kernel_failing_alone_is_named(diag):
    d = diag["factor_two"]  # two backward() calls: every kernel passes alone
    assert any(e["probe"] == "launches" and e["clean"] for e in d["evidence"])
    d = diag["nan_sqrt"]
    (f,) = [e for e in d["evidence"] if e["probe"] == "launches" and not e["clean"]]
    assert "kernel dist disagrees with finite differences in isolation" in f["finding"]


def test_timeout_holds_when_the_program_detaches_a_child(programs):
    import time

    t0 = time.perf_counter()
    res = run_worker(programs / "detaches", timeout_s=3)
    assert res.timed_out and time.perf_counter() - t0 < 15


def test_kill_all_stops_running_workers(programs):
    import threading
    import time

    from defects4warp.sandbox import kill_all, live

    out = {}
    th = threading.Thread(target=lambda: out.setdefault("res", run_worker(programs / "hangs", timeout_s=120)))
    th.start()
    for _ in range(100):
        if live():
            break
        time.sleep(0.05)
    kill_all()
    th.join(timeout=20)
    assert not th.is_alive()
    assert out["res"].returncode is not None and out["res"].returncode < 0


def test_relative_paths_are_resolved(programs, monkeypatch):
    monkeypatch.chdir(programs.parent)
    res = run_worker("programs/raises", timeout_s=60)
    assert "cannot build the scene" in res.failure


def test_device_cost_is_absent_on_cpu_not_zero(diag):
    cost = diag["cubic"]["cost"]
    assert "device_s" not in cost and "device_peak_bytes" not in cost
    assert cost["compiles"] >= 0 and cost["wall_s"] > 0
