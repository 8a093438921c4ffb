"""The capture's model of one optimisation iteration (harness/capture/iteration.py, hooks.py, core.py):
where the update consumes the gradient, several backwards summed by the update, and inner solves nested in
the iteration. The trial scripts under tests/data/capture_trials/ take the shape as an argument; expected
values are computed here by hand from their quadratic losses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from defects4warp.capture import ScriptSpec
from defects4warp.capture.iteration import consumption_point, nested_sites, pending_recordings, restarted_alone

TRIALS = Path(__file__).resolve().parent / "data" / "capture_trials"

X = np.array([1.0, 2.0, -1.0, 0.5])
Y = np.array([0.5, 1.0, 2.0, -1.0])
W0 = np.array([0.5, -0.25, 1.0, 2.0])


def capture(name, *args):
    from defects4warp.capture.core import capture_problem

    return capture_problem(TRIALS / name, ScriptSpec(entry="train.py", args=list(args)), "cpu", timeout_s=60,
                           check_determinism=False)


# -- trace-level rules (no Warp) ---------------------------------------------------------------------


def _ev(seq, kind, **kw):
    return dict(seq=seq, kind=kind, tape=kw.pop("tape", None), active_tape=kw.pop("active_tape", None), **kw)


def test_consumption_point_follows_zeroing_copies_and_numpy():
    grads = {"G": "W"}
    bw = _ev(1, "backward", tape="T0")
    # backward, tape.zero(), update launch reading W.grad: consumed at the launch, changed by the zero
    ev = [_ev(0, "launch", tape="T0", reads=["W"], writes=["L"]), bw,
          _ev(2, "tape_zero", tape="T0", arrays=["W", "L"]),
          _ev(3, "launch", reads=["W", "G"], writes=["W"])]
    cp = consumption_point(ev, 1, 1, "W", grads)
    assert (cp["seq"], cp["offset"], cp["array"], cp["is_grad"]) == (3, 0, "G", True)
    assert [c["kind"] for c in cp["changed"]] == ["tape_zero"]
    # a clone of the gradient applied by the update: the clone is what it reads
    ev = [ev[0], bw, _ev(2, "host", op="clone", src="G", dest="C"), _ev(3, "host", op="zero_", dest="G"),
          _ev(4, "launch", reads=["W", "C"], writes=["W"])]
    cp = consumption_point(ev, 1, 1, "W", grads)
    assert (cp["seq"], cp["array"], cp["is_grad"], cp["changed"]) == (4, "C", False, [])
    # an update through host values: the last .numpy() of the gradient before it, read after that call
    ev = [ev[0], bw, _ev(2, "grad_numpy", array="W", grad="G"), _ev(3, "tape_zero", tape="T0", arrays=["W"]),
          _ev(4, "host", op="assign", src=None, dest="W")]
    cp = consumption_point(ev, 1, 1, "W", grads)
    assert (cp["seq"], cp["offset"], cp["array"], cp["changed"]) == (2, 1, "G", [])
    # no use of the gradient after the backward: nothing to move
    assert consumption_point([ev[0], bw], 1, 1, "W", grads) is None
    # heavy-ball momentum: a kernel mixes the gradient with the velocity V, the update reads V only; V is
    # optimiser state, not a gradient: the gradient is consumed where the momentum kernel reads it
    ev = [ev[0], bw, _ev(2, "launch", reads=["V", "G"], writes=["V"]), _ev(3, "tape_zero", tape="T0", arrays=["W"]),
          _ev(4, "launch", reads=["W", "V"], writes=["W"])]
    cp = consumption_point(ev, 1, 1, "W", grads)
    assert (cp["seq"], cp["array"], cp["is_grad"], cp["changed"]) == (2, "G", True, [])
    # a sum of two gradient buffers (reads gradients only) is a gradient, read at the update
    ev = [ev[0], bw, _ev(2, "launch", reads=["C", "G"], writes=["S"]), _ev(3, "launch", reads=["W", "S"], writes=["W"])]
    cp = consumption_point(ev, 1, 1, "W", dict(grads, C="W"))
    assert (cp["seq"], cp["array"], cp["is_grad"]) == (3, "S", False)


def test_pending_recordings_and_nested_sites():
    ev = [_ev(0, "launch", tape="T0", reads=["V"], writes=["X1"]),  # the outer tape records a step
          _ev(1, "launch", tape="T1", reads=["Q"], writes=["E"]), _ev(2, "backward", tape="T1"),
          _ev(3, "launch", reads=["Q", "QG"], writes=["Q"])]
    assert pending_recordings(ev, 0, 2, exclude={"T1"}) == {"T0": 0}
    ev += [_ev(4, "backward", tape="T0")]
    assert pending_recordings(ev, 0, 5, exclude={"T1"}) == {}  # the outer tape was differentiated
    marks = [{"seq": 10, "updated_sites": []}, {"seq": 20, "updated_sites": [("t.py", 5)]},
             {"seq": 30, "updated_sites": [("t.py", 5)]}, {"seq": 40, "updated_sites": [("t.py", 9)]}]
    # the inner iterate at line 5 is allocated afresh after the update of line 9's array
    assert nested_sites(marks, {("t.py", 5): [5, 35]}) == {("t.py", 5)}
    assert nested_sites(marks, {("t.py", 5): [5]}) == set()  # never restarted: alternating updates, not nested
    marks[3]["updated_sites"] = [("t.py", 5), ("t.py", 9)]
    assert nested_sites(marks, {("t.py", 5): [5, 35]}) == set()  # updated together: two params of one update


def test_restarted_alone():
    """Only solves the script restarted were updated so far (their outer update still to come)."""
    marks = [{"seq": 10, "updated_sites": []}, {"seq": 20, "updated_sites": [("t.py", 5)]},
             {"seq": 30, "updated_sites": [("t.py", 5)]}]
    assert restarted_alone(marks, {("t.py", 5): [5, 25]})  # allocated afresh after its first update (seq 20)
    assert not restarted_alone(marks, {("t.py", 5): [5, 15]})  # allocated before its first update only
    assert not restarted_alone(marks, {})
    assert not restarted_alone(marks[:1], {("t.py", 5): [5, 25]})  # nothing updated yet
    marks.append({"seq": 40, "updated_sites": [("t.py", 9)]})  # a site never restarted: a training loop's params
    assert not restarted_alone(marks, {("t.py", 5): [5, 25], ("t.py", 9): [1]})
    assert restarted_alone(marks, {("t.py", 5): [5, 25], ("t.py", 9): [1, 45]})


def test_uncounted_backwards_are_named_in_ranges():
    from defects4warp.capture.discovery import _grouped_backwards

    pairs = [(1, "inner"), (2, "inner"), (3, "inner"), (5, "inner"), (6, "repeat"), (7, "inner")]
    assert _grouped_backwards(pairs) == ["backwards 1 to 3 (inner)", "backward 5 (inner)", "backward 6 (repeat)",
                                         "backward 7 (inner)"]
    assert _grouped_backwards([]) == []


# -- scripts ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_gradient_is_what_the_update_consumes():
    ok = capture("zero_before_update", "--order", "ok")
    np.testing.assert_allclose(ok.gradient()["w"], 2 * (W0 * X - Y) * X, rtol=1e-6)
    assert "consumed_gradient" not in ok.capture_summary()
    bad = capture("zero_before_update", "--order", "zero_tape")
    assert bad.objective() == pytest.approx(float(np.sum((W0 * X - Y) ** 2)))
    np.testing.assert_array_equal(bad.gradient()["w"], np.zeros(4))
    cg = bad.capture_summary()["consumed_gradient"]
    assert cg["differs"] and cg["params"]["w"]["max_abs_diff"] == pytest.approx(6.0)
    assert cg["params"]["w"]["changed_by"] == ["Tape.zero()"]
    np.testing.assert_array_equal(capture("zero_before_update", "--order", "clone_zero").gradient()["w"], 0.0)
    np.testing.assert_allclose(capture("zero_before_update", "--order", "numpy_ok").gradient()["w"],
                               2 * (W0 * X - Y) * X, rtol=1e-6)


@pytest.mark.slow
def test_gradients_of_several_backwards_summed_by_the_update():
    p = capture("summed_backwards", "--mode", "sum")
    d = W0 - np.array([1.0, 1.0, 0.0, -1.0])
    assert p.per_iteration == 2 and p.obj_offsets == [0, 1]
    assert p.objective() == pytest.approx(0.5 * 3.0 * float(np.sum(d ** 2)) + float(np.sum((W0 * X - Y) ** 2)))
    np.testing.assert_allclose(p.gradient()["w"], 3.0 * d + 2 * (W0 * X - Y) * X, rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("shape,param", [("before", "th"), ("per_step", "v")])
def test_an_inner_solve_is_inside_the_iteration(shape, param):
    p = capture("inner_solve", "--shape", shape)
    assert list(p.params) == [param]
    assert p.obj_offsets == [p.per_iteration - 1]  # only the outer loss; the inner energies are not terms
    if shape == "before":
        u = 0.6496 * np.array([1.0, 2.0, -1.0])  # four steps q <- 0.4 q + 0.4 f from q = 0
        th, t = np.array([1.5, 0.5, -1.0]), np.array([0.3, -0.2, 0.5])
        assert p.per_iteration == 5
        assert p.objective() == pytest.approx(float(np.sum((th * u - t) ** 2)), rel=1e-5)
        np.testing.assert_allclose(p.gradient()["th"], 2 * (th * u - t) * u, rtol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("iteration", [1, 2])
def test_an_inner_solve_longer_than_the_usual_look_ahead(iteration):
    """Each outer iteration settles twice (a state and an adjoint-like solve) for more steps in all than the look
    ahead's usual bound; the second settle starts its iterate afresh, so the look goes on to the outer update
    and the params are the outer ones. (One settle per iteration longer than the bound is still taken for the
    optimisation iteration: nothing tells it from a training loop before the outer update.)"""
    from defects4warp.capture.runstate import LOOKAHEAD_BACKWARDS

    n_inner = LOOKAHEAD_BACKWARDS // 2 + 22
    per = 2 * n_inner + 1
    p = capture_at("inner_solve", iteration, "--shape", "before", "--inner", str(n_inner), "--solves", "2")
    assert list(p.params) == ["th"] and p.per_iteration == per
    assert p.k == 1 + (iteration - 1) * per and p.obj_offsets == [per - 1]
    th, t, f = np.array([1.5, 0.5, -1.0]), np.array([0.3, -0.2, 0.5]), np.array([1.0, 2.0, -1.0])
    u = f / 1.5  # the settle's fixed point (q = f / (1 + mu)), reached to float32 rounding in 150 steps
    if iteration == 2:
        th = th - 0.05 * 2 * (th * u - t) * u
    np.testing.assert_allclose(p.params["th"].numpy(), th, rtol=1e-5)
    np.testing.assert_allclose(p.gradient()["th"], 2 * (th * u - t) * u, rtol=1e-4)


def test_the_loop_length_counts_iterations_of_the_next_iteration_s_backwards():
    """A gradient taken once before the loop is one more backward of iteration 1 only: the loop's length is
    counted with the backwards of iteration 2 (one), not iteration 1's (two)."""
    from defects4warp.capture.core import _count_iterations

    once = capture_at("cached_prior", 1, "--prior", "once", "--iters", "5")
    assert once.per_iteration == 2 and once.per_next == 1
    assert _count_iterations(once, 60.0) == (5, True)  # 6 backwards: 2 + 4 x 1 (was 6 // 2 = 3)
    each = capture_at("cached_prior", 1, "--prior", "each", "--iters", "5")
    assert each.per_iteration == each.per_next == 2 and _count_iterations(each, 60.0) == (5, True)


# -- params kept in two buffers swapped at each update ------------------------------------------------


def test_an_update_into_the_other_buffer_ends_the_iteration():
    from defects4warp.capture.iteration import successor_written, updated_owners

    grads = {"G0": "A0", "G1": "A1", "G2": "A2"}
    shapes = {"A0": (4,), "A1": (4,), "A2": (1,), "S": (4,)}
    ev = [_ev(0, "backward"), _ev(1, "launch", reads=["A0", "G0"], writes=["A1"])]
    assert successor_written(ev, 1, "A0", grads, (4,), shapes.get)
    assert updated_owners(ev, 0, grads, set(), lambda lab: False, [], shapes.get) == {"A0"}
    # the written array has no .grad (an optimiser's moment buffer), another shape, or the launch is taped
    scratch = [_ev(0, "backward"), _ev(1, "launch", reads=["A0", "G0"], writes=["S"])]
    assert updated_owners(scratch, 0, grads, set(), lambda lab: False, [], shapes.get) == set()
    loss = [_ev(0, "backward"), _ev(1, "launch", reads=["A0", "G0"], writes=["A2"])]
    assert not successor_written(loss, 1, "A0", grads, (4,), shapes.get)
    taped = [_ev(0, "backward"), _ev(1, "launch", reads=["A0", "G0"], writes=["A1"], tape="T1")]
    assert not successor_written(taped, 1, "A0", grads, (4,), shapes.get)
    # a launch that writes the other buffer without reading this one's gradient is no update of it
    other = [_ev(0, "backward"), _ev(1, "grad_numpy", array="A0", grad="G0"), _ev(2, "launch", reads=["A1"], writes=["A1"])]
    assert not successor_written(other, 1, "A0", grads, (4,), shapes.get)


@pytest.mark.slow
def test_params_in_swapped_buffers_are_captured_at_every_iteration():
    from defects4warp.capture.core import capture_problem

    folder = TRIALS / "swapped_buffers"
    w, g = W0.copy(), None
    for k in (1, 2, 3):
        p = capture_problem(folder, ScriptSpec(entry="train.py", iteration=k), "cpu", timeout_s=60,
                            check_determinism=False)
        g = 2 * (w * X - Y) * X
        (name,) = list(p.params)
        assert name == ("wa" if k % 2 else "wb")  # the buffer the script calls wa in iteration k
        np.testing.assert_allclose(p.gradient()[name], g, rtol=1e-5, atol=1e-6)
        assert p.objective() == pytest.approx(float(np.sum((w * X - Y) ** 2)), rel=1e-6)
        w = w - 0.05 * g
    # --param names the variable; in iteration 2 that is the buffer allocated for wb
    p = capture_problem(folder, ScriptSpec(entry="train.py", iteration=2, params=["wa"]), "cpu", timeout_s=60,
                        check_determinism=False)
    assert list(p.params) == ["wb"]
    np.testing.assert_allclose(p.gradient()["wb"], [0.0, -3.6, 5.4, 1.95], rtol=1e-5, atol=1e-6)
    said = " ".join(p.capture_summary()["assumptions"])
    assert "two buffers and swaps them" in said and "train.py:31" in said
    # no zeroing: the third iteration's gradient adds the first one's (the same buffer's .grad)
    bad = capture_problem(folder, ScriptSpec(entry="train.py", args=["--zero", "none"], iteration=3), "cpu",
                          timeout_s=60, check_determinism=False)
    np.testing.assert_allclose(bad.gradient()["wa"], [0.0, -8.16, 10.86, 3.90125], rtol=1e-5, atol=1e-6)


def test_a_read_before_the_update_belongs_to_the_previous_iteration():
    # A0 the param, A1 its .grad, A5 an anchor copied from the param between the backward and the update
    from defects4warp.capture.iteration import injection_step

    grads = {"A1": "A0"}
    ev = [_ev(0, "backward"),
          _ev(1, "host", op="copy", src="A0", dest="A5"),
          _ev(2, "launch", reads=["A0", "A1"], writes=["A0"]),
          _ev(3, "launch", reads=["A0", "A5"], writes=["A6"], tape="T2")]
    steps = [0, 1, 2, 3]  # one hooked call per event from seq 1 on
    # the params are set after the update (call 2), not before the anchor's copy (call 1)
    assert injection_step(ev, 1, 4, ["A0"], grads, steps, {}) == (3, 3, 3)
    # a write that is no update (a launch reading no .grad) after a read leaves the first read the start
    ev_plain = ev[:2] + [_ev(2, "launch", reads=["A7"], writes=["A0"])] + ev[3:]
    assert injection_step(ev_plain, 1, 4, ["A0"], grads, steps, {}) == (0, 1, 1)


def test_an_adjoint_copied_into_another_grad_is_handed_over():
    # checkpoint segments: x0's .grad (G0) is copied into the next segment's end state's .grad (G2) before its
    # backward; k (owner of G9) is the param its update consumes
    from defects4warp.capture.discovery import _carried
    from defects4warp.capture.iteration import handed_over, updated_owners

    grads = {"G0": "X0", "G2": "XE", "G9": "K"}
    ev = [_ev(0, "backward"), _ev(1, "grad_read", array="X0", grad="G0"),
          _ev(2, "host", op="copy", src="G0", dest="G2"), _ev(3, "launch", reads=["K", "G9"], writes=["K"])]
    assert handed_over(ev[:3], 0, grads, {"L"}) == {"X0"}
    # a new requires_grad array of X0's shape allocated for the next segment is then no update of X0
    assert updated_owners(ev[:3], 0, grads, {"L"}, lambda lab: False, [(3, (5,))], lambda lab: (5,)) == set()
    # the same by a launch outside any tape writing the other .grad; not by one writing a plain array
    ev_k = ev[:2] + [_ev(2, "launch", reads=["G0"], writes=["G2"])]
    assert handed_over(ev_k, 0, grads, set()) == {"X0"}
    assert handed_over(ev[:2] + [_ev(2, "launch", reads=["G0"], writes=["S"])], 0, grads, set()) == set()
    arrays = {"G0": {"grad_of": "X0"}, "G2": {"grad_of": "XE"}, "G9": {"grad_of": "K"}, "X0": {}, "XE": {}, "K": {}}
    assert _carried(ev, "X0", 1, arrays) and not _carried(ev, "K", 1, arrays)


@pytest.mark.slow
@pytest.mark.parametrize("device_read", ["view", "clone"])
def test_a_host_read_is_no_call_of_the_script(monkeypatch, device_read):
    """A CUDA array's ``.numpy()`` clones it to the host inside Warp (``array.to("cpu")``: a ``wp.clone`` and a
    ``wp.copy``); a CPU array's returns a view. Counted as the script's calls, those clones shifted iteration
    k >= 2 of ``w.assign(w.numpy() - lr * w.grad.numpy())`` scripts by one iteration on CUDA (objective and
    gradient of iteration k + 1, params injected at iteration k: found on an H200, 2026-12-04). Here the CUDA
    path is reproduced on the CPU ("clone") and must give the CPU's ("view") iteration exactly."""
    import warp as wp

    if device_read == "clone":
        orig = wp.array.numpy

        def numpy(self, *a, **k):
            if self.ptr:
                return orig(wp.clone(self, device="cpu", requires_grad=False), *a, **k)
            return orig(self, *a, **k)

        monkeypatch.setattr(wp.array, "numpy", numpy)
    from defects4warp.capture.core import capture_problem

    # iteration 2: the params after one update (the first iteration a shifted count can misplace)
    g1 = 2 * (W0 * X - Y) * X
    w = W0 - 0.05 * g1
    g = 2 * (w * X - Y) * X
    p = capture_problem(TRIALS / "host_update", ScriptSpec(entry="train.py", iteration=2), "cpu", timeout_s=60,
                        check_determinism=False)
    np.testing.assert_allclose(p.gradient()["w"], g, rtol=1e-5, atol=1e-6)
    assert p.objective() == pytest.approx(float(np.sum((w * X - Y) ** 2)), rel=1e-5)
    # the objective moves with the params injected at the start of iteration 2
    P = p.params["w"]
    x0 = P.numpy().copy()
    e0, h = np.array([1, 0, 0, 0], dtype=np.float32), 1e-2
    P.assign(x0 + h * e0)
    fp = p.objective()
    P.assign(x0 - h * e0)
    fm = p.objective()
    P.assign(x0)
    assert (fp - fm) / (2 * h) == pytest.approx(g[0], rel=1e-3, abs=1e-4)


# -- the printed loss over several backwards ----------------------------------------------------------


def _batch_loss():
    """Sum over the three batches of tests/data/capture_trials/batch_mean at its start, and its gradient."""
    xs = np.array([[1.0, 2.0, -1.0, 0.5], [0.5, -2.0, 1.5, 1.0], [2.0, 1.0, -0.5, -1.0]])
    ys = np.array([[0.5, 1.0, 2.0, -1.0], [1.0, 0.0, -1.0, 2.0], [-1.0, 0.5, 0.5, 1.5]])
    w = np.array([0.5, -0.25])
    r = w[np.arange(4) % 2] * xs - ys
    g = np.array([np.sum(2 * r[:, j::2] * xs[:, j::2]) for j in (0, 1)])
    return float(np.sum(r ** 2)), g


@pytest.mark.slow
def test_the_printed_mean_over_backwards_seeded_with_one_is_the_objective():
    s, g = _batch_loss()
    mean = capture("batch_mean", "--report", "mean")
    assert mean.obj_offsets == [0, 1, 2]
    # the script prints the mean over the batches; each backward(loss) is seeded with 1: the update follows the
    # gradient of the sum, three times that of the loss it reports
    assert mean.term_weights == {0: [pytest.approx(1 / 3)], 1: [pytest.approx(1 / 3)], 2: [pytest.approx(1 / 3)]}
    assert mean.objective() == pytest.approx(s / 3, rel=1e-12)
    np.testing.assert_allclose(mean.gradient()["w"], g, rtol=1e-12)
    assert [f["id"] for f in mean.capture_summary()["findings"]] == ["seed_objective_mismatch"]
    total = capture("batch_mean", "--report", "sum")
    assert total.term_weights is None and total.objective() == pytest.approx(s, rel=1e-12)
    assert total.capture_summary()["findings"] == []


# -- a gradient cached before the loop and added by every update -------------------------------------


def capture_at(name, iteration, *args):
    from defects4warp.capture.core import capture_problem

    return capture_problem(TRIALS / name, ScriptSpec(entry="train.py", args=list(args), iteration=iteration), "cpu",
                           timeout_s=60, check_determinism=False)


@pytest.mark.slow
def test_a_cached_prior_gradient_is_a_term_of_the_objective():
    def data_grad(w):
        return 2 * (w * X - Y) * X

    def loss(w):
        return float(np.sum(w ** 2) + np.sum((w * X - Y) ** 2))  # ridge 0.5 * 2 * |w|^2 plus the data misfit

    w1 = W0 - 0.05 * (2 * W0 + data_grad(W0))
    for mode in ("once", "each"):
        first = capture_at("cached_prior", 1, "--prior", mode)
        # the prior's tape and the data tape are one iteration: the update adds both gradients
        assert first.obj_offsets == [0, 1] and first.external_terms == []
        assert first.objective() == pytest.approx(loss(W0), rel=1e-6)
        np.testing.assert_allclose(first.gradient()["w"], 2 * W0 + data_grad(W0), rtol=1e-5)
        second = capture_at("cached_prior", 2, "--prior", mode)
        np.testing.assert_allclose(second.params["w"].numpy(), w1, rtol=1e-5)
        assert second.objective() == pytest.approx(loss(w1), rel=1e-5)
        # computed once, the prior's gradient the update adds at iteration 2 is still the one at W0
        prior = 2 * W0 if mode == "once" else 2 * w1
        np.testing.assert_allclose(second.gradient()["w"], prior + data_grad(w1), rtol=1e-5)
        assert [t["n"] for t in second.external_terms] == ([1] if mode == "once" else [])
    # the cached term's loss moves with the params like the data term's
    p = w1 + np.array([0.1, -0.2, 0.05, 0.3])
    once = capture_at("cached_prior", 2, "--prior", "once")
    once.params["w"].assign(p.astype(np.float32))
    assert once.objective() == pytest.approx(loss(p), rel=1e-5)


# -- checkpoint clones are no params -----------------------------------------------------------------


@pytest.mark.slow
def test_checkpoint_clones_replayed_in_either_order_are_not_params():
    x0, t = np.array([1.0, 2.0, -1.0, 0.5]), np.array([0.5, 0.3, -0.2, 0.4])
    a = np.array([0.9, 0.8, 1.1, 1.2])
    r = x0 * a ** 4 - t
    for order, factor in (("reverse", 4.0), ("forward", 2.0)):
        p = capture("checkpoint_clones", "--order", order)
        # the clones of the checkpoints are computed from a in the iteration: intermediates, not params
        assert list(p.params) == ["a"] and p.per_iteration == 2
        assert p.objective() == pytest.approx(float(np.sum(r ** 2)), rel=1e-12)
        # replayed last segment first, the adjoint reaches the first segment: d/da of (x0 a^4 - t)^2; replayed
        # first segment first, its seed is still zero and only the last segment's own dependence on a is left
        np.testing.assert_allclose(p.gradient()["a"], 2 * r * factor * x0 * a ** 3, rtol=1e-12)


# -- params written off the tape between the forward and the backward ---------------------------------


@pytest.mark.slow
def test_params_written_before_the_backward_are_set_where_the_iteration_starts():
    def grad(w):
        return 2 * (w * X - Y) * X

    g1 = grad(W0)
    w1, v1 = W0 - 0.05 * g1, -0.05 * g1  # iteration 1: v = 0, nothing shifted
    for where in ("before", "after"):
        p = capture_at("shift_before_backward", 2, "--shift", where)
        start = w1  # the shift of iteration 1 moves nothing (v = 0)
        # the given point is w where iteration 2 starts, and re-runs at it reproduce the forward's loss
        np.testing.assert_allclose(p.params["w"].numpy(), start, rtol=1e-6)
        assert p.objective() == pytest.approx(float(np.sum((start * X - Y) ** 2)), rel=1e-6)
        assert p.objective() == p.objective()
        # "before": the tape's adjoint reads w after the shift, beta * v away from the point the loss was taped at
        at = start + 0.5 * v1 if where == "before" else start
        np.testing.assert_allclose(p.gradient()["w"], grad(at), rtol=1e-5)


@pytest.mark.parametrize("version, needed", [("1.0.2", True), ("1.1.0", True), ("1.2.2", False), ("1.19.0", False),
                                             ("dev", False)])
def test_releases_that_need_an_explicit_init(version, needed):
    """Warp 1.0-1.1 stop at a script's first array without wp.init() (seen on all 16 held-out scripts on 1.0.2,
    2026-12-04); the capture says so in its assumptions when the script never calls it."""
    from defects4warp.capture.summary import _explicit_init

    assert _explicit_init(version) is needed


# -- an update launched while the next iteration's tape records ----------------------------------------


def test_an_update_inside_a_tape_block_entered_after_its_backward_ends_the_iteration():
    from defects4warp.capture.iteration import recorded_update, updated_owners

    grads = {"G": "W"}
    # backward of T0, then the momentum kernel mixes W.grad into V; T1's block records the forward and then
    # W <- W + V: the previous backward's gradient applied while T1 records
    ev = [_ev(0, "backward", tape="T0"), _ev(1, "launch", reads=["V", "G"], writes=["V"]),
          _ev(2, "tape_enter", tape="T1"), _ev(3, "launch", tape="T1", active_tape="T1", reads=["W"], writes=["L"]),
          _ev(4, "launch", tape="T1", active_tape="T1", reads=["W", "V"], writes=["W"])]
    rec = set()
    assert recorded_update(ev, 1, ev[4])
    assert updated_owners(ev, 0, grads, set(), lambda lab: False, [], None, rec) == {"W"} and rec == {"W"}
    # the next forward recomputing W from other arrays in that block (an intermediate whose .grad was printed)
    # reads neither the gradient nor what was computed from it: no update
    fwd = ev[:4] + [_ev(4, "launch", tape=None, active_tape="T1", reads=["X"], writes=["W"])]
    assert updated_owners(fwd, 0, grads, set(), lambda lab: False, [], None, set()) == set()
    # an inner solver's step inside the outer block: the outer tape's block was entered before the inner
    # backward whose gradient the step applies, so the step stays inside the iteration
    inner = [_ev(0, "tape_enter", tape="T1"), _ev(1, "launch", tape="T1", active_tape="T1", reads=["Q"], writes=["E"]),
             _ev(2, "backward", tape="T2"), _ev(3, "launch", tape="T1", active_tape="T1", reads=["Q", "G"], writes=["Q"])]
    rec = set()
    assert not recorded_update(inner, 3, inner[3])
    assert updated_owners(inner, 2, {"G": "Q"}, set(), lambda lab: False, [], None, rec) == set() and rec == set()
    # no backward before the gradient use, or a write outside any tape block: no recorded update
    assert not recorded_update(ev[1:], 0, ev[4])
    assert not recorded_update(ev, 1, _ev(4, "launch", reads=["W", "V"], writes=["W"]))


@pytest.mark.slow
def test_a_momentum_step_recorded_before_the_backward_ends_the_iteration():
    """momentum_in_tape: v <- 0.5 v - 0.05 g, w <- w + v. --apply inside launches w <- w + v in the next
    iteration's ``with tape:`` after the forward (the tape's adjoint then reads w moved by v); --apply after
    launches it outside the tape. Either way each backward is one iteration and w is the param."""
    g0 = 2 * (W0 * X - Y) * X
    v1 = -0.05 * g0
    for where in ("inside", "after"):
        for k in (1, 2):
            p = capture_at("momentum_in_tape", k, "--apply", where)
            assert list(p.params) == ["w"]
            assert (p.k, p.per_iteration, p.grad_after, p.obj_offsets) == (k, 1, k, [0])
            # the forward of iteration 2 reads W0 when the step is recorded after it (iteration 1 moved nothing,
            # v = 0), and W0 + v1 when the step ran after the backward
            start = W0 + v1 if (where == "after" and k == 2) else W0
            np.testing.assert_allclose(p.params["w"].numpy(), start, rtol=1e-6)
            assert p.objective() == pytest.approx(float(np.sum((start * X - Y) ** 2)), rel=1e-6)
            # inside, iteration 2: the adjoint of residual_sq reads w after the recorded step, v1 away
            at = start + v1 if (where == "inside" and k == 2) else start
            np.testing.assert_allclose(p.gradient()["w"], 2 * (at * X - Y) * X, rtol=1e-5, atol=1e-6)
