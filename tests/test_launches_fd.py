"""The per-launch check's finite differences on every float dtype.

Up to Warp 1.9.1 ``warp.autograd.jacobian_fd`` differences through a kernel
typed float32, so a float64 launch raised and the check did not run (it was
reported as a skipped kernel). The probe now takes its own central-difference
Jacobian where the release's cannot take the dtype.
"""

import json
import os
import subprocess
import textwrap
from typing import Any

import numpy as np
import pytest

wp = pytest.importorskip("warp")


@wp.kernel
def _square_and_length(x: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * x[i] * wp.float64(3.0) + wp.length(v[i])


@wp.kernel(enable_backward=False)
def _fd32(left: wp.array(dtype=float), right: wp.array(dtype=float), eps: float, fd: wp.array(dtype=float)):
    i = wp.tid()
    fd[i] = (right[i] - left[i]) / (2.0 * eps)


@wp.kernel(enable_backward=False)
def _fd_any(left: wp.array(dtype=Any), right: wp.array(dtype=Any), eps: Any, fd: wp.array(dtype=Any)):
    i = wp.tid()
    fd[i] = (right[i] - left[i]) / (eps + eps)


def _arrays():
    x = wp.array(np.array([0.5, -1.0]), dtype=wp.float64, requires_grad=True)
    v = wp.array(np.array([[1.0, 2.0, 2.0], [0.0, 3.0, 4.0]]), dtype=wp.vec3d, requires_grad=True)
    y = wp.array(np.array([10.0, 20.0]), dtype=wp.float64, requires_grad=True)
    return x, v, y


def test_own_fd_jacobian_of_a_float64_launch_matches_the_closed_form():
    from defects4warp.probes.launches import jacobian_fd

    x, v, y = _arrays()
    jac = jacobian_fd(_square_and_length, dim=2, inputs=[x, v], outputs=[y], device="cpu", eps=1e-6)
    assert sorted(jac) == [(0, 0), (1, 0)]
    assert jac[(0, 0)].shape == (2, 2) and jac[(1, 0)].shape == (2, 2, 3)
    np.testing.assert_allclose(jac[(0, 0)], np.diag([6 * 0.5, 6 * -1.0]), atol=1e-8)
    dv = np.zeros((2, 2, 3))
    dv[0, 0] = [1 / 3, 2 / 3, 2 / 3]  # v / |v|, |v| = 3
    dv[1, 1] = [0.0, 3 / 5, 4 / 5]
    np.testing.assert_allclose(jac[(1, 0)], dv, atol=1e-8)
    # inputs restored, outputs untouched (each launch wrote into copies)
    np.testing.assert_array_equal(x.numpy(), [0.5, -1.0])
    np.testing.assert_array_equal(y.numpy(), [10.0, 20.0])


def test_the_gate_reads_the_release_fd_kernel_dtype(monkeypatch):
    import warp.autograd as wa

    from defects4warp.probes.launches import warp_fd_takes

    x, v, y = _arrays()
    f32 = wp.zeros(2, dtype=float, requires_grad=True)
    v32 = wp.zeros(2, dtype=wp.vec3, requires_grad=True)
    monkeypatch.delattr(wa, "compute_fd_kernel", raising=False)  # 1.10.1 and later: dtype-generic
    assert warp_fd_takes([x, v, y]) is True
    monkeypatch.setattr(wa, "compute_fd_kernel", _fd32, raising=False)  # 1.9.1 and earlier
    assert warp_fd_takes([f32, v32]) is True
    assert warp_fd_takes([f32, y]) is False
    assert warp_fd_takes([v]) is False
    monkeypatch.setattr(wa, "compute_fd_kernel", _fd_any, raising=False)  # 1.3.x-1.5.x: generic
    assert warp_fd_takes([f32, y, v]) is True


@pytest.mark.slow
def test_the_float64_launch_is_checked_on_warp_1_9_1(tmp_path):
    """On 1.9.1 the probe's record says the kernel agrees, where it said
    ``Jacobian failed: RuntimeError: ... compute_fd_kernel ...`` before."""
    from defects4warp.envs import ensure_env
    from defects4warp.paths import child_pythonpath

    py = ensure_env("1.9.1")
    code = textwrap.dedent("""
        import json, types
        import numpy as np, warp as wp
        wp.config.quiet = True
        from defects4warp.probes import launches

        @wp.kernel
        def step(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
            i = wp.tid()
            y[i] = x[i] * x[i] * x[i]

        x = wp.array(np.array([0.5, -1.0, 2.0]), dtype=wp.float64, requires_grad=True)
        y = wp.zeros(3, dtype=wp.float64, requires_grad=True)
        ctx = types.SimpleNamespace(launches=[(step, 3, 0, [x], [y], x.device)], doc={},
                                    stage=lambda s: None, save=lambda: None)
        out = launches.measure(ctx)
        print(json.dumps({"warp": wp.config.version, "out": out}))
    """)
    (tmp_path / "check.py").write_text(code)
    res = subprocess.run([str(py), "check.py"], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=child_pythonpath({})))
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout.strip().splitlines()[-1])
    (rec,) = doc["out"]["kernels"]
    assert doc["warp"] == "1.9.1"
    assert rec["skipped"] is None and rec["ok"] is True and rec["worst"] is None


def test_a_check_that_did_not_run_is_reported_uncounted_not_clean():
    from defects4warp.engines.assess import AssessContext
    from defects4warp.engines.assess.launches import assess, bug_evidence

    skipped = {"kernel": "advance", "launches": 1, "ok": None, "worst": None,
               "skipped": "Jacobian failed: RuntimeError: Error launching kernel 'compute_fd_kernel'"}
    passing = {"kernel": "race_loss", "launches": 1, "ok": True, "worst": None, "skipped": None}
    doc = {"launches": {"kernels": [skipped, passing], "recorded": 2}}
    a = assess(doc)
    (e,) = [e for e in a.evidence if "not checked" in e["finding"]]
    assert e["clean"] is False and e["data"]["counted"] is False and e["data"]["kernel"] == "advance"
    assert [x["clean"] for x in a.evidence if "agree" in x["finding"]] == [True]
    assert [ev.id for ev in bug_evidence(doc, AssessContext(assessed={"launches": a})).cited] == []  # one kernel unchecked: no launch_all_kernels_pass
    off = dict(skipped, skipped="compiled with enable_backward=False (no adjoint)")
    doc = {"launches": {"kernels": [off], "recorded": 1}}
    b = assess(doc)
    assert b.evidence[0]["clean"] is False and b.evidence[0]["data"] is None  # counted
    assert [ev.id for ev in bug_evidence(doc, AssessContext()).cited] == ["kernel_compiled_without_adjoint"]


# A float32 kernel whose derivative d y / d k is ~1e-4 and whose outputs are ~20: the
# central difference's round-off (eps32 |y| / h) is a few percent of that entry.
@wp.kernel
def _sag(x: wp.array(dtype=wp.vec3), k: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = x[i] + wp.vec3(0.0, -0.00005 * k[i] * k[i], 0.0)


@wp.func
def _square(a: float):
    return a * a


@wp.func_grad(_square)
def _adj_square(a: float, adj_ret: float):
    wp.adjoint[a] += 3.0 * a * adj_ret  # 3a where the derivative is 2a


@wp.kernel
def _sag_wrong_adjoint(x: wp.array(dtype=wp.vec3), k: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = x[i] + wp.vec3(0.0, -0.00005 * _square(k[i]), 0.0)


def _measure_one(kernel, seed=1):
    import types

    from defects4warp.probes import launches

    rng = np.random.default_rng(seed)
    x = wp.array(rng.uniform(-20.0, 20.0, (8, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    k = wp.array(rng.uniform(0.5, 1.5, 8).astype(np.float32), requires_grad=True)
    y = wp.zeros(8, dtype=wp.vec3, requires_grad=True)
    ctx = types.SimpleNamespace(launches=[(kernel, 8, 0, [x, k], [y], x.device)], doc={},
                                stage=lambda s: None, save=lambda: None)
    (rec,) = launches.measure(ctx)["kernels"]
    return rec, (x, k, y)


def test_float32_round_off_in_the_differences_is_no_finding():
    """Before the noise bound this correct kernel was reported disagreeing (d y / d k
    relative error 0.03, ``sparse``) at the float32 tolerance of 1e-2."""
    rec, (x, k, y) = _measure_one(_sag)
    assert rec["skipped"] is None
    assert rec["ok"] is True and rec["worst"] is None
    np.testing.assert_array_equal(y.numpy(), np.zeros((8, 3), dtype=np.float32))  # user arrays untouched


def test_a_wrong_adjoint_with_a_small_derivative_is_still_found():
    rec, _ = _measure_one(_sag_wrong_adjoint)
    assert rec["ok"] is False
    w = rec["worst"]
    assert (w["input"], w["output"]) == ("k", "y")
    assert 0.4 < w["relative_error"] < 0.6  # 3a against 2a


def test_the_noise_bound_covers_the_round_off_and_not_the_derivative():
    import warp.autograd as wa

    from defects4warp.probes.context import step_size
    from defects4warp.probes.launches import fd_noise

    rng = np.random.default_rng(1)
    x = wp.array(rng.uniform(-20.0, 20.0, (8, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    k = wp.array(rng.uniform(0.5, 1.5, 8).astype(np.float32), requires_grad=True)
    y = wp.zeros(8, dtype=wp.vec3, requires_grad=True)
    kw = {"dim": 8, "inputs": [x, k], "outputs": [y], "device": "cpu", "max_blocks": 0}
    h = step_size(np.float32) * 10.0
    jfd = wa.jacobian_fd(_sag, eps=h, **kw)
    unc = fd_noise(_sag, fd=wa.jacobian_fd, jfd=jfd, eps=h, dtype=np.float32, **kw)
    assert sorted(unc) == sorted(jfd) == [(0, 0), (1, 0)]
    f = jfd[(1, 0)].numpy().astype(np.float64).reshape(24, 8)
    true = np.zeros((24, 8))
    kv = k.numpy().astype(np.float64)
    true[np.arange(8) * 3 + 1, np.arange(8)] = -0.0001 * kv
    err = np.abs(f - true)
    u = unc[(1, 0)].reshape(24, 8)
    assert np.all(u >= 0.0)
    assert np.all(err <= u + 1e-12)  # every entry's actual error is inside its bound
    # the bound is of the round-off's size, not the entries': below the typical d y / d k entry,
    # and 1e-4 of the unit entries of d y / d x (the same outputs, the same round-off)
    assert np.median(u[true != 0]) < np.median(np.abs(true[true != 0]))
    assert np.max(unc[(0, 0)]) < 1e-4


@wp.kernel
def _levels(u: wp.array(dtype=wp.float64), w: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    # 16 duty levels of u, plus a smooth term in w
    y[i] = wp.floor(u[i] * wp.float64(16.0)) / wp.float64(16.0) + w[i] * w[i]


@wp.kernel
def _ignores_second(u: wp.array(dtype=wp.float64), w: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = u[i] * wp.float64(2.0)


def test_staircase_pairs_tell_a_staircase_from_a_constant_and_a_slope():
    """Flat where measured and moving over a wide step: the floor's input, not the smooth one, and not an
    input the kernel never reads."""
    from defects4warp.probes.launches import jacobian_ad, jacobian_fd, staircase_pairs

    for kernel, want in ((_levels, [("u", "y")]), (_ignores_second, [])):
        u = wp.array(np.array([0.53, 0.30]), dtype=wp.float64, requires_grad=True)
        w = wp.array(np.array([0.7, -0.2]), dtype=wp.float64, requires_grad=True)
        y = wp.zeros(2, dtype=wp.float64, requires_grad=True)
        kw = {"dim": 2, "inputs": [u, w], "outputs": [y], "device": "cpu"}
        jad, jfd = jacobian_ad(kernel, **kw), jacobian_fd(kernel, eps=1e-6, **kw)
        got = staircase_pairs(kernel, jad, jfd, ["u", "w", "y"], 2, step=0.25, **kw)
        assert [(p["input"], p["output"]) for p in got] == want
        if want:
            # one level (1/16) crossed over a +-0.25 step of u = 0.53: (y+ - y-) / 0.5 = (12/16 - 4/16) / 0.5 = 1
            assert got[0]["wide_max"] == pytest.approx(1.0)
