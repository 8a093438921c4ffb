"""The per-launch check on launches that write what they read.

A launch is re-run alone many times (one backward pass per output scalar, two
forward runs per input scalar). Before, the autodiff Jacobian came from
``warp.autograd.jacobian`` on the user's own arrays and the differences from
runs that restored only the moved input:

* a launch given one array as input and as output (``y`` is ``x``) shared its
  adjoint: Warp's backward added the seed of ``y[r]`` to ``d y[r] / d x[r]``
  (``I + J``), a finding on a correct kernel (Warp 1.9.1);
* a launch that hands out slots from an atomic counter passed among its inputs
  grew the counter with every run, and wrote past the arrays' ends once it
  passed their capacity (a crash of the worker).

The check now runs each kernel on arrays of its own, restored before every
run to the contents they had before the recorded launch.
"""

import json
import os
import subprocess
import textwrap
import types
from typing import Any

import numpy as np
import pytest

wp = pytest.importorskip("warp")


@wp.kernel
def _affine32(x_in: wp.array(dtype=float), a: wp.array(dtype=float), b: float, x_out: wp.array(dtype=float)):
    i = wp.tid()
    x_out[i] = x_in[i] * a[i] + b


@wp.kernel
def _affine64(x_in: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64), b: wp.float64,
              x_out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    x_out[i] = x_in[i] * a[i] + b


@wp.kernel
def _scale_in_place(a: wp.array(dtype=wp.float64), b: wp.float64, x: wp.array(dtype=wp.float64)):
    i = wp.tid()
    x[i] = x[i] * a[i] + b


@wp.func
def _times(u: wp.float64, v: wp.float64):
    return u * v


@wp.func_grad(_times)
def _adj_times(u: wp.float64, v: wp.float64, adj_ret: wp.float64):
    wp.adjoint[u] += v * adj_ret
    wp.adjoint[v] += wp.float64(2.0) * u * adj_ret  # 2u where the derivative is u: a kernel defect


@wp.kernel
def _affine_wrong(x_in: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64), b: wp.float64,
                  x_out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    x_out[i] = _times(x_in[i], a[i]) + b


@wp.kernel
def _square_sum(x: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i] * x[i])


@wp.func
def _claim(count: wp.array(dtype=wp.int32), slot_of: wp.array(dtype=wp.int32), tid: int):
    k = wp.atomic_add(count, 0, 1)
    slot_of[tid] = k
    return k


@wp.func_replay(_claim)
def _replay_claim(count: wp.array(dtype=wp.int32), slot_of: wp.array(dtype=wp.int32), tid: int):
    return slot_of[tid]


@wp.kernel
def _emit_above(x: wp.array(dtype=float), threshold: float, count: wp.array(dtype=wp.int32),
                slot_of: wp.array(dtype=wp.int32), out: wp.array(dtype=float)):
    i = wp.tid()
    if x[i] > threshold:
        k = _claim(count, slot_of, i)
        out[k] = 2.0 * x[i] * x[i]


@wp.kernel
def _emit_above_no_replay(x: wp.array(dtype=float), threshold: float, count: wp.array(dtype=wp.int32),
                          slot_of: wp.array(dtype=wp.int32), out: wp.array(dtype=float)):
    i = wp.tid()
    if x[i] > threshold:
        k = wp.atomic_add(count, 0, 1)
        out[k] = 2.0 * x[i] * x[i]


@wp.kernel
def _two_outputs(x: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64),
                 z: wp.array(dtype=wp.float64), k: wp.array(dtype=wp.int32)):
    i = wp.tid()
    y[i] = x[i] * a[i]
    z[i] = x[i] + a[i]
    k[i] = i


def _ctx(record):
    """Run ``record`` (launches on a tape) under the capture the determinism probe uses; a probe context."""
    from defects4warp.probes.determinism import capture_launches

    with capture_launches() as captured:
        tape = wp.Tape()
        with tape:
            record()
    return types.SimpleNamespace(launches=captured, doc={}, stage=lambda s: None, save=lambda: None)


def _measure(record, **knobs):
    from defects4warp.probes import launches

    return launches.measure(_ctx(record), **knobs)["kernels"]


@pytest.mark.parametrize("dtype,kernel", [(np.float32, _affine32), (np.float64, _affine64)])
def test_an_input_passed_as_its_own_output_is_no_finding(dtype, kernel):
    """``x = x * a + b`` launched with ``x_in`` and ``x_out`` the same array, twice in a row."""
    rng = np.random.default_rng(0)
    wdt = wp.float32 if dtype == np.float32 else wp.float64
    x = wp.array(rng.uniform(1.0, 3.0, 16).astype(dtype), dtype=wdt, requires_grad=True)
    a = wp.array(rng.uniform(0.5, 1.5, 16).astype(dtype), dtype=wdt, requires_grad=True)
    x_first = x.numpy().copy()

    def record():
        for _ in range(2):
            wp.launch(kernel, dim=16, inputs=[x, a, wdt(0.25)], outputs=[x])

    (rec,) = _measure(record)
    assert rec["launches"] == 2 and rec["skipped"] is None
    assert rec["ok"] is True and rec["worst"] is None, rec
    assert rec["aliased"] == ["x_in", "x_out"]
    np.testing.assert_allclose(x.numpy(), (x_first * a.numpy() + 0.25) * a.numpy() + 0.25, rtol=1e-6)  # untouched


def test_an_in_place_update_is_checked_at_the_contents_before_it():
    """``x[i] = x[i] * a[i] + b`` on ``x`` passed once (as output): d x / d a is the x it read."""
    from defects4warp.probes import launches

    rng = np.random.default_rng(1)
    x = wp.array(rng.uniform(1.0, 3.0, 8), dtype=wp.float64, requires_grad=True)
    a = wp.array(rng.uniform(0.5, 1.5, 8), dtype=wp.float64, requires_grad=True)
    x_before = x.numpy().copy()
    ctx = _ctx(lambda: wp.launch(_scale_in_place, dim=8, inputs=[a, wp.float64(1.0)], outputs=[x]))
    (entry,) = ctx.launches
    np.testing.assert_array_equal(entry[6][0], a.numpy())
    np.testing.assert_array_equal(entry[6][2], x_before)  # taken before the launch wrote x
    (rec,) = launches.measure(ctx)["kernels"]
    assert rec["ok"] is True and rec["skipped"] is None
    jad = launches.jacobian_ad(_scale_in_place, dim=8, inputs=[wp.array(a.numpy(), dtype=wp.float64, requires_grad=True), wp.float64(1.0)],
                               outputs=[wp.array(x_before, dtype=wp.float64, requires_grad=True)])
    np.testing.assert_allclose(np.diag(jad[(0, 0)]), x_before, rtol=1e-12)


def test_outputs_without_requires_grad_are_run_and_left_alone():
    x = wp.array(np.linspace(1.0, 2.0, 4), dtype=wp.float64, requires_grad=True)
    a = wp.array(np.linspace(3.0, 4.0, 4), dtype=wp.float64, requires_grad=True)
    y = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    z = wp.zeros(4, dtype=wp.float64)
    k = wp.zeros(4, dtype=wp.int32)
    (rec,) = _measure(lambda: wp.launch(_two_outputs, dim=4, inputs=[x, a], outputs=[y, z, k]))
    assert rec["skipped"] is None and rec["ok"] is True, rec


def test_a_kernel_defect_on_an_aliased_launch_is_still_found():
    rng = np.random.default_rng(2)
    x = wp.array(rng.uniform(1.0, 3.0, 8), dtype=wp.float64, requires_grad=True)
    a = wp.array(rng.uniform(0.5, 1.5, 8), dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)

    def record():
        wp.launch(_affine_wrong, dim=8, inputs=[x, a, wp.float64(0.5)], outputs=[x])
        wp.launch(_square_sum, dim=8, inputs=[x], outputs=[loss])

    wrong, fine = _measure(record)
    assert wrong["kernel"].endswith("_affine_wrong") and wrong["ok"] is False
    assert (wrong["worst"]["input"], wrong["worst"]["output"]) == ("a", "x_out")
    assert wrong["worst"]["signature"] == "exact_factor" and 0.9 < wrong["worst"]["relative_error"] < 1.1
    assert fine["ok"] is True


def _emit(kernel, n=32, seed=3):
    rng = np.random.default_rng(seed)
    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    count = wp.zeros(1, dtype=wp.int32)
    slot_of = wp.full(n, -1, dtype=wp.int32)
    out = wp.zeros(n, dtype=float, requires_grad=True)

    def record():
        wp.launch(kernel, dim=n, inputs=[x, 0.0, count, slot_of], outputs=[out])

    return record, x, count


def test_an_atomic_slot_counter_is_restored_before_every_run():
    """Slots handed out by ``wp.atomic_add`` on a counter passed among the inputs (the slot replayed by
    ``wp.func_replay``, a correct kernel): before, every run grew the counter, the slots ran past
    ``out``'s end (memory past the array written) and the check reported d out / d x disagreeing."""
    record, x, count = _emit(_emit_above)
    (rec,) = _measure(record)
    assert rec["skipped"] is None, rec
    assert rec["ok"] is True and rec["worst"] is None, rec
    assert int(count.numpy()[0]) == int((x.numpy() > 0.0).sum())  # the user's counter as the launch left it


def test_a_slot_kernel_without_replay_is_still_found():
    """Without ``wp.func_replay`` the adjoint's replay does not get the forward's slot back (Warp's
    adjoint of this kernel is 0 for every x): a kernel defect the check must report."""
    record, _, _ = _emit(_emit_above_no_replay)
    (rec,) = _measure(record)
    assert rec["ok"] is False
    assert (rec["worst"]["input"], rec["worst"]["output"], rec["worst"]["signature"]) == ("x", "out", "zero")


def test_repeatable_restores_and_compares_integer_arrays():
    from defects4warp.probes.launches import repeatable

    x = wp.array(np.array([0.5, -0.5, 0.25], dtype=np.float32), requires_grad=True)
    count = wp.array(np.array([7], dtype=np.int32))
    slot_of = wp.full(3, -1, dtype=wp.int32)
    out = wp.zeros(16, dtype=float, requires_grad=True)
    assert repeatable(_emit_above, dim=3, inputs=[x, 0.0, count, slot_of], outputs=[out]) == []
    assert int(count.numpy()[0]) == 7
    np.testing.assert_array_equal(slot_of.numpy(), [-1, -1, -1])


def test_the_time_budget_reports_kernels_unchecked():
    from defects4warp.engines.assess import AssessContext
    from defects4warp.engines.assess.launches import assess, bug_evidence

    x = wp.array(np.linspace(1.0, 2.0, 8), dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    (rec,) = _measure(lambda: wp.launch(_square_sum, dim=8, inputs=[x], outputs=[loss]), max_seconds=0.0)
    assert rec["ok"] is None and rec["skipped"] == "over the probe's time budget of 0 s"
    doc = {"launches": {"kernels": [rec], "recorded": 1}}
    a = assess(doc)
    (e,) = a.evidence
    assert e["clean"] is False and e["data"]["counted"] is False
    assert bug_evidence(doc, AssessContext(assessed={"launches": a})).cited == []


@pytest.mark.slow
@pytest.mark.parametrize("release", ["1.9.1", "1.19.0"])
def test_an_aliased_launch_is_no_finding_on_each_release(tmp_path, release):
    """On 1.9.1 the aliased launch was reported disagreeing (d x_out / d x_in relative error ~1)."""
    from defects4warp.envs import ensure_env
    from defects4warp.paths import child_pythonpath

    py = ensure_env(release)
    code = textwrap.dedent("""
        import json, types
        import numpy as np, warp as wp
        wp.config.quiet = True
        from defects4warp.probes import launches
        from defects4warp.probes.determinism import capture_launches

        @wp.kernel
        def step(x_in: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64), x_out: wp.array(dtype=wp.float64)):
            i = wp.tid()
            x_out[i] = x_in[i] * a[i] + wp.float64(0.5)

        x = wp.array(np.linspace(1.0, 2.0, 6), dtype=wp.float64, requires_grad=True)
        a = wp.array(np.linspace(0.5, 0.9, 6), dtype=wp.float64, requires_grad=True)
        with capture_launches() as captured:
            tape = wp.Tape()
            with tape:
                for _ in range(3):
                    wp.launch(step, dim=6, inputs=[x, a], outputs=[x])
        ctx = types.SimpleNamespace(launches=captured, doc={}, stage=lambda s: None, save=lambda: None)
        print(json.dumps({"warp": wp.config.version, "out": launches.measure(ctx)}))
    """)
    (tmp_path / "check.py").write_text(code)
    res = subprocess.run([str(py), "check.py"], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=child_pythonpath({})))
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout.strip().splitlines()[-1])
    (rec,) = doc["out"]["kernels"]
    assert doc["warp"] == release
    assert rec["skipped"] is None and rec["ok"] is True and rec["launches"] == 3


@wp.kernel
def _generic_affine(x: wp.array(dtype=Any), a: wp.array(dtype=Any), y: wp.array(dtype=Any)):
    i = wp.tid()
    y[i] = x[i] * a[i]


@wp.kernel
def _integrate_all_written(v: wp.array(dtype=wp.float64), x: wp.array(dtype=wp.float64)):
    i = wp.tid()
    x[i] = x[i] + v[i] * v[i]
    v[i] = v[i] * wp.float64(0.5)


def test_the_wrapper_keeps_warps_launch_signature():
    """The runtime trace binds wp.launch's arguments by its signature (recorder): inside the capture
    the wrapper must show Warp's, or ``wp.launch(k, n, inputs=...)`` (dim positional) goes untraced."""
    import inspect

    from defects4warp.probes.determinism import capture_launches

    want = inspect.signature(wp.launch)
    with capture_launches():
        assert inspect.signature(wp.launch) == want
        assert wp.launch.__wrapped__ is not None


def test_a_generic_kernel_launch_gets_its_snapshot():
    """A kernel with ``dtype=Any`` is recorded as its overload (another object than the one launched):
    the contents from before the launch must still reach the record."""
    x = wp.array(np.linspace(1.0, 2.0, 4), dtype=wp.float64, requires_grad=True)
    a = wp.array(np.linspace(3.0, 4.0, 4), dtype=wp.float64, requires_grad=True)
    y = wp.array(np.full(4, 7.0), dtype=wp.float64, requires_grad=True)
    ctx = _ctx(lambda: wp.launch(_generic_affine, dim=4, inputs=[x, a], outputs=[y]))
    (entry,) = ctx.launches
    assert entry[6] is not None
    np.testing.assert_array_equal(entry[6][2], np.full(4, 7.0))  # y before the launch wrote it


def test_a_counter_kernel_launched_past_the_wrapper_is_not_judged():
    """A launch through a name bound before the capture (``from warp import launch``) has no snapshot:
    re-running a slot counter from the contents the launch left would hand out slots past ``out``
    (a crash). It is reported unchecked (uncounted), not run."""
    launch = wp.launch  # bound before the capture, like ``from warp import launch``
    n = 32
    rng = np.random.default_rng(3)
    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    count = wp.zeros(1, dtype=wp.int32)
    slot_of = wp.full(n, -1, dtype=wp.int32)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    (rec,) = _measure(lambda: launch(_emit_above, dim=n, inputs=[x, 0.0, count, slot_of], outputs=[out]))
    assert rec["ok"] is None and rec["skipped"].startswith("no snapshot of the launch's prior contents"), rec
    assert "integer arrays" in rec["skipped"]


def test_a_launch_with_nothing_to_compare_is_not_reported_clean():
    """Every argument written (``inputs=[v, x]``, both updated in place): the check splits all of them
    into outputs, no input with requires_grad is left, and no Jacobian was compared: unchecked, not ok."""
    v = wp.array(np.linspace(1.0, 2.0, 4), dtype=wp.float64, requires_grad=True)
    x = wp.array(np.linspace(3.0, 4.0, 4), dtype=wp.float64, requires_grad=True)
    (rec,) = _measure(lambda: wp.launch(_integrate_all_written, dim=4, inputs=[v, x]))
    assert rec["ok"] is None and rec["skipped"] is not None, rec


@wp.struct
class _Body:
    m: float
    v: float


@wp.kernel
def _momentum(bodies: wp.array(dtype=_Body), p: wp.array(dtype=float)):
    i = wp.tid()
    p[i] = bodies[i].m * bodies[i].v


def test_an_array_of_structs_is_left_unchecked_not_an_error():
    """An array whose dtype is a ``@wp.struct`` has no float view to perturb (its ``numpy()`` is a
    record array): the launch is reported unchecked with the reason, and the probe does not raise."""
    n = 4
    host = np.zeros(n, dtype=[("m", "<f4"), ("v", "<f4")])
    host["m"], host["v"] = np.arange(1, n + 1), 0.5
    bodies = wp.array(host, dtype=_Body, requires_grad=True)
    p = wp.zeros(n, dtype=float, requires_grad=True)
    (rec,) = _measure(lambda: wp.launch(_momentum, dim=n, inputs=[bodies], outputs=[p]))
    assert rec["ok"] is None and rec["skipped"] == "arrays of structs are not supported by the per-launch check", rec
    np.testing.assert_allclose(p.numpy(), [0.5, 1.0, 1.5, 2.0])


@wp.kernel
def _square_then_halve(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * x[i]
    x[i] = wp.float64(0.5) * x[i]


def test_an_input_the_kernel_overwrites_is_restored_before_the_backward():
    """``x`` is read, then overwritten by the same kernel: on a tape the adjoint of ``y = x^2`` reads the
    halved ``x`` (a write-after-read in the program, which the trace reports). The kernel's own adjoint at
    the values it read is ``2 x``, as the finite differences say: no kernel finding. Before, the
    backward followed a forward that had halved ``x``, giving ``x`` (half the FD value): ok False."""
    x = wp.array(np.linspace(1.0, 2.0, 4), dtype=wp.float64, requires_grad=True)
    y = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    (rec,) = _measure(lambda: wp.launch(_square_then_halve, dim=4, inputs=[x], outputs=[y]))
    assert rec["ok"] is True, rec
    np.testing.assert_allclose(x.numpy(), 0.5 * np.linspace(1.0, 2.0, 4))  # the recorded launch's effect kept


def test_snapshots_stop_at_the_total_budget():
    """Each kernel's first recorded launch keeps a copy of its arrays until the capture's total budget
    is spent: two launches of 4 float64 + 4 float64 (64 bytes each) under a 100-byte budget keep one."""
    from defects4warp.probes.determinism import capture_launches

    x = wp.array(np.linspace(1.0, 2.0, 4), dtype=wp.float64, requires_grad=True)
    a = wp.array(np.ones(4), dtype=wp.float64, requires_grad=True)
    y = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    z = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    with capture_launches(total_bytes=100) as captured:
        with wp.Tape():
            wp.launch(_affine64, dim=4, inputs=[x, a, wp.float64(0.0)], outputs=[y])
            wp.launch(_square_then_halve, dim=4, inputs=[x], outputs=[z])
    assert [e[0].key for e in captured] == [_affine64.key, _square_then_halve.key]
    first, second = captured[0][6], captured[1][6]
    np.testing.assert_array_equal(first[0], np.linspace(1.0, 2.0, 4))
    assert second is None


@wp.kernel
def _tile_row_sum(x: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x[i], shape=8)
    s = wp.tile_sum(t)
    wp.tile_store(out, s, offset=i)


def test_a_launch_with_an_explicit_block_dim_is_re_run_with_it(monkeypatch):
    """The capture keeps the block_dim the program passed to wp.launch, and the check re-runs the kernel
    with it (a tile kernel's result depends on it): a tile row-sum launched with block_dim=8 agrees."""
    from defects4warp.probes.determinism import capture_launches

    x = wp.array(np.arange(16, dtype=np.float32).reshape(2, 8) / 16.0, dtype=float, requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    with capture_launches() as captured:
        with wp.Tape():
            wp.launch_tiled(_tile_row_sum, dim=[2], inputs=[x], outputs=[out], block_dim=8)
    assert captured[0][7] == 8
    from defects4warp.probes import launches

    ctx = _ctx(lambda: wp.launch_tiled(_tile_row_sum, dim=[2], inputs=[x], outputs=[out], block_dim=8))
    seen = []
    original = wp.launch

    def spy(kernel, *args, **kwargs):  # the check's forward re-runs (on CPU Warp runs any block_dim as 1)
        if kernel is _tile_row_sum and not kwargs.get("adjoint"):
            seen.append(kwargs.get("block_dim"))
        return original(kernel, *args, **kwargs)

    monkeypatch.setattr(wp, "launch", spy)
    (rec,) = launches.measure(ctx)["kernels"]
    assert rec["ok"] is True and rec["skipped"] is None, rec
    assert seen and set(seen) == {8}
