"""A private Warp kernel cache for measuring workers on Warp 1.0.x/1.1.x.

Those releases name a CPU module's object file after the module alone
(``wp_problem.o``), so parallel workers building different modules of the
same name overwrite each other's object file (measured: "CPU kernel build
failed with error code -1" in one of four engine workers started together on
1.0.2). Both workers (engine and oracle) take a private cache there, from the
neutral module ``defects4warp.kernel_cache``.
"""

import ast
import os
import sys
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import defects4warp
from defects4warp import kernel_cache


def _fake_warp(monkeypatch, version):
    mod = types.ModuleType("warp")
    mod.config = types.SimpleNamespace(version=version, kernel_cache_dir=None)
    monkeypatch.setitem(sys.modules, "warp", mod)
    return mod


@pytest.mark.parametrize("version", ["1.0.2", "1.1.0", "1.2.2"])
def test_releases_whose_cache_can_serve_another_programs_module_get_a_private_cache(monkeypatch, version):
    wp = _fake_warp(monkeypatch, version)
    d = kernel_cache.private_kernel_cache()
    assert d is not None and os.path.isdir(d.name) and wp.config.kernel_cache_dir == d.name
    assert os.path.basename(d.name).startswith("d4w-kcache-")
    d.cleanup()
    assert not os.path.exists(d.name)


@pytest.mark.parametrize("version", ["1.3.3", "1.9.1", "1.19.0", "2.0.0", "dev"])
def test_newer_or_unreadable_releases_keep_the_shared_cache(monkeypatch, version):
    wp = _fake_warp(monkeypatch, version)
    assert kernel_cache.private_kernel_cache() is None and wp.config.kernel_cache_dir is None
    assert kernel_cache.SHARED_CACHE_BEFORE == (1, 3)


def test_both_workers_use_the_neutral_module_and_it_imports_nothing_of_the_package():
    from defects4warp.oracle import worker as oracle_worker
    from defects4warp.probes import worker as engine_worker

    assert engine_worker.private_kernel_cache is kernel_cache.private_kernel_cache
    assert oracle_worker.private_kernel_cache is kernel_cache.private_kernel_cache
    tree = ast.parse((Path(defects4warp.__file__).parent / "kernel_cache.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(isinstance(n, ast.ImportFrom) and n.module != "__future__" for n in ast.walk(tree))
    assert imported == {"tempfile", "warp"}


@pytest.mark.slow
def test_parallel_engine_workers_on_warp_1_0_2_with_same_named_modules(programs):
    """Four engine workers at once on 1.0.2, each a ``problem`` module with other
    kernels: each builds in its own cache and measures its own gradient."""
    from defects4warp.envs import ensure_env
    from defects4warp.isolation import run_worker

    py = str(ensure_env("1.0.2"))
    names = ["cubic", "kink", "staircase", "nan_sqrt"]
    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        futs = {n: pool.submit(run_worker, programs / n, options={"probes": ["determinism"]}, timeout_s=300,
                               python=py) for n in names}
        res = {n: f.result() for n, f in futs.items()}
    for n, r in res.items():
        assert r.returncode == 0 and r.doc["errors"] == [], (n, r.stderr_tail[-2000:])
        assert r.doc["warp_version"] == "1.0.2"
        assert "d4w-kcache-" in r.doc["log_tail"], r.doc["log_tail"][-800:]  # Warp prints its kernel cache
    norms = {n: np.array(r.doc["determinism"]["gradient_norms"], dtype=float) for n, r in res.items()}  # NaN as "nan"
    np.testing.assert_allclose(norms["cubic"], [np.linalg.norm([3.0, 12.0, 0.75])] * 3, rtol=1e-12)
    assert all(np.isnan(norms["nan_sqrt"]))
    assert np.isfinite(norms["kink"]).all() and np.isfinite(norms["staircase"]).all()
