"""The oracle's own replay of a script variant (harness/oracle/replay.py) from the capture's replay record.

Real values: a least-squares script whose gradient is known in closed form, a script that allocates its
params afresh in every iteration (the param of iteration 2 is the second array allocated at its line), the
replay against the capture's own Problem on the test programs (the same objective and gradients, a
carried ``.grad`` growing over repeated calls included), and the reproduction check refusing a record that
does not fit the script.
"""

from __future__ import annotations

import copy
import textwrap
from pathlib import Path

import numpy as np
import pytest

wp = pytest.importorskip("warp")

from defects4warp.capture.record import record_script  # noqa: E402
from defects4warp.oracle.replay import ReplayError, ReplayProblem  # noqa: E402

PROGRAMS = Path(__file__).parent / "programs"

X = np.linspace(0.0, 1.0, 5)
Y = np.array([0.3, -0.1, 0.7, 1.2, 0.4])

#: The least-squares kernel both scripts share (a line of w[0] * x + w[1] against y).
HEAD = textwrap.dedent('''
    import numpy as np
    import warp as wp


    @wp.kernel
    def sq(w: wp.array(dtype=wp.float64), x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64),
           loss: wp.array(dtype=wp.float64)):
        i = wp.tid()
        r = w[0] * x[i] + w[1] - y[i]
        wp.atomic_add(loss, 0, r * r)
''')

FIT = HEAD + textwrap.dedent('''


    @wp.kernel
    def step(w: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
        i = wp.tid()
        w[i] = w[i] - lr * g[i]


    def main():
        x = wp.array(np.linspace(0.0, 1.0, 5), dtype=wp.float64)
        y = wp.array(np.array([0.3, -0.1, 0.7, 1.2, 0.4]), dtype=wp.float64)
        w = wp.array(np.array([0.5, -0.25]), dtype=wp.float64, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        for it in range(3):
            loss.zero_()
            tape = wp.Tape()
            with tape:
                wp.launch(sq, dim=5, inputs=[w, x, y, loss])
            tape.backward(loss)
            wp.launch(step, dim=2, inputs=[w, w.grad, wp.float64(0.1)])
            tape.zero()
            print("loss", loss.numpy()[0])


    if __name__ == "__main__":
        main()
''')

REALLOC = HEAD + textwrap.dedent('''


    def main():
        x = wp.array(np.linspace(0.0, 1.0, 5), dtype=wp.float64)
        y = wp.array(np.array([0.3, -0.1, 0.7, 1.2, 0.4]), dtype=wp.float64)
        values = np.array([0.5, -0.25])
        for it in range(3):
            w = wp.array(values, dtype=wp.float64, requires_grad=True)
            loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            tape = wp.Tape()
            with tape:
                wp.launch(sq, dim=5, inputs=[w, x, y, loss])
            tape.backward(loss)
            values = w.numpy() - 0.1 * w.grad.numpy()
            print("loss", loss.numpy()[0])


    if __name__ == "__main__":
        main()
''')


def _loss_grad(w):
    """The least-squares loss sum((a x + b - y)^2) and its gradient (closed form)."""
    r = w[0] * X + w[1] - Y
    return float(np.sum(r * r)), np.array([2 * np.sum(r * X), 2 * np.sum(r)])


def _line(text, start):
    """The line number (from 1) of the first line of ``text`` that starts with ``start`` once stripped."""
    return next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip().startswith(start))


def _folder(tmp_path, name, text):
    d = tmp_path / name
    d.mkdir()
    (d / "train.py").write_text(text)
    return d


@pytest.fixture(scope="module")
def fit(tmp_path_factory):
    d = _folder(tmp_path_factory.mktemp("replay"), "fit", FIT)
    return d, record_script(d, {"entry": "train.py"}, timeout_s=120)


def test_the_replay_gives_the_closed_form_gradient(fit):
    folder, rec = fit
    assert "error" not in rec and rec["params"][0]["site"] == ["train.py", _line(FIT, "w = wp.array"), 1]
    rp = ReplayProblem(folder, rec)
    w0 = np.array([0.5, -0.25])
    f0, g0 = _loss_grad(w0)
    assert rp.reproduced["objective"] == [pytest.approx(f0, rel=1e-14, abs=0)] * 2
    (name,) = rp.params
    assert rp.objective() == pytest.approx(f0, rel=1e-14)
    np.testing.assert_allclose(rp.gradient()[name], g0, rtol=1e-13)
    # at another point: the params are set at the iteration's start, the update's input read
    p = np.array([1.5, 0.25])
    rp.params[name].assign(p)
    f, g = _loss_grad(p)
    assert rp.objective() == pytest.approx(f, rel=1e-14)
    np.testing.assert_allclose(rp.gradient()[name], g, rtol=1e-13)
    np.testing.assert_array_equal(rp.params[name].numpy(), p)  # the calls leave the point as it was
    assert f != pytest.approx(f0)


def test_params_allocated_afresh_each_iteration(tmp_path):
    """Iteration 2's param is the second array allocated at its line; its point is where iteration 1 took it."""
    folder = _folder(tmp_path, "realloc", REALLOC)
    rec = record_script(folder, {"entry": "train.py", "iteration": 2}, timeout_s=120)
    assert "error" not in rec
    (param,) = rec["params"]
    assert param["site"] == ["train.py", _line(REALLOC, "w = wp.array"), 2]
    w1 = np.array([0.5, -0.25]) - 0.1 * _loss_grad(np.array([0.5, -0.25]))[1]
    np.testing.assert_allclose(param["x0"], w1, rtol=1e-14)
    rp = ReplayProblem(folder, rec)
    name = param["name"]
    for p in (w1, np.array([-0.75, 2.0])):
        rp.params[name].assign(p)
        f, g = _loss_grad(p)
        assert rp.objective() == pytest.approx(f, rel=1e-14)
        np.testing.assert_allclose(rp.gradient()[name], g, rtol=1e-13)


def test_the_reproduction_check_refuses_a_record_that_does_not_fit(fit):
    folder, rec = fit
    bad = copy.deepcopy(rec)
    bad["check"]["objective"] *= 1.001
    with pytest.raises(ReplayError, match=r"train\.py: the replay's objective .* differs from the record's"):
        ReplayProblem(folder, bad)
    bad = copy.deepcopy(rec)
    name = bad["params"][0]["name"]
    bad["check"]["gradient"][name][1] += 1e-3
    with pytest.raises(ReplayError, match=rf"train\.py: the replay's gradient of {name} differs"):
        ReplayProblem(folder, bad)
    # the params set after the iteration's backward: never at the iteration's start
    bad = copy.deepcopy(rec)
    bad["inject_step"] = 10 ** 6
    with pytest.raises(ReplayError, match=r"reached backward 1 before counted call 1000000"):
        ReplayProblem(folder, bad)
    # a param site the script never allocates
    bad = copy.deepcopy(rec)
    bad["params"][0]["site"] = ["train.py", _line(FIT, "w = wp.array"), 2]
    with pytest.raises(ReplayError, match=r"no array was constructed at the site"):
        ReplayProblem(folder, bad)


def test_the_worker_reports_a_failed_reproduction_as_an_error(fit):
    from defects4warp.oracle.runner import run_worker

    folder, rec = fit
    doc, _ = run_worker(folder, replay=rec, timeout_s=300, knobs={"max_full": 2})
    assert doc["verdict"] == "agrees" and doc["resolved"] == 2
    assert doc["objective"]["value"] == pytest.approx(_loss_grad(np.array([0.5, -0.25]))[0], rel=1e-14)
    assert doc["replay"]["reproduced"]["gradient_max_abs_diff"] == {rec["params"][0]["name"]: 0.0}
    bad = copy.deepcopy(rec)
    bad["check"]["objective"] += 1.0
    doc, _ = run_worker(folder, replay=bad, timeout_s=300)
    assert doc["verdict"] == "error" and doc["failure"]["stage"] == "replay"
    assert "train.py: the replay's objective" in doc["message"]


TRIALS = Path(__file__).parent / "data" / "capture_trials"


@pytest.mark.parametrize("folder,args,iteration,feature", [
    (PROGRAMS / "script_carry", [], 1, "continue_chain"),
    (PROGRAMS / "script_hand_seed", [], 1, "hand_seed_sites"),
    (PROGRAMS / "script_seeds", [], 1, None),
    (PROGRAMS / "script_two_params", [], 1, None),
    (PROGRAMS / "script_list_params", [], 1, None),
    (TRIALS / "cached_prior", ["--prior", "once"], 2, "external_terms"),
    (TRIALS / "batch_mean", ["--report", "mean"], 1, "term_weights"),
    (TRIALS / "checkpoint_clones", ["--order", "reverse"], 1, None),
    (TRIALS / "summed_backwards", ["--mode", "sum"], 1, None),
    (TRIALS / "shift_before_backward", ["--shift", "after"], 2, None),
], ids=lambda v: v.name if isinstance(v, Path) else None)
def test_the_replay_equals_the_capture_on_the_test_programs(folder, args, iteration, feature):
    """Objective at the point and at a moved one, and three gradient() calls at one point (a carried .grad
    grows: script_carry), as the capture's own Problem gives them, to the last bit; ``feature`` names the
    record field the program exercises (a cached prior's loss added by one more run, the reported loss's
    weights, hand-set seeds, a continued chain)."""
    from defects4warp.capture import ScriptSpec, capture_problem
    from defects4warp.capture.record import replay_record

    cap = capture_problem(folder, ScriptSpec(entry="train.py", args=args, iteration=iteration))
    rec = replay_record(cap)
    if feature is not None:
        assert rec[feature], f"{folder.name} does not exercise {feature}"
    rec["check"] = {"objective": cap.objective(), "gradient": {k: np.asarray(v, dtype=np.float64).ravel().tolist()
                                                               for k, v in cap.gradient().items()}}
    cap.chain, cap.seed_points = None, []
    rp = ReplayProblem(folder, rec)
    assert rp.objective() == cap.objective()
    got = [rp.gradient() for _ in range(3)]
    want = [cap.gradient() for _ in range(3)]
    for g, w in zip(got, want):
        assert set(g) == set(w)
        for k in w:
            np.testing.assert_array_equal(g[k], w[k])
    if feature == "continue_chain":
        k = next(iter(want[0]))
        assert not np.array_equal(want[1][k], want[0][k])  # the chain is really exercised
    for k, a in rp.params.items():
        moved = a.numpy() * 1.01 + 0.01
        a.assign(moved)
        cap.params[k].assign(moved)
    assert rp.objective() == cap.objective()


REFUSED = textwrap.dedent('''
    import warp as wp


    @wp.kernel
    def bad(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = no_such_function(x[i])


    if __name__ == "__main__":
        x = wp.zeros(3, dtype=float, requires_grad=True)
        wp.launch(bad, dim=3, inputs=[x])
''')


def test_a_failed_capture_is_judged_by_running_the_script(tmp_path):
    """A record whose capture failed: the oracle runs the script itself; Warp refusing to build its kernel is
    ``refused`` (stage script), a script that runs is an error naming the capture's message."""
    from defects4warp.oracle.runner import run_worker

    failed = {"format": 1, "entry": "train.py", "entry_file": "train.py", "args": [], "module": False,
              "iteration": 1, "error": {"type": "CaptureError", "message": "no parameter found"}}
    folder = _folder(tmp_path, "refused", REFUSED)
    doc, _ = run_worker(folder, replay=failed, timeout_s=300)
    assert doc["verdict"] == "refused" and doc["failure"]["stage"] == "script"
    assert "no_such_function" in doc["message"]
    folder = _folder(tmp_path, "runs", FIT)
    doc, _ = run_worker(folder, replay=failed, timeout_s=300)
    assert doc["verdict"] == "error" and doc["failure"]["stage"] == "capture"
    assert doc["message"] == ("capture: RuntimeError: CaptureError: no parameter found (the script itself ran to "
                              "backward 1 here)")


def test_a_reference_file_gives_the_problem_its_reference_gradient(fit, tmp_path):
    """A record with ``reference`` (a case's ``script.reference``) gives the replayed Problem
    ``reference_gradient()``: the file's function at the current params; without one there is none."""
    folder, rec = fit
    assert not hasattr(ReplayProblem(folder, rec, check=False), "reference_gradient")
    name = rec["params"][0]["name"]
    ref = tmp_path / "reference.py"
    ref.write_text(textwrap.dedent(f'''
        import numpy as np
        X = np.linspace(0.0, 1.0, 5)
        Y = np.array([0.3, -0.1, 0.7, 1.2, 0.4])

        def reference_gradient(params):
            w = params["{name}"]
            r = w[0] * X + w[1] - Y
            return {{"{name}": [2 * np.sum(r * X), 2 * np.sum(r)]}}
    '''))
    rp = ReplayProblem(folder, dict(rec, reference=str(ref)))
    p = np.array([1.5, 0.25])
    rp.params[name].assign(p)
    got = rp.reference_gradient()
    np.testing.assert_allclose(got[name], _loss_grad(p)[1], rtol=1e-14)
    np.testing.assert_allclose(rp.gradient()[name], got[name], rtol=1e-13)
    assert got[name].dtype == np.float64 and got[name].shape == (2,)


@pytest.mark.parametrize("body, match", [
    ("def reference_gradient(params):\n    return {'other': [0.0, 0.0]}", r"returned \['other'\], not the params"),
    ("def reference_gradient(params):\n    return {k: [0.0] for k in params}", r"has 1 values, the param 2"),
    ("def gradient(params):\n    return params", r"defines no function reference_gradient"),
    ("import not_a_module_anywhere", r"does not import: ModuleNotFoundError"),
    ("def reference_gradient(params):\n    return {k: [float('nan'), 1.0] for k in params}",
     r"holds values that are not finite \(1 of 2\)"),
    ("def reference_gradient(params):\n    x = 1\n    raise RuntimeError('boom')",
     r"reference\.py: reference_gradient raised RuntimeError: boom \(line 3\)"),
    ("import sys\ndef reference_gradient(params):\n    sys.exit(0)", r"reference_gradient raised SystemExit: 0 \(line 3\)"),
])
def test_a_broken_reference_file_is_named(fit, tmp_path, body, match):
    folder, rec = fit
    ref = tmp_path / "reference.py"
    ref.write_text(body + "\n")
    with pytest.raises(ReplayError, match=match):
        ReplayProblem(folder, dict(rec, reference=str(ref)), check=False).reference_gradient()
