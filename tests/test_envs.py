"""Per-release environments: naming, reuse, and refusal of bad versions
(creating one downloads Warp, so that path is exercised by
``defects4warp validate --warp VERSION``, not by the unit suite)."""

import sys

import pytest

from defects4warp import envs


def test_bad_version_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFECTS4WARP_ENVS", str(tmp_path))
    with pytest.raises(envs.ReleaseEnvError, match="'latest' is not a release number"):
        envs.ensure_env("latest")


def test_ready_environment_is_reused_without_pip(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFECTS4WARP_ENVS", str(tmp_path))
    root = tmp_path / "warp-1.16.0"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").write_text("")
    (root / envs.MARKER).write_text("warp-lang==1.16.0\n")
    monkeypatch.setattr(envs.subprocess, "run", lambda *a, **k: pytest.fail("pip must not run"))
    assert envs.ensure_env("1.16.0") == root / "bin" / "python"


def test_installed_release_uses_this_interpreter():
    py, version = envs.python_for(None)
    assert py == sys.executable
    assert version[0].isdigit()
