"""One generated test per probe of the reference engine (scikit-learn's
``parametrize_with_checks`` is the model): each probe on a tiny program
where it must fire and one where it must not, with the measured values
asserted. The programs live in tests/programs/ and have closed-form
gradients; each is diagnosed once by a module-scoped fixture."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from defects4warp.engines import ReferenceEngine
from defects4warp.probes import REGISTRY, load

pytestmark = pytest.mark.slow


def ev(d, probe, clean=None):
    return [e for e in d["evidence"] if e["probe"] == probe and (clean is None or e["clean"] is clean)]


def fires_determinism(d):
    return d["signature"] == "growth" and any("factors 1, 2, 3" in e["finding"] for e in ev(d, "determinism", False))


def fires_noise(d):
    # every single-coordinate item of a 20000-parameter float32 mean is below resolution
    return any("below the finite-difference resolution" in e["finding"] for e in ev(d, "fd", True))


def fires_fd(d):
    return any("disagree" in e["finding"] and "factor 2)" in e["finding"] for e in ev(d, "fd", False))


def fires_sweep(d):
    return any(e["data"] and e["data"]["verdict"] == "kink" for e in ev(d, "sweep"))


def fires_reference(d):
    return any("reference_gradient" in e["finding"] and "factor 0.666667" in e["finding"] for e in ev(d, "reference", False))


def fires_nan_scan(d):
    return any("NaN/inf in the gradient of x while the objective is finite" in e["finding"] for e in ev(d, "nan_scan", False))


def fires_horizon(d):
    return any("first part at steps=5 of 8" in e["finding"] for e in ev(d, "horizon", False))


def fires_train(d):
    return d["verdict"] == "bug" and any(e["data"] and e["data"].get("point") == "after train()" and
                                         e["data"]["verdict"] == "confirmed" for e in ev(d, "sweep"))


def fires_launches(d):
    return any("kernel dist disagrees with finite differences in isolation" in e["finding"] for e in ev(d, "launches", False))


def fires_trace(d):
    return any(e["data"]["id"] == "write_after_read" and "reset" in e["finding"] for e in ev(d, "trace", False))


def fires_ablation(d):
    return any("surrogate of the hand-written adjoint(s) of binarize" in e["finding"] for e in ev(d, "ablation", True))


def fires_determinism_clean(d):
    return any("identical across calls" in e["finding"] for e in ev(d, "determinism", True))


#: probe -> (program where it must fire, program where it must not, predicate)
CHECKS = {
    "determinism": ("growth", "cubic", fires_determinism),
    "noise": ("wide_float32", "cubic", fires_noise),
    "fd": ("factor_two", "cubic", fires_fd),
    "sweep": ("kink", "cubic", fires_sweep),
    "reference": ("ref_wrong", "ref_right", fires_reference),
    "nan_scan": ("nan_sqrt", "cubic", fires_nan_scan),
    "horizon": ("horizon_reuse", "horizon_reuse_fixed", fires_horizon),
    "train": ("warmup_flag", "warmup_flag_fixed", fires_train),
    "launches": ("nan_sqrt", "factor_two", fires_launches),
    "trace": ("trace_war", "trace_war_fixed", fires_trace),
    "ablation": ("ablation_ste_decay", "cubic", fires_ablation),
}

#: Verdicts the firing and non-firing programs must get.
VERDICTS = {"ablation_ste_decay": "no_bug", "wide_float32": "no_bug", "ref_right": "no_bug", "horizon_reuse_fixed": "no_bug",
            "warmup_flag_fixed": "no_bug", "trace_war_fixed": "no_bug", "cubic": "no_bug", "kink": "no_bug",
            "growth": "bug", "factor_two": "bug", "ref_wrong": "bug", "nan_sqrt": "bug", "horizon_reuse": "bug",
            "warmup_flag": "bug", "trace_war": "bug"}


@pytest.fixture(scope="module")
def diag(programs):
    names = sorted({n for a, b, _ in CHECKS.values() for n in (a, b)})
    engine = ReferenceEngine(timeout_s=120, differential=False)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futs = {n: pool.submit(engine.diagnose, str(programs / n), "cpu", "small") for n in names}
        return {n: f.result() for n, f in futs.items()}


def test_every_worker_probe_has_a_check():
    load()
    # tracker and gradcheck are not in the reference engine's list; gradcheck's pair (nan_sqrt fires, cubic not)
    # is tests/test_engine_v4.py::test_gradcheck_engine_on_tiny_programs
    assert set(REGISTRY) - {"tracker", "gradcheck"} <= set(CHECKS), "add a firing/non-firing pair for the new probe"


@pytest.mark.parametrize("probe", sorted(CHECKS))
def test_probe_fires_where_it_must(diag, probe):
    fire, _, pred = CHECKS[probe]
    d = diag[fire]
    assert d["verdict"] == VERDICTS[fire], d.get("error")
    assert pred(d), [e["finding"] for e in d["evidence"] if e["probe"] == probe]


@pytest.mark.parametrize("probe", sorted(CHECKS))
def test_probe_stays_quiet_where_it_must(diag, probe):
    _, quiet, pred = CHECKS[probe]
    d = diag[quiet]
    assert d["verdict"] == VERDICTS[quiet], d.get("error")
    assert not pred(d)


def test_noise_floor_keeps_unresolved_items_out_of_the_verdict(diag):
    d = diag["wide_float32"]
    (n,) = ev(d, "noise")
    assert n["data"]["sigma"] > 0
    assert d["classes"][0]["id"] == "correct"
    assert any("random directions): agrees" in e["finding"] for e in ev(d, "fd", True))


def test_a_large_exact_factor_is_found_and_named(diag, programs):
    # a 64x64 per-pixel float32 loss seeded with ones while the objective is its mean
    d = ReferenceEngine(timeout_s=120, differential=False).diagnose(str(programs / "pixel_mean_seed"), "cpu", "small")
    assert d["verdict"] == "bug" and d["signature"] == "exact_factor"
    assert d["classes"][0]["id"] == "seed_mismatch"
    assert any("(factor 4096)" in e["finding"] for e in ev(d, "fd", False))
    assert any("equals the 4096 elements" in e["finding"] for e in ev(d, "fd", False))


def test_the_noise_line_gives_no_relative_level_for_an_objective_of_zero():
    """The noise probe divides sigma_f by max(|f(x0)|, 1e-300): a loss that is exactly 0 at the point (a newcomer's
    fit that starts at its minimum) measured 2.1e+290 'relative'; the line says there is no relative level."""
    from defects4warp.engines.assess.noise import assess

    doc = {"noise": {"sigma": 2.08e-10, "ecnoise": 2.08e-10, "floor": 0.0, "order": 3, "points": 3,
                     "values": [0.0, 1e-10, -2e-10, 3e-10], "relative": 2.08e-10 / 1e-300}}
    (e,) = assess(doc).evidence
    assert e["finding"] == ("objective noise sigma_f = 2.08e-10 (the objective is 0 at the point: no relative level; "
                            "ECnoise order 3 from 3 evaluations)")
    doc["noise"].update(values=[4.0, 4.0, 4.0, 4.0], relative=2.08e-10 / 4.0)
    (e,) = assess(doc).evidence
    assert e["finding"] == "objective noise sigma_f = 2.08e-10 (5.2e-11 relative; ECnoise order 3 from 3 evaluations)"


def test_the_train_line_says_what_moved_means():
    """'params moved 1 relative' read as a measured 100 % step to a newcomer whose params started at zero: the line
    says the measure (over the larger of the two norms) and that a start at zero gives 1."""
    from defects4warp.engines.assess.train import assess

    (e,) = assess({"train": {"iterations": 3, "moved": 1.0}}).evidence
    assert e["clean"] and e["finding"] == (
        "re-measured after 3 iterations of the program's own optimisation (train(); for a script, its loop "
        "continued) that moved the params by 1 (||p_after - p_before|| / the larger of the two norms: 1 when they "
        "start at zero)")
