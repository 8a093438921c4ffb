"""Capture of a Problem from a training script (harness/capture, issue 15).

The scripts under tests/programs/script_* are small, in the shapes users write
them (argparse main(), a wp.Tape() per iteration, seeded NumPy data, updates by
assign / an optimiser kernel / warp.optim.Adam, grads={...} seeds). Expected
values are computed here by hand from the scripts' quadratic losses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from defects4warp.capture import CaptureError, ScriptSpec, format_site, parse_site, site_matches
from defects4warp.capture.targets import TargetError, resolve_target

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = Path(__file__).resolve().parent / "programs"


def capture(name, **kw):
    from defects4warp.capture.core import capture_problem

    spec = ScriptSpec(entry="train.py", **{k: v for k, v in kw.items() if k in ("args", "iteration", "params")})
    return capture_problem(PROGRAMS / name, spec, "cpu", timeout_s=60)


# -- spec (no Warp) ---------------------------------------------------------------------------------


def test_spec_json_roundtrip_and_validation():
    s = ScriptSpec("train.py", ["--iters", "3"], 2, ["train.py:10:2"])
    t = ScriptSpec.from_json(s.to_json())
    assert t == s and t.args == ["--iters", "3"] and t.iteration == 2 and t.params == ["train.py:10:2"]
    assert json.loads(s.to_json()) == {"entry": "train.py", "args": ["--iters", "3"], "iteration": 2,
                                       "params": ["train.py:10:2"]}
    assert ScriptSpec.from_json({"entry": "a.py"}).params is None
    with pytest.raises(ValueError, match="iteration"):
        ScriptSpec("a.py", iteration=0)
    with pytest.raises(ValueError, match="FILE.py:LINE"):
        ScriptSpec("a.py", params=["train.py"])
    with pytest.raises(ValueError, match="unknown key"):
        ScriptSpec.from_json('{"entry": "a.py", "argz": []}')


def test_sites():
    assert parse_site("train.py:12") == ("train.py", 12, None)
    assert parse_site("sub/m.py:3:2") == ("sub/m.py", 3, 2)
    assert format_site("train.py", 12, 1) == "train.py:12" and format_site("train.py", 12, 3) == "train.py:12:3"
    assert site_matches("train.py:12", "train.py", 12, 1)
    assert not site_matches("train.py:12", "train.py", 12, 2)
    assert site_matches("train.py:12:2", "train.py", 12, 2)
    assert not site_matches("model.py:12", "train.py", 12, 1)


def test_resolve_target(tmp_path):
    folder, spec, assumed = resolve_target(PROGRAMS / "script_assign" / "train.py", ["--iters", "2"])
    assert folder == PROGRAMS / "script_assign" and spec.entry == "train.py" and spec.args == ["--iters", "2"]
    # a folder with one __main__ file (model.py has none)
    folder, spec, assumed = resolve_target(PROGRAMS / "script_two_params")
    assert spec.entry == "train.py" and any("only file" in a for a in assumed)
    # problem.py: the adapter
    folder, spec, _ = resolve_target(PROGRAMS / "trace_clean")
    assert spec is None
    with pytest.raises(TargetError, match="adapter"):
        resolve_target(PROGRAMS / "trace_clean", iteration=2)
    # case.yaml's script block
    (tmp_path / "run_me.py").write_text("print(1)\n")
    (tmp_path / "other.py").write_text("if __name__ == '__main__':\n    pass\n")
    (tmp_path / "case.yaml").write_text("script:\n  entry: run_me.py\n  args: ['--n', '2']\n  iteration: 3\n")
    folder, spec, _ = resolve_target(tmp_path)
    assert (spec.entry, spec.args, spec.iteration) == ("run_me.py", ["--n", "2"], 3)
    folder, spec, _ = resolve_target(tmp_path, ["--n", "5"], 1)
    assert spec.args == ["--n", "5"] and spec.iteration == 1
    (tmp_path / "case.yaml").unlink()
    (tmp_path / "third.py").write_text("if __name__ == \"__main__\":\n    pass\n")
    with pytest.raises(TargetError, match="2 files"):
        resolve_target(tmp_path)


# -- capture in this process --------------------------------------------------------------------------


def assign_data():
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 1.5, 4).astype(np.float32).astype(np.float64)
    y = rng.uniform(-1.0, 1.0, 4).astype(np.float32).astype(np.float64)
    return x, y


def test_assign_quadratic_values_and_sites():
    p = capture("script_assign")
    x, y = assign_data()
    w0 = np.array([0.5, -0.25, 1.0, 2.0])
    f = lambda w: float(np.sum((w * x - y) ** 2))  # noqa: E731
    g = lambda w: 2 * (w * x - y) * x  # noqa: E731
    s = p.capture_summary()
    assert list(p.params) == ["w"]
    assert s["params"][0]["site"] == "train.py:23" and s["params"][0]["dtype"] == "float32"
    assert s["params"][0]["shape"] == [4] and s["params"][0]["chosen_by"] == "capture"
    assert s["objective"]["kind"] == "loss" and s["objective"]["produced_at"] == "train.py:28"
    assert s["objective"]["kernel"] == "residual_sq"
    assert s["stochastic"] is False and p.stochastic is False
    assert s["tapes"] >= 1 and s["launches"] == 1 and s["rerun_s"] > 0
    assert p.objective() == pytest.approx(f(w0), rel=1e-6)
    g1 = p.gradient()["w"]
    np.testing.assert_allclose(g1, g(w0), rtol=1e-5)
    np.testing.assert_array_equal(p.params["w"].numpy(), w0.astype(np.float32))  # gradient() leaves params
    np.testing.assert_array_equal(p.gradient()["w"], g1)  # re-runs are deterministic
    # another point: set through params, as the probes do
    w2 = np.array([1.0, 0.0, -0.5, 0.25], dtype=np.float32)
    p.params["w"].assign(w2)
    assert p.objective() == pytest.approx(f(w2.astype(np.float64)), rel=1e-6)
    np.testing.assert_allclose(p.gradient()["w"], g(w2.astype(np.float64)), rtol=1e-5)
    # train: the script's own update w -= 0.05 * grad
    p.params["w"].assign(w0.astype(np.float32))
    losses = p.train(2)
    w1 = w0 - 0.05 * g(w0)
    assert losses == pytest.approx([f(w0), f(w1)], rel=1e-5)
    np.testing.assert_allclose(p.params["w"].numpy(), w0 - 0.05 * g(w0) - 0.05 * g(w1), rtol=1e-5)


def test_iteration_two_models_the_second_iteration():
    p = capture("script_assign", iteration=2)
    x, y = assign_data()
    w0 = np.array([0.5, -0.25, 1.0, 2.0])
    w1 = w0 - 0.05 * 2 * (w0 * x - y) * x
    np.testing.assert_allclose(p.params["w"].numpy(), w1, rtol=1e-5)
    assert p.objective() == pytest.approx(float(np.sum((w1 * x - y) ** 2)), rel=1e-5)
    np.testing.assert_allclose(p.gradient()["w"], 2 * (w1 * x - y) * x, rtol=1e-4)
    assert p.capture_summary()["iteration"] == 2


def test_optimizer_kernel_update():
    p = capture("script_optkernel")
    s = p.capture_summary()
    assert s["params"][0]["site"] == "train.py:25" and "passed to a launch" in s["params"][0]["grad_used_by"]
    assert p.objective() == pytest.approx(0.5 * 1 + 0.5 * 2 * 4 + 0.5 * 3 * 9)
    np.testing.assert_allclose(p.gradient()["w"], [-1.0, -4.0, -9.0])


def test_warp_optim_adam():
    p = capture("script_adam")
    rng = np.random.default_rng(3)
    data = rng.normal(size=4).astype(np.float32).astype(np.float64)
    s = p.capture_summary()
    assert list(p.params) == ["p"] and s["params"][0]["site"] == "train.py:16"
    assert p.objective() == pytest.approx(float(np.sum(data ** 2)), rel=1e-6)
    np.testing.assert_allclose(p.gradient()["p"], -2 * data, rtol=1e-5)
    losses = p.train(2)
    assert len(losses) == 2 and losses[0] == pytest.approx(float(np.sum(data ** 2)), rel=1e-6)
    assert losses[1] < losses[0]  # Adam moved p


def test_seeded_backward_objective_and_printed_loss_mismatch():
    p = capture("script_seeds")
    t = np.array([1.0, -1.0, 0.5, 2.0])
    s = p.capture_summary()
    # the script prints mean((w - t)^2) and seeds the sum: the objective is the loss it prints
    assert s["objective"]["kind"] == "seeded" and s["objective"]["reported"] == "mean"
    assert "the loss the script prints" in s["objective"]["description"]
    assert p.objective_reduction == "mean" and p.stochastic is False
    assert p.objective() == pytest.approx(float(np.mean(t ** 2)))  # mean at w = 0
    assert s["objective"]["value"] == pytest.approx(float(np.mean(t ** 2)))
    np.testing.assert_allclose(p.gradient()["w"], -2 * t)  # the gradient of the seeded sum: 4x the mean's
    f = [x for x in s["findings"] if x["id"] == "seed_objective_mismatch"]
    assert f and f[0]["data"]["matches"] == "mean" and f[0]["data"]["printed"] == [pytest.approx(np.mean(t ** 2))]


def test_a_loss_printed_after_the_update_is_matched_at_the_next_backward():
    p = capture("script_seeds_after")  # prints mean((w - t)^2) at the updated w, seeds the sum
    t = np.array([1.0, -1.0, 0.5, 2.0])
    s = p.capture_summary()
    f = [x for x in s["findings"] if x["id"] == "seed_objective_mismatch"]
    assert f and f[0]["data"]["matches"] == "mean" and p.objective_reduction == "mean"
    assert f[0]["data"]["printed"] == [pytest.approx(float(np.mean((0.2 * t - t) ** 2)), abs=1e-6)]
    assert p.objective() == pytest.approx(float(np.mean(t ** 2)))  # the mean at the captured point, w = 0


def test_seeds_matching_the_printed_mean_keep_the_seeded_objective():
    p = capture("script_seeds_fixed")
    t = np.array([1.0, -1.0, 0.5, 2.0])
    s = p.capture_summary()
    assert s["findings"] == [] and p.objective_reduction is None and "reported" not in s["objective"]
    assert "seed-weighted sum" in s["objective"]["description"]
    assert p.objective() == pytest.approx(float(np.mean(t ** 2)), rel=1e-6)  # sum(0.25 * (w - t)^2)
    np.testing.assert_allclose(p.gradient()["w"], -2 * t / 4, rtol=1e-6)


def test_carried_grad_repeated_calls_continue_the_script():
    p = capture("script_carry")
    t = np.array([1.0, -2.0, 0.5])
    s = p.capture_summary()
    assert p.carried == ["w"] and [f["id"] for f in s["findings"]] == ["grad_carried"]
    assert any("continue the script" in a for a in s["assumptions"])
    g = [p.gradient()["w"] for _ in range(3)]
    for m, gm in enumerate(g, 1):  # the script's m-th iteration from the same point adds onto the carried .grad
        np.testing.assert_allclose(gm, m * -2 * t, rtol=1e-12)
    np.testing.assert_array_equal(p.params["w"].numpy(), np.zeros(3))  # params left at the point
    # another point starts again from the k-th iteration
    p.params["w"].assign(np.ones(3))
    np.testing.assert_allclose(p.gradient()["w"], 2 * (1 - t), rtol=1e-12)
    np.testing.assert_allclose(p.gradient()["w"], 4 * (1 - t), rtol=1e-12)
    p.params["w"].assign(np.zeros(3))
    # a script with fewer iterations than calls: the last call returns what its last iteration left
    q = capture("script_carry", args=["--iters", "2"])
    g = [q.gradient()["w"] for _ in range(3)]
    np.testing.assert_allclose(g[2], 2 * -2 * t, rtol=1e-12)
    assert q.chain_short == 2 and any("stopped" in a for a in q.capture_summary()["assumptions"])


def test_reported_loss_of_several_seeded_terms_is_fitted_from_its_prints():
    t = np.array([1.0, -2.0, 0.5, 3.0])
    w = np.array([0.2, 0.1, -0.3, 0.4])
    truth = float(np.mean((w - t) ** 2) + 0.3 * np.sum(w ** 2))
    p = capture("script_seed_terms")  # prints mean(fit) + 0.3 * sum(reg), seeds reg with 1
    s = p.capture_summary()
    f = [x for x in s["findings"] if x["id"] == "seed_objective_mismatch"]
    assert f and f[0]["data"]["weights"] == [0.25, 0.3] and f[0]["data"]["seeded_weights"] == [0.25, 1.0]
    assert s["objective"]["reported"] == "weighted" and p.stochastic is False
    assert p.objective() == pytest.approx(truth, rel=1e-12)
    np.testing.assert_allclose(p.gradient()["w"], 0.5 * (w - t) + 2 * w, rtol=1e-12)  # the seeded function's
    q = capture("script_seed_terms", args=["--match"])
    assert q.capture_summary()["findings"] == [] and q.objective_weights is None
    assert q.objective() == pytest.approx(truth, rel=1e-12)
    np.testing.assert_allclose(q.gradient()["w"], 0.5 * (w - t) + 0.6 * w, rtol=1e-12)


def test_seeds_set_by_hand_on_grad_are_the_objective():
    t = np.array([1.0, -1.0, 0.5])
    wts = np.array([0.5, 0.25, 0.25])
    for args in (["--copy"], []):
        p = capture("script_hand_seed", args=args)
        s = p.capture_summary()
        assert s["objective"]["kind"] == "seeded" and ".grad set by hand" in s["objective"]["description"]
        assert p.hand_seed_sites == {("train.py", 22, 1)}
        assert p.objective() == pytest.approx(float(np.dot(wts, t ** 2)), rel=1e-12)  # at w = 0
        np.testing.assert_allclose(p.gradient()["w"], -2 * wts * t, rtol=1e-12)


def test_a_hand_set_seed_buffer_emptied_and_reused_continues_the_script():
    t = np.array([1.0, -1.0, 0.5])
    wts = np.array([0.5, 0.25, 0.25])
    p = capture("script_hand_seed")  # e.grad = weights each iteration; tape.zero() empties weights
    s = p.capture_summary()
    f = [x for x in s["findings"] if x["id"] == "seed_buffer_reused"]
    assert p.stale_seed is True and f and f[0]["data"]["seed_sum_next"] == 0.0
    g = [p.gradient()["w"] for _ in range(3)]
    np.testing.assert_allclose(g[0], -2 * wts * t, rtol=1e-12)
    assert not np.any(g[1]) and not np.any(g[2])  # the script's own later iterations are seeded with zeros
    q = capture("script_hand_seed", args=["--copy"])  # a fresh copy each iteration
    assert q.stale_seed is False and q.capture_summary()["findings"] == []
    g = [q.gradient()["w"] for _ in range(3)]
    assert all(np.array_equal(g[0], x) for x in g[1:])


@pytest.mark.parametrize("args", [[], ["--copy"]])
def test_param_reaching_the_tape_only_through_clone_or_copy(args):
    p = capture("script_clone", args=args)
    v = np.array([0.5, 1.0, 2.0])
    t = np.array([1.0, 4.0, 0.25])
    assert list(p.params) == ["v0"] and p.capture_summary()["params"][0]["site"] == "train.py:20"
    assert p.objective() == pytest.approx(float(np.sum((v * v - t) ** 2)), rel=1e-12)
    np.testing.assert_allclose(p.gradient()["v0"], 4 * v * (v * v - t), rtol=1e-12)


def test_clone_before_the_tape_keeps_the_param_and_its_zero_gradient():
    # the clone that maps the param to what the tape reads runs before `with tape:`: it belongs to the iteration,
    # the param is v0 (the update writes it and consumes its .grad), and objective(p) sets v0 before the clone, so
    # the loss moves with p while the .grad the script's update reads stays zero (the tape_scope bug, as it is)
    p = capture("script_clone", args=["--outside"])
    v = np.array([0.5, 1.0, 2.0])
    t = np.array([1.0, 4.0, 0.25])
    s = p.capture_summary()
    assert list(p.params) == ["v0"] and s["params"][0]["site"] == "train.py:20"
    assert p.objective() == pytest.approx(float(np.sum((v * v - t) ** 2)), rel=1e-12)
    p.params["v0"].assign(2 * v)
    assert p.objective() == pytest.approx(float(np.sum((4 * v * v - t) ** 2)), rel=1e-12)
    np.testing.assert_array_equal(p.gradient()["v0"], np.zeros(3))
    assert any("before any launch of the iteration, taped or not" in a for a in s["assumptions"])


def test_a_grads_seed_attached_as_the_adjoint_and_emptied_continues_the_script():
    # grads={e: seed} where e has no .grad: Warp attaches seed itself, tape.zero() empties it for the next iteration
    p = capture("script_seed_dict")
    s = p.capture_summary()
    f = [x for x in s["findings"] if x["id"] == "seed_buffer_reused"]
    assert p.stale_seed and f and "grads={...} value" in f[0]["detail"] and f[0]["data"]["seed_sum_next"] == 0.0
    g = [p.gradient()["w"] for _ in range(3)]
    t = np.array([1.0, -1.0, 0.5])
    np.testing.assert_allclose(g[0], -2 * t / 3, rtol=1e-12)
    assert not np.any(g[1]) and not np.any(g[2])
    q = capture("script_seed_dict", args=["--fresh"])  # a new seed array each iteration
    assert not q.stale_seed and q.capture_summary()["findings"] == []


@pytest.mark.parametrize("name,args", [("script_carry", ["--zero"]), ("script_carry_minibatch", [])])
def test_zeroed_grad_repeated_calls_restart(name, args):
    p = capture(name, args=args)
    assert p.carried == [] and p.capture_summary()["findings"] == []
    g = [p.gradient()["w"] for _ in range(3)]
    assert all(np.array_equal(g[0], x) for x in g[1:]) and np.any(g[0])


def test_two_params_by_site_and_requires_grad_input_left_out():
    p = capture("script_two_params")
    rng = np.random.default_rng(11)
    x = rng.uniform(1.0, 2.0, 3)
    a, b = np.array([0.5, 1.0, -1.5]), 0.25
    z = a * x + b
    s = p.capture_summary()
    assert [q["site"] for q in s["params"]] == ["train.py:10", "train.py:10:2"]
    assert [q["shape"] for q in s["params"]] == [[3], [1]] and s["params"][0]["dtype"] == "float64"
    assert s["candidates"] == [{"site": "train.py:18", "why_not": "its .grad is not used after the backward"}]
    assert s["objective"]["produced_at"] == "train.py:25" and s["objective"]["kernel"] == "affine_loss"
    assert p.objective() == pytest.approx(float(np.sum(z ** 2)), rel=1e-12)
    g = p.gradient()
    # allocated by the helper make_param (train.py:10): named after the variables its callers assign
    assert list(p.params) == ["a", "b"] and [q["name"] for q in s["params"]] == ["a", "b"]
    np.testing.assert_allclose(g["a"], 2 * z * x, rtol=1e-12)
    np.testing.assert_allclose(g["b"], [2 * np.sum(z)], rtol=1e-12)


def test_repeated_backward_gradient_is_what_the_script_consumes():
    p = capture("script_double")
    c = np.array([1.0, 2.0, -1.0])
    s = p.capture_summary()
    assert list(p.params) == ["c"] and s["gradient_after_backward"] == 2
    assert any("after backward 2" in a for a in s["assumptions"])
    assert p.objective() == pytest.approx(float(np.sum(c ** 3)))
    np.testing.assert_allclose(p.gradient()["c"], 2 * 3 * c ** 2)  # backward run twice without a zero between


def test_param_override():
    p = capture("script_two_params", params=["train.py:10:2"])
    assert list(p.params) == ["b"] and p.capture_summary()["params"][0]["site"] == "train.py:10:2"
    assert p.capture_summary()["params"][0]["chosen_by"] == "--param"
    with pytest.raises(CaptureError, match="--param train.py:99"):
        capture("script_two_params", params=["train.py:99"])


def test_unseeded_noise_is_stochastic_and_carried_grad_is_a_finding():
    p = capture("script_noise")
    s = p.capture_summary()
    assert p.stochastic is True and s["stochastic"] is True
    v = s["stochastic_objectives"]
    assert len(v) == 3 and len(set(v)) > 1
    assert any("stochastic" in a for a in s["assumptions"])
    assert [f["id"] for f in s["findings"]] == ["grad_carried"]  # the script never zeroes w.grad


@pytest.mark.parametrize("name,pattern", [
    ("script_nobackward", r"ended \(end\) after 0 Tape.backward\(\) call\(s\), so it has no 1st iteration.*make_problem"),
    ("script_nonscalar", r"non-scalar array \(shape \(3,\)\) without seeds.*grads=\{array: seed\}.*make_problem"),
    ("script_graph", r"captures a CUDA graph.*make_problem"),
    ("script_subprocess", r"starts another process \(subprocess\).*make_problem"),
    ("script_interop", r"param allocated at train.py:13 comes from or goes to another framework \(wp.from_dlpack\)"
                       r".*make_problem"),
])
def test_limits_said_plainly(name, pattern):
    with pytest.raises(CaptureError, match=pattern):
        capture(name)


def test_iteration_past_the_end():
    with pytest.raises(CaptureError, match=r"after 3 Tape.backward\(\) call\(s\).*--iteration 3"):
        capture("script_optkernel", iteration=5, args=["--iters", "3"])


def test_script_failing_after_the_backward_is_captured(tmp_path):
    from defects4warp.capture.core import capture_problem

    src = (PROGRAMS / "script_optkernel" / "train.py").read_text()
    (tmp_path / "train.py").write_text(src.replace('print("loss", float(loss.numpy()[0]))',
                                                   'raise RuntimeError("no display")'))
    p = capture_problem(tmp_path, ScriptSpec("train.py"))
    np.testing.assert_allclose(p.gradient()["w"], [-1.0, -4.0, -9.0])
    assert "no display" in p.capture_summary()["stopped"]


def test_param_whose_requires_grad_is_set_after_allocation(tmp_path):
    # `w.requires_grad = True` after the allocation (as Warp's example_inverse_kinematics.py does with
    # model.joint_q): the capture found the param but had no value for it at the tape start (CaptureError)
    from defects4warp.capture.core import capture_problem

    src = (PROGRAMS / "script_optkernel" / "train.py").read_text()
    src = src.replace("    w = wp.zeros(3, dtype=float, requires_grad=True)\n",
                      "    w = wp.zeros(3, dtype=float)\n    w.requires_grad = True\n")
    assert "w.requires_grad = True" in src
    (tmp_path / "train.py").write_text(src)
    p = capture_problem(tmp_path, ScriptSpec("train.py", iteration=2))
    assert list(p.params) == ["w"]
    w1 = np.array([0.1, 0.4, 0.9])  # 0 - 0.1 * grad at 0 = -[1, 4, 9]
    np.testing.assert_allclose(p.params["w"].numpy(), w1, rtol=1e-6)
    np.testing.assert_allclose(p.gradient()["w"], (w1 - [1.0, 2.0, 3.0]) * [1.0, 2.0, 3.0], rtol=1e-5)


def test_an_unrecorded_launch_inside_the_tape_writes_no_param(tmp_path):
    # a solver launched with record_tape=False inside the tape block, its adjoint registered by
    # tape.record_func (Warp's example_fluid_checkpoint_custom_backward.py): its output y is read by a recorded
    # launch and written by none, but it is an intermediate, not a param
    from defects4warp.capture.core import capture_problem

    (tmp_path / "train.py").write_text("""import numpy as np
import warp as wp


@wp.kernel
def double(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 2.0 * x[i]


@wp.kernel
def double_adj(gy: wp.array(dtype=float), gx: wp.array(dtype=float)):
    i = wp.tid()
    gx[i] += 2.0 * gy[i]


@wp.kernel
def sumsq(y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, y[i] * y[i])


@wp.kernel
def total(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i])


@wp.kernel
def sgd(x: wp.array(dtype=float), g: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] - 0.01 * g[i]


def main():
    x = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    for it in range(3):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(double, dim=3, inputs=[x], outputs=[y], record_tape=False)
            tape.record_func(lambda: wp.launch(double_adj, dim=3, inputs=[y.grad], outputs=[x.grad],
                                               record_tape=False), arrays=[x, y])
            wp.launch(sumsq, dim=3, inputs=[y], outputs=[loss])
            wp.launch(total, dim=3, inputs=[x], outputs=[loss])
        tape.backward(loss=loss)
        wp.launch(sgd, dim=3, inputs=[x, x.grad])
        print("dloss/dy", y.grad.numpy())
        tape.zero()


if __name__ == "__main__":
    main()
""")
    p = capture_problem(tmp_path, ScriptSpec("train.py"))
    assert [s["site"] for s in p.capture_summary()["params"]] == ["train.py:36"]
    np.testing.assert_allclose(p.gradient()["x"], [9.0, 17.0, 25.0], rtol=1e-6)  # loss = sum((2x)^2 + x)


def test_exit_before_the_first_backward_says_where_and_what_it_printed(tmp_path):
    from defects4warp.capture.core import capture_problem

    (tmp_path / "train.py").write_text("import argparse\n\nimport warp as wp\n\n\ndef main():\n"
                                       "    ap = argparse.ArgumentParser()\n"
                                       "    ap.add_argument('--data', required=True)\n"
                                       "    ap.parse_args()\n\n\nmain()\n")
    with pytest.raises(CaptureError) as e:
        capture_problem(tmp_path, ScriptSpec("train.py", ["--iters", "3"]))
    msg = str(e.value)
    assert "exited (exit 2) at train.py:9 (ap.parse_args()) before its first Tape.backward()" in msg
    assert "the following arguments are required: --data" in msg and "python train.py --iters 3" in msg
    assert "make_problem" not in msg


def test_no_backward_within_time_limit(tmp_path):
    from defects4warp.capture.core import capture_problem

    (tmp_path / "train.py").write_text("import time\nimport numpy as np\nimport warp as wp\n\n"
                                       "x = wp.array(np.ones(3), dtype=float)\n"
                                       "while True:\n    time.sleep(0.01)\n")
    with pytest.raises(CaptureError, match=r"no 1st Tape.backward\(\) was reached in 0.5 s \(the time limit of one run of the script: diagnose and "
                                           r"run give it 80% of --timeout, at most --timeout less 10 s\); by "
                                           r"then it had allocated 1 array\(s\), entered 0 tape block\(s\), made 0 "
                                           r"launch\(es\) and finished 0 backward\(s\); it was running train.py:[67]"):
        capture_problem(tmp_path, ScriptSpec("train.py"), timeout_s=0.5)


def test_source_evidence_only_from_the_files_the_script_ran(tmp_path):
    from defects4warp.capture.core import capture_problem
    from defects4warp.engines.assess.source import scan

    (tmp_path / "train.py").write_text((PROGRAMS / "script_assign" / "train.py").read_text())
    draw = "import numpy as np\n\n\ndef noise():\n    return np.random.normal(size=3)\n"
    (tmp_path / "old_experiment.py").write_text(draw)  # a sibling script that never runs
    (tmp_path / "vendor" / "helpers").mkdir(parents=True)
    (tmp_path / "vendor" / "helpers" / "__init__.py").write_text(draw)  # a vendored copy the script never loads
    files = capture_problem(tmp_path, ScriptSpec("train.py"), check_determinism=False).capture_summary()["files"]
    assert files == ["train.py"]
    everything = {f["file"] for f in scan(tmp_path, {})[0]}
    assert {"old_experiment.py", "vendor/helpers/__init__.py"} <= everything
    assert {f["file"] for f in scan(tmp_path, {"capture": {"files": files}})[0]} <= {"train.py"}


def test_two_folders_with_a_module_of_the_same_name_in_one_process(tmp_path):
    from defects4warp.capture.core import capture_problem

    src = (PROGRAMS / "script_carry" / "train.py").read_text()
    src = src.replace("import warp as wp\n", "import warp as wp\nfrom scale import S\n", 1)
    src = src.replace("inputs=[w, t, loss]", "inputs=[w, t, loss]) if S == 1.0 else wp.launch(sq_loss, dim=3, "
                      "inputs=[w, wp.array(np.array([2.0, -4.0, 1.0]), dtype=wp.float64), loss]")
    for name, s in (("a", "1.0"), ("b", "2.0")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.py").write_text(src)
        (tmp_path / name / "scale.py").write_text(f"S = {s}\n")
    t = np.array([1.0, -2.0, 0.5])
    pa = capture_problem(tmp_path / "a", ScriptSpec("train.py", ["--zero"]), check_determinism=False)
    pb = capture_problem(tmp_path / "b", ScriptSpec("train.py", ["--zero"]), check_determinism=False)
    assert pb.objective() == pytest.approx(float(np.sum((2 * t) ** 2)))  # b's scale.py, not a's
    assert pa.objective() == pytest.approx(float(np.sum(t ** 2)))


def test_user_files_untouched():
    folder = PROGRAMS / "script_assign"
    before = {f.name: f.read_bytes() for f in folder.iterdir() if f.is_file()}
    capture("script_assign").gradient()
    assert {f.name: f.read_bytes() for f in folder.iterdir() if f.is_file()} == before


# -- through the worker and the engine ----------------------------------------------------------------


@pytest.mark.slow
def test_worker_runs_probes_on_a_script(tmp_path):
    from defects4warp.isolation import run_worker

    res = run_worker(PROGRAMS / "script_assign", options={"probes": ["determinism", "fd"]},
                     script=ScriptSpec("train.py"), timeout_s=300)
    assert res.failure is None, res.stderr_tail
    doc = res.doc
    assert doc["capture"]["params"][0]["site"] == "train.py:23"
    assert doc["protocol"]["params"] == {"w": {"shape": [4], "dtype": "float32", "size": 4}}
    assert doc["fd"]["calls"][0]["elements"]["signature"] == "agrees"


@pytest.mark.slow
def test_worker_hang_before_the_backward_says_what_ran(tmp_path):
    from defects4warp.isolation import run_worker

    (tmp_path / "train.py").write_text("import time\nimport numpy as np\nimport warp as wp\n\n"
                                       "x = wp.array(np.ones(3), dtype=float)\n"
                                       "while True:\n    time.sleep(0.01)\n")
    res = run_worker(tmp_path, options={"probes": ["determinism"]}, script=ScriptSpec("train.py"), timeout_s=20)
    assert not res.timed_out  # the capture's own limit (20 s - 10 s margin) ended it, not the kill
    err = res.doc["errors"][0]["error"]
    assert "no 1st Tape.backward() was reached in 10 s" in err and "allocated 1 array(s)" in err
    assert "it was running train.py:" in err


@pytest.mark.slow
def test_worker_reports_capture_error():
    from defects4warp.isolation import run_worker

    res = run_worker(PROGRAMS / "script_nonscalar", options={"probes": ["determinism"]},
                     script=ScriptSpec("train.py"), timeout_s=300)
    assert "CaptureError" in res.failure and "non-scalar" in res.failure


@pytest.mark.slow
@pytest.mark.parametrize("name,verdict", [("script_inplace", "bug"), ("script_inplace_fixed", "no_bug")])
def test_reference_engine_on_scripts(name, verdict):
    from defects4warp.engines.base import check_diagnosis
    from defects4warp.engines.reference import ReferenceEngine

    d = ReferenceEngine(differential=False).diagnose(str(PROGRAMS / name), "cpu", "small", script=ScriptSpec("train.py"))
    assert d["verdict"] == verdict, d.get("error") or d["evidence"][:3]
    assert d["capture"]["params"][0]["name"] == "k"
    assert check_diagnosis(d) is None


@pytest.mark.slow
def test_cli_prints_capture_first():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "defects4warp", "diagnose", "--engine", "fd-only",
                          str(PROGRAMS / "script_assign" / "train.py"), "--", "--iters", "2"],
                         capture_output=True, text=True, env=env, timeout=600)
    text = out.stdout
    assert "captured from train.py --iters 2" in text, out.stderr[-2000:]
    assert text.index("captured from") < text.index("verdict")
    assert "train.py:23" in text and "float32" in text and "produced by residual_sq launched at train.py:28" in text
    assert "verdict no_bug" in text


@pytest.mark.slow
def test_capture_on_warp_1_12_1():
    from defects4warp.envs import ensure_env
    from defects4warp.paths import child_pythonpath

    py = ensure_env("1.12.1")
    code = ("import json, numpy as np; from defects4warp.capture import ScriptSpec; "
            "from defects4warp.capture.core import capture_problem; import warp as wp; "
            f"p = capture_problem({str(PROGRAMS / 'script_two_params')!r}, ScriptSpec('train.py')); "
            "g = p.gradient(); "
            "print(json.dumps({'warp': wp.config.version, 'obj': p.objective(), "
            "'g': {k: v.tolist() for k, v in g.items()}, 'sites': [q['site'] for q in p.capture_summary()['params']]}))")
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=child_pythonpath({})))
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    rng = np.random.default_rng(11)
    x = rng.uniform(1.0, 2.0, 3)
    z = np.array([0.5, 1.0, -1.5]) * x + 0.25
    assert doc["warp"] == "1.12.1" and doc["sites"] == ["train.py:10", "train.py:10:2"]
    assert doc["obj"] == pytest.approx(float(np.sum(z ** 2)), rel=1e-12)
    np.testing.assert_allclose(doc["g"]["a"], 2 * z * x, rtol=1e-12)


def test_a_case_folder_names_its_variants_and_a_variant_folder_takes_the_case_script_block(tmp_path):
    from defects4warp.capture.targets import TargetError, resolve_target

    case = tmp_path / "some-case"
    (case / "buggy").mkdir(parents=True)
    (case / "buggy" / "train.py").write_text("if __name__ == '__main__':\n    pass\n")
    (case / "case.yaml").write_text("script:\n  entry: train.py\n  args: ['--iters', '3']\n  iteration: 2\n")
    with pytest.raises(TargetError, match=r"is a case folder: its variants \(buggy/\) hold train.py"):
        resolve_target(case)
    folder, spec, assumed = resolve_target(case / "buggy")
    assert folder == (case / "buggy").resolve()
    assert (spec.entry, list(spec.args), spec.iteration) == ("train.py", ["--iters", "3"], 2)
    assert any("--iters 3" in a for a in assumed)


# -- struct arguments on releases without wp.types.is_struct (Warp <= 1.10.1) ------------------------


def test_struct_detected_without_wp_types_is_struct(monkeypatch):
    """Warp 1.0.2 to 1.10.1 have no ``wp.types.is_struct``: the recorder falls back on Warp's struct-instance
    class, so a struct launch argument's array fields are still read and written by the launch."""
    import importlib.util

    import warp as wp

    from defects4warp.measure import trace_state

    spec = importlib.util.spec_from_file_location("script_struct_train", PROGRAMS / "script_struct" / "train.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    s = mod.State()
    s.x = wp.zeros(2, dtype=float)
    assert trace_state._is_struct(s) and not trace_state._is_struct(s.x)
    monkeypatch.delattr(wp.types, "is_struct")
    monkeypatch.setattr(trace_state, "_STRUCT_INSTANCE", [])
    assert trace_state._is_struct(s)
    assert not trace_state._is_struct(s.x) and not trace_state._is_struct(3.0) and not trace_state._is_struct(None)
    assert [n for n, _ in trace_state._struct_fields(s)] == ["x", "y"]


_STRUCT_CAPTURE = (
    "import json, numpy as np; from defects4warp.capture import ScriptSpec; "
    "from defects4warp.capture.core import capture_problem; import warp as wp; "
    "p = capture_problem({folder!r}, ScriptSpec('train.py')); g = p.gradient(); "
    "print('RESULT ' + json.dumps({{'warp': wp.config.version, 'obj': p.objective(), "
    "'g': {{k: v.tolist() for k, v in g.items()}}, 'sites': [q['site'] for q in p.capture_summary()['params']]}}))")


@pytest.mark.slow
@pytest.mark.parametrize("release", ["1.0.2", "1.10.1", "1.19.0"])
def test_capture_through_struct_arguments_on_old_releases(release):
    """tests/programs/script_struct: the loss reaches the param only through ``@wp.struct`` launch arguments.
    On Warp <= 1.10.1 the capture answered "no parameter found (the loss does not depend on it)" before the
    recorder's struct fallback (measured on 1.0.2, 1.9.1, 1.10.1)."""
    from defects4warp.envs import MARKER, cache_root, ensure_env
    from defects4warp.paths import child_pythonpath
    from defects4warp.run.runner import installed_warp_version

    # the installed release and the two the suite installs anyway (README: what it downloads) always run:
    # this test skipped 1.19.0 every time (the installed release has no environment folder) and 1.0.2 on a
    # first run (before another test had made its environment), passing on a second
    if release in (installed_warp_version(), "1.0.2", "1.12.1"):
        python = ensure_env(release)
    elif (cache_root() / f"warp-{release}" / MARKER).exists():
        python = cache_root() / f"warp-{release}" / "bin" / "python"
    else:
        pytest.skip(f"the Warp {release} environment has not been created (`defects4warp envs prepare --warp {release}`)")
    code = _STRUCT_CAPTURE.format(folder=str(PROGRAMS / "script_struct"))
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=child_pythonpath({})))
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert out.returncode == 0 and line, out.stderr[-3000:]
    doc = json.loads(line[len("RESULT "):])
    x = np.random.default_rng(5).uniform(1.0, 2.0, 4).astype(np.float32)
    k = np.array([0.5, 1.0, -1.5, 2.0], dtype=np.float32)
    y = k * x + np.float32(0.25)
    assert doc["warp"] == release and doc["sites"] == ["train.py:37"]
    assert doc["obj"] == pytest.approx(float(np.sum(y.astype(np.float64) ** 2)), rel=1e-5)
    np.testing.assert_allclose(doc["g"]["k"], 2 * y * x, rtol=1e-5)


_CLONE_CAPTURE = """
import json, sys
from defects4warp.capture import ScriptSpec, CaptureError
from defects4warp.capture.core import capture_problem
import warp as wp
out = {}
for a in ([], ["--copy"], ["--outside"]):
    try:
        p = capture_problem(sys.argv[1], ScriptSpec("train.py", a), check_determinism=False)
        s = p.capture_summary()
        out[" ".join(a)] = {"sites": [q["site"] for q in s["params"]], "g": p.gradient()["v0"].tolist(),
                            "notes": [x for x in s["assumptions"] if "the tape does not record it" in x]}
    except CaptureError as exc:
        out[" ".join(a)] = {"error": str(exc)}
print("RESULT " + json.dumps({"warp": wp.config.version, "out": out}))
"""


@pytest.mark.slow
def test_clone_inside_the_tape_on_warp_1_0_2():
    """Warp 1.0.2 records no wp.clone / wp.copy on the tape (measured: v0.grad stays zero, 1 launch on the tape;
    1.1.0 records it). The capture still finds the param the script means (the clone's source, whose .grad it
    uses), reproduces the release's zero gradient, and says why; a clone made before the tape leaves the same param."""
    from defects4warp.envs import MARKER, cache_root
    from defects4warp.paths import child_pythonpath

    env = cache_root() / "warp-1.0.2"
    if not (env / MARKER).exists():
        pytest.skip("the Warp 1.0.2 environment has not been created (defects4warp.envs.ensure_env)")
    out = subprocess.run([str(env / "bin" / "python"), "-c", _CLONE_CAPTURE, str(PROGRAMS / "script_clone")],
                         capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=child_pythonpath({})))
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert out.returncode == 0 and line, out.stderr[-3000:]
    doc = json.loads(line[len("RESULT "):])
    assert doc["warp"] == "1.0.2"
    for key, at in (("", "wp.clone at train.py:30 "), ("--copy", "wp.copy ")):
        r = doc["out"][key]
        assert r.get("sites") == ["train.py:20"], r
        assert r["g"] == [0.0, 0.0, 0.0]
        assert len(r["notes"]) == 1 and r["notes"][0].startswith(at + "of v0 (train.py:20)")
    # a clone made before the tape belongs to the iteration: the param is still v0, with the zero .grad the
    # script's update reads, and no note (the clone is outside every tape block)
    r = doc["out"]["--outside"]
    assert r.get("sites") == ["train.py:20"] and r["g"] == [0.0, 0.0, 0.0] and r["notes"] == [], r


# -- capture errors name the script's line -----------------------------------------------------------------

_LOOP_SCRIPT = '''import numpy as np
import warp as wp


@wp.kernel
def sq(v: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, (v[i] - 2.0) * (v[i] - 2.0))


@wp.kernel
def sq3(v: wp.array(dtype=float), o: wp.array(dtype=float)):
    i = wp.tid()
    o[i] = v[i] * v[i]


def check(x, n):
    if x.shape[0] != n:
        raise ValueError(f"expected {n} values, got {x.shape[0]}")


def main(mode):
    w = wp.array(np.ones(3), dtype=float, requires_grad=True)
    hist = {}
    for it in range(3):
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        out = wp.zeros(3, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(sq, dim=3, inputs=[w], outputs=[loss])
            wp.launch(sq3, dim=3, inputs=[w], outputs=[out])
            if mode == "check":
                check(w, 4)
        if mode == "vector":
            tape.backward(out)
        else:
            tape.backward(loss)
        w.assign(w.numpy() - 0.1 * w.grad.numpy())
        tape.zero()
        print(f"iter {it} loss {loss.numpy()[0]:.6f}")
        if mode == "late":
            hist[it] = hist[it - 1] + 1.0


if __name__ == "__main__":
    import sys

    main(sys.argv[1])
'''


def _loop_script(tmp_path):
    (tmp_path / "train.py").write_text(_LOOP_SCRIPT)
    return tmp_path


def test_an_error_raised_by_the_script_names_its_line(tmp_path):
    from defects4warp.capture.core import capture_problem

    folder = _loop_script(tmp_path)
    with pytest.raises(CaptureError) as ei:
        capture_problem(folder, ScriptSpec("train.py", ["check"]), "cpu", timeout_s=60)
    msg = str(ei.value)
    assert msg.startswith("train.py raised ValueError at train.py:19 (raise ValueError(")
    assert "expected 4 values, got 3" in msg
    # the line of the backward call the capture refused
    with pytest.raises(CaptureError) as ei:
        capture_problem(folder, ScriptSpec("train.py", ["vector"]), "cpu", timeout_s=60)
    msg = str(ei.value)
    assert "non-scalar array (shape (3,))" in msg and "(the call at train.py:35 (tape.backward(out)))" in msg
    # after training started, before the backward the capture needs: the exception's line
    with pytest.raises(CaptureError) as ei:
        capture_problem(folder, ScriptSpec("train.py", ["late"], iteration=2), "cpu", timeout_s=60)
    msg = str(ei.value)
    assert msg.startswith("train.py raised KeyError at train.py:42 (hist[it] = hist[it - 1] + 1.0): -1 (before")


def test_an_exception_after_the_needed_backward_is_where_the_capture_stopped(tmp_path):
    from defects4warp.capture.core import capture_problem

    p = capture_problem(_loop_script(tmp_path), ScriptSpec("train.py", ["late"]), "cpu", timeout_s=60)
    s = p.capture_summary()
    assert s["stopped"] == ("raised after the needed backward: KeyError: -1 at train.py:42 "
                            "(hist[it] = hist[it - 1] + 1.0)")
    note = [a for a in s["assumptions"] if a.startswith("the script stopped with an exception")]
    assert note == ["the script stopped with an exception after backward 1 (KeyError: -1 at train.py:42 (hist[it] = "
                    "hist[it - 1] + 1.0)): the capture stopped at that exception, with what it needed from backward 1"]
    assert p.objective() == pytest.approx(3.0)
    np.testing.assert_allclose(p.gradient()["w"], [-2.0, -2.0, -2.0])


def test_params_are_named_after_the_scripts_variables():
    """A list comprehension allocating params names them NAME[i]; a helper's `return wp.array(...)` takes the
    name its caller assigns; a plain assignment its own name (before: vs, train.py:17:2 and train.py:13)."""
    from defects4warp.capture.core import capture_problem

    p = capture_problem(PROGRAMS / "script_list_params", ScriptSpec("train.py"), "cpu", timeout_s=60)
    s = p.capture_summary()
    assert [(q["name"], q["site"]) for q in s["params"]] == [
        ("vs[0]", "train.py:17"), ("vs[1]", "train.py:17:2"), ("grid", "train.py:18"), ("extra", "train.py:13")]
    g = p.gradient()
    np.testing.assert_allclose(g["vs[0]"], [2.0, 2.0, 2.0])
    np.testing.assert_allclose(g["vs[1]"], [8.0, 8.0, 8.0])
    np.testing.assert_allclose(g["grid"], [[0.0, 6.0]] * 3)
    np.testing.assert_allclose(g["extra"], [1.0, 1.0, 1.0])


_COPY_NO_GRAD = '''import numpy as np
import warp as wp


@wp.kernel
def sq(v: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, v[i] * v[i])


def main():
    w = wp.array(np.array([0.5, 1.0, 2.0]), dtype=float, requires_grad=True)
    for it in range(2):
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        v = wp.zeros(3, dtype=float)
        tape = wp.Tape()
        with tape:
            wp.copy(v, w)
            wp.launch(sq, dim=3, inputs=[v], outputs=[loss])
        tape.backward(loss)
        w.assign(w.numpy() - 0.1 * w.grad.numpy())
        tape.zero()


if __name__ == "__main__":
    main()
'''


def test_a_copy_the_tape_does_not_record_still_leads_to_the_param(tmp_path):
    """wp.copy into an array without .grad inside the tape: Warp (1.1.0 to 1.19.0) records no adjoint for it,
    so the param's .grad stays zero. The capture finds the param (before: 'no parameter found') and keeps the
    script's zero gradient for the engine to judge."""
    from defects4warp.capture.core import capture_problem

    (tmp_path / "train.py").write_text(_COPY_NO_GRAD)
    p = capture_problem(tmp_path, ScriptSpec("train.py"), "cpu", timeout_s=60)
    s = p.capture_summary()
    assert [(q["name"], q["site"]) for q in s["params"]] == [("w", "train.py:12")]
    assert p.objective() == pytest.approx(5.25)
    np.testing.assert_array_equal(p.gradient()["w"], [0.0, 0.0, 0.0])
    notes = [a for a in s["assumptions"] if "the tape does not record it" in a]
    assert len(notes) == 1 and notes[0].startswith("wp.copy of w (train.py:12) ran inside the "
                                                   "tape block of backward 1")


HAND_ADJOINT_SEED = """import numpy as np
import warp as wp


@wp.kernel
def advect(x: wp.array(dtype=wp.float64), d: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d[i] = x[i] * x[i] + wp.float64(0.5) * x[i]


@wp.kernel
def misfit(d: wp.array(dtype=wp.float64), t: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    r = d[i] - t[i]
    wp.atomic_add(loss, 0, r * r)


def main():
    x = wp.array(np.array([0.3, -0.7, 1.1]), dtype=wp.float64, requires_grad=True)
    d = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    t = wp.array(np.array([1.0, 0.0, 2.0]), dtype=wp.float64)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    for it in range(3):
        tape = wp.Tape()
        with tape:
            wp.launch(advect, dim=3, inputs=[x], outputs=[d])
        loss.zero_()
        wp.launch(misfit, dim=3, inputs=[d, t], outputs=[loss], record_tape=False)
        # the loss's adjoint launched by hand writes d.grad = 2 (d - t): the seed of the backward
        loss.grad.fill_(1.0)
        wp.launch(misfit, dim=3, inputs=[d, t], outputs=[loss], adj_inputs=[d.grad, None], adj_outputs=[loss.grad],
                  adjoint=True, record_tape=False)
        tape.backward()
        print("loss", float(loss.numpy()[0]))
        x.assign(x.numpy() - 0.01 * x.grad.numpy())
        tape.zero()
        d.grad.zero_()


if __name__ == "__main__":
    main()
"""


def test_a_seed_computed_from_the_forward_is_frozen_at_the_gradient_point(tmp_path):
    """Warp's example_fluid_checkpoint.py seeds its backward with the hand-launched adjoint of its loss
    kernel: s = 2 (d(x) - t), a function of the params. The backward returns J^T s(x0); central
    differences of s(x) . d(x) are not that (before: -1.144, -0.504, 8.208 against -1.672, -0.252,
    -1.296), so objective() weights d(x) with the seed of the nearest gradient() point: central
    differences of it equal the gradient, in float64."""
    from defects4warp.capture.core import capture_problem

    (tmp_path / "train.py").write_text(HAND_ADJOINT_SEED)
    p = capture_problem(tmp_path, ScriptSpec("train.py"))
    assert p.capture_summary()["objective"]["kind"] == "seeded"
    x0 = p.params["x"].numpy().copy()
    g = p.gradient()["x"]
    d0 = x0 * x0 + 0.5 * x0
    np.testing.assert_allclose(g, 2 * (d0 - np.array([1.0, 0.0, 2.0])) * (2 * x0 + 0.5), rtol=1e-12)
    h = 1e-6
    fd = []
    for i in range(3):
        xp, xm = x0.copy(), x0.copy()
        xp[i] += h
        xm[i] -= h
        p.params["x"].assign(xp)
        fp = p.objective()
        p.params["x"].assign(xm)
        fm = p.objective()
        fd.append((fp - fm) / (2 * h))
    p.params["x"].assign(x0)
    np.testing.assert_allclose(fd, g, rtol=1e-6)
    assert p.summary.get("frozen_seeds") is True


# -- the optimisation iteration as the unit ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("inside", [False, True])
def test_a_launch_before_the_tape_belongs_to_the_iteration(inside):
    # source(theta) -> src runs before `with tape:` (or inside it): theta is the param either way (the update
    # writes it and reads its .grad); objective(p) sets theta before that launch, so the loss moves with p, and
    # the gradient is the .grad the update consumes: zero when the launch is off the tape (the bug, as it is)
    p = capture("script_pretape", args=["--inside"] if inside else [])
    t = np.array([1.0, 4.0, 0.25])
    s = p.capture_summary()
    assert list(p.params) == ["theta"] and s["params"][0]["site"] == "train.py:25"
    assert s["params_set_at"] == ("train.py:34" if inside else "train.py:31")
    for th in (np.array([0.5, 1.0, 2.0]), np.array([1.5, -0.5, 0.25])):
        p.params["theta"].assign(th)
        assert p.objective() == pytest.approx(float(np.sum((th * th - t) ** 2)), rel=1e-12)
        want = 4 * th * (th * th - t) if inside else np.zeros(3)
        np.testing.assert_allclose(p.gradient()["theta"], want, rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("windows", [False, True])
def test_several_backwards_per_iteration_are_summed(windows):
    # checkpointing: segment 2's tape, then segment 1 replayed under its own tape seeded with the hand-over
    # adjoint (not a loss of its own); windows: a second loss on a second tape. The update consumes the sum
    # of both backwards' .grad, intended, so no grad_carried; the objective counts the hand-over once
    p = capture("script_checkpoint", args=["--windows"] if windows else [])
    x0 = np.array([1.0, 2.0, 3.0])
    s = p.capture_summary()
    assert list(p.params) == ["w"] and s["backwards_per_iteration"] == 2 and s["first_backward"] == 1
    assert s["objective_backwards"] == ([1, 2] if windows else [1]) and s["findings"] == []
    for w in (np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.75])):
        p.params["w"].assign(w)
        mid = w * x0 + 1
        xf = w * mid + 1
        f = float(np.sum(xf ** 2)) + (float(np.sum(mid ** 2)) if windows else 0.0)
        g = 2 * xf * (mid + w * x0) + (2 * mid * x0 if windows else 0.0)
        assert p.objective() == pytest.approx(f, rel=1e-12)
        np.testing.assert_allclose(p.gradient()["w"], g, rtol=1e-12)
    q = capture("script_checkpoint", iteration=2)  # iteration 2 = backwards 3 and 4, after one update
    assert q.capture_summary()["first_backward"] == 3
    w1 = np.array([0.5, -1.0, 2.0])
    mid = w1 * x0 + 1
    w1 = w1 - 0.001 * 2 * (w1 * mid + 1) * (mid + w1 * x0)
    np.testing.assert_allclose(q.params["w"].numpy(), w1, rtol=1e-12)


def test_later_iterations_schedule():
    from defects4warp.capture.screen import later_iterations

    assert later_iterations(30) == [2, 3, 4, 8, 16]  # next three, 10 % of 30 (3), doubling from 2 * (1 + 3)
    assert later_iterations(6, 2) == [3, 4, 5]  # after a pinned iteration 2: a period-2 defect shows at 4
    assert later_iterations(1000) == [2, 3, 4, 8, 16, 100]  # at most six: 10 % kept before the doubling
    assert later_iterations(None) == [2, 3, 4] and later_iterations(1) == [] and later_iterations(3) == [2, 3]


class _Array:
    """A param with the two calls the check uses (``numpy()``, ``assign()``), float64."""

    def __init__(self, x):
        self.x = np.asarray(x, dtype=np.float64)

    def numpy(self):
        return self.x.copy()

    def assign(self, v):
        self.x = np.asarray(v, dtype=np.float64).copy()


class _Quadratic:
    """f(x) = sum(c x^2) + offset with a gradient off by ``error`` (a (n,) array), as the check sees a problem."""

    iteration = 2

    def __init__(self, x, error, offset=1e-3):
        self.offset = offset
        self.params = {"w": _Array(x)}
        self.c = np.linspace(1.0, 2.0, len(x))
        self.error = np.asarray(error, dtype=np.float64)

    def objective(self):
        return float(np.sum(self.c * self.params["w"].x ** 2)) + self.offset

    def gradient(self):
        return {"w": 2 * self.c * self.params["w"].x + self.error}


def test_the_check_of_a_later_iteration_reads_several_directions():
    """An error of the gradient orthogonal to the first random direction is invisible along it and seen along
    the next ones; a relative disagreement within the loss's rounding floor is unresolved, not an agreement."""
    from defects4warp.capture import screen

    x = np.linspace(0.5, 1.5, 8)
    scale = np.abs(x) + 0.1 * np.max(np.abs(x)) + 1e-3
    s0 = screen.STEP_REL * scale * np.random.default_rng(0).choice([-1.0, 1.0], size=8)  # the first direction
    v = np.where(np.arange(8) % 2 == 0, 1.0, -0.5)
    e = v - (v @ s0) / (s0 @ s0) * s0
    e *= 0.3 * np.linalg.norm(2 * np.linspace(1.0, 2.0, 8) * x) / np.linalg.norm(e)  # 30 % of the gradient
    one = screen.check_iteration(_Quadratic(x, e))
    assert one["status"] == "agrees" and one["rel"] < 1e-6 and "rels" not in one
    three = screen.check_iteration(_Quadratic(x, e), directions=3)
    assert three["status"] == "disagrees" and three["directions"] == three["read"] == 3 and three["rels"][0] < 1e-6
    assert max(three["rels"][1:]) > 0.03 and three["rel"] == max(three["rels"])
    assert screen.check_iteration(_Quadratic(x, 0 * e), directions=3)["status"] == "agrees"
    tiny = _Quadratic(1e-3 * x, 0.6e-3 * x, offset=1.0)  # 20-30 % off; differences of ~1e-7 beside a loss of 1
    row = screen.check_iteration(tiny)
    assert row["status"] == "unresolved" and row["floor"] and row["rel"] > 0.1 and screen._clear(row)
    assert not screen._clear({"status": "unresolved"}) and not screen._clear({"status": "disagrees"})


@pytest.mark.slow
def test_a_bug_that_shows_only_later_in_the_loop_is_diagnosed_there():
    # a display buffer the adjoint reads is refreshed between forward and backward with 0.5 (w - w_init): zero at
    # iteration 1 (the gradient agrees there), wrong once w moved; the screening checks 1, the next three (2, 3, 4),
    # 3 (10% of 30) and the doubling from 8 (8, 16), each later one along three random directions
    from defects4warp.capture.core import capture_problem

    p = capture_problem(PROGRAMS / "script_late", ScriptSpec(entry="train.py"), "cpu", timeout_s=300, screen=True)
    it = p.capture_summary()["iterations"]
    assert it["loop_iterations"] == 30 and [r["iteration"] for r in it["checked"]] == [1, 2, 3, 4, 8, 16]
    assert it["checked"][0]["status"] == "agrees" and it["checked"][0]["rel"] < 1e-3
    assert it["checked"][2]["status"] == "disagrees" and it["checked"][2]["rel"] > 0.03
    # the drift is 0.05 w at iteration 2: along the first random direction 1.3 %, along the next two 7.5 and 9.6 %
    assert it["checked"][1]["status"] == "disagrees" and it["checked"][1]["rels"][0] < 0.03 < it["checked"][1]["rel"]
    assert p.iteration == it["diagnosed"] == 2
    q = capture_problem(PROGRAMS / "script_pretape", ScriptSpec(entry="train.py", args=["--inside"]), "cpu",
                        timeout_s=300, screen=True)
    rows = q.capture_summary()["iterations"]["checked"]
    assert q.iteration == 1 and [(r["iteration"], r["status"]) for r in rows] == [(k, "agrees") for k in (1, 2, 3, 4)]


_PKG_MODEL = '''import warp as wp


@wp.kernel
def sq(w: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, w[i] * w[i])
'''
_PKG_TRAIN = '''import numpy as np
import warp as wp

from pkg.model import sq


def main():
    w = wp.array(np.array([1.0, -2.0]), dtype=wp.float64, requires_grad=True)
    for it in range(3):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(sq, dim=2, inputs=[w, loss])
        tape.backward(loss)
        w.assign(w.numpy() - 0.1 * w.grad.numpy())
        tape.zero()


if __name__ == "__main__":
    main()
'''


@pytest.mark.slow
def test_a_script_inside_a_package_runs_as_a_module_and_the_error_says_how(tmp_path):
    from defects4warp.capture.core import capture_problem
    from defects4warp.capture.targets import resolve_module

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(_PKG_MODEL)
    (tmp_path / "pkg" / "train.py").write_text(_PKG_TRAIN)
    with pytest.raises(CaptureError, match=r"No module named 'pkg'.*cd .* && defects4warp diagnose -m pkg\.train"):
        capture_problem(tmp_path / "pkg", ScriptSpec(entry="train.py"), check_determinism=False)
    folder, spec, assumed = resolve_module("pkg.train", folder=tmp_path)
    assert folder == tmp_path.resolve() and spec.module and ScriptSpec.from_json(spec.to_json()) == spec
    assert "python -m pkg.train" in assumed[0]
    p = capture_problem(folder, spec, check_determinism=False)
    assert list(p.params) == ["w"] and p.capture_summary()["params"][0]["site"] == "pkg/train.py:8"
    assert p.objective() == pytest.approx(5.0)
    np.testing.assert_allclose(p.gradient()["w"], [2.0, -4.0])
    with pytest.raises(TargetError, match="no pkg/nope.py"):
        resolve_module("pkg.nope", folder=tmp_path)


def test_iteration_bounds_from_trace_events_alone():
    # no Warp: the update rule and the injection point read trace events (labels: A0 the param, A1 its .grad,
    # A2 a checkpoint whose .grad is handed to the next backward as its seed, A3 that seed's copy)
    from defects4warp.capture.iteration import handed_over, injection_step, step_of, updated_owners

    grads = {"A1": "A0", "A4": "A2"}
    ev = [{"seq": 0, "kind": "backward"},
          {"seq": 1, "kind": "host", "op": "clone", "src": "A4", "dest": "A3", "tape": None, "active_tape": None},
          {"seq": 2, "kind": "launch", "reads": ["A0", "A1"], "writes": ["A0"], "tape": None, "active_tape": None}]
    # at a backward seeded with A3 (the clone of the checkpoint's .grad): the checkpoint is handed over, the param
    # written by an update kernel outside any tape after its .grad was read is updated
    assert handed_over(ev, 0, grads, {"A3"}) == {"A2"}
    assert updated_owners(ev[:2], 0, grads, {"A3"}, lambda lab: False, []) == set()
    assert updated_owners(ev, 0, grads, {"A3"}, lambda lab: False, []) == {"A0"}
    # a .numpy() view written back: no traced write, the values changed
    ev2 = [{"seq": 0, "kind": "backward"}, {"seq": 1, "kind": "grad_numpy", "array": "A0", "grad": "A1"}]
    assert updated_owners(ev2, 0, grads, set(), lambda lab: lab == "A0", []) == {"A0"}
    assert updated_owners(ev2, 0, grads, set(), lambda lab: False, []) == set()
    assert updated_owners(ev2, 0, grads, set(), lambda lab: False, [(2, (3,))]) == {"A0"}  # re-allocated
    assert updated_owners(ev2, 0, grads, set(), lambda lab: False, [(2, (1,))], lambda lab: (3,)) == set()
    assert updated_owners(ev2, 0, grads, set(), lambda lab: False, [(2, (3,))], lambda lab: (3,)) == {"A0"}
    # the params are set after the update (hooked call 1) and before the first read of the next iteration (call 2)
    ev3 = ev[1:] + [{"seq": 3, "kind": "launch", "reads": ["A0"], "writes": ["A5"], "tape": None, "active_tape": None}]
    steps = [0, 2, 3]  # trace length when each hooked call began: the update at 2, the forward at 3
    assert step_of(steps, 2) == 1 and step_of(steps, 3) == 2 and step_of(steps, -1) == -1
    assert injection_step(ev3, 0, 4, ["A0"], grads, steps, {}) == (2, 2, 3)


def test_param_override_by_variable_name():
    # `--param b`: the variable the allocation is assigned to (here by the helper's caller), not its site
    p = capture("script_two_params", params=["b"])
    assert list(p.params) == ["b"] and p.capture_summary()["params"][0]["site"] == "train.py:10:2"
    assert p.capture_summary()["params"][0]["chosen_by"] == "--param"
    with pytest.raises(CaptureError, match="--param nope: the script allocates no requires_grad array named nope"):
        capture("script_two_params", params=["nope"])


def test_purge_forgets_the_folders_modules_only(tmp_path, monkeypatch):
    """A re-run forgets the modules of the script's folder (and of folders captured before in this process),
    not installed packages under it, not a sibling folder whose name starts with the folder's, and nothing
    elsewhere (the prefix test in front of is_program_file keeps its answers)."""
    import types

    from defects4warp.capture import captured
    from defects4warp.paths import is_program_file

    folder = tmp_path / "prog"
    (folder / "env").mkdir(parents=True)
    (folder / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    files = {
        "d4w_t_helper": folder / "helper.py",
        "d4w_t_sub": folder / "pkg" / "sub.py",
        "d4w_t_hidden": folder / ".venv" / "lib" / "numpy.py",
        "d4w_t_env": folder / "env" / "lib" / "site.py",
        "d4w_t_sitepkg": folder / "site-packages" / "x.py",
        "d4w_t_sibling": tmp_path / "prog2" / "helper.py",
        "d4w_t_dotted": folder / "pkg" / ".." / ".." / "prog2" / "y.py",
        "d4w_t_elsewhere": tmp_path / "other" / "z.py",
    }
    for name, f in files.items():
        mod = types.ModuleType(name)
        mod.__file__ = str(f)
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(captured, "_FOLDERS", set())
    expected = {n for n, f in files.items() if is_program_file(f, folder)}
    captured.CapturedProblem._purge(types.SimpleNamespace(folder=folder))
    assert {n for n in files if n not in sys.modules} == expected == {"d4w_t_helper", "d4w_t_sub"}
