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
    from defects4warp.probes.launches import assess, bug_evidence

    skipped = {"kernel": "advance", "launches": 1, "ok": None, "worst": None,
               "skipped": "Jacobian failed: RuntimeError: Error launching kernel 'compute_fd_kernel'"}
    passing = {"kernel": "race_loss", "launches": 1, "ok": True, "worst": None, "skipped": None}
    a = assess({"launches": {"kernels": [skipped, passing], "recorded": 2}})
    (e,) = [e for e in a.evidence if "not checked" in e["finding"]]
    assert e["clean"] is False and e["data"]["counted"] is False and e["data"]["kernel"] == "advance"
    assert [x["clean"] for x in a.evidence if "agree" in x["finding"]] == [True]
    assert [ev.id for ev in bug_evidence(a.facts)] == []  # one kernel unchecked: no launch_all_kernels_pass
    off = dict(skipped, skipped="compiled with enable_backward=False (no adjoint)")
    b = assess({"launches": {"kernels": [off], "recorded": 1}})
    assert b.evidence[0]["clean"] is False and b.evidence[0]["data"] is None  # counted
    assert [ev.id for ev in bug_evidence(b.facts)] == ["kernel_compiled_without_adjoint"]
