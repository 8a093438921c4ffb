"""Per-release environments: naming, reuse of the installed release, the
shared-NumPy layout, sizes, listing and removal (creating a real one
downloads Warp, so pip and venv are replaced by fakes here; the real path is
exercised by ``defects4warp envs prepare`` and ``validate --warp VERSION``)."""

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.version import Version

from defects4warp import envs
from defects4warp.cli import main


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
    monkeypatch.setattr(envs, "installed_warp_version", lambda: "1.19.0")
    assert envs.ensure_env("1.16.0") == root / "bin" / "python"
    assert (root / envs.LAST_USED).exists()


def test_installed_release_uses_this_interpreter(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFECTS4WARP_ENVS", str(tmp_path))
    py, version = envs.python_for(None)
    assert py == sys.executable
    assert version[0].isdigit()
    # asking for the installed release by number creates nothing either
    monkeypatch.setattr(envs.subprocess, "run", lambda *a, **k: pytest.fail("pip must not run"))
    assert envs.python_for(version) == (sys.executable, version)
    assert envs.ensure_env(version) == Path(sys.executable)
    assert list(tmp_path.iterdir()) == []


def test_supported_releases():
    assert len(envs.RELEASES) == 20
    assert list(envs.RELEASES) == sorted(envs.RELEASES, key=Version)
    assert envs.RELEASES[0] == "1.0.2" and envs.RELEASES[-1] == "1.19.0"
    assert len({Version(r).minor for r in envs.RELEASES}) == 20  # one per minor release
    # the engine's release differential keeps the releases it was measured on
    assert envs.ENGINE_RELEASES == ("1.12.1", "1.13.0", "1.14.0", "1.15.0", "1.16.0", "1.17.0", "1.18.0", "1.19.0")
    assert envs.numpy_requirement("1.11.1") == "numpy<2" and envs.numpy_requirement("1.12.1") == "numpy"
    assert envs.base_name("1.0.2") == "numpy-1" and envs.base_name("1.19.0") == "numpy-2"


@pytest.fixture
def fake_install(tmp_path, monkeypatch):
    """venv and pip replaced by fakes that write files of known sizes; returns the pip command log."""
    monkeypatch.setenv("DEFECTS4WARP_ENVS", str(tmp_path))
    monkeypatch.setattr(envs, "installed_warp_version", lambda: "1.19.0")
    calls = []

    class Builder:
        def __init__(self, with_pip, clear, symlinks):
            self.with_pip = with_pip

        def create(self, root):
            root = Path(root)
            (root / "bin").mkdir(parents=True, exist_ok=True)
            (root / "bin" / "python").write_text("#!")
            envs._site_packages(root).mkdir(parents=True, exist_ok=True)
            if self.with_pip:
                (envs._site_packages(root) / "pip.py").write_bytes(b"p" * 4096)

    def run(cmd, capture_output, text):
        calls.append(cmd)
        if "--target" in cmd:
            target = Path(cmd[cmd.index("--target") + 1])
            (target / "warp").mkdir(parents=True)
            (target / "warp" / "warp.so").write_bytes(b"w" * 40960)
        else:
            site = Path(cmd[0]).parent.parent / "lib"
            (next(site.glob("python*/site-packages")) / "numpy.py").write_bytes(b"n" * 8192)

        class R:
            returncode = 0
            stderr = ""
        return R()

    monkeypatch.setattr(envs.venv, "EnvBuilder", Builder)
    monkeypatch.setattr(envs.subprocess, "run", run)
    return calls


def test_releases_share_one_numpy_base(tmp_path, fake_install):
    py_a = envs.ensure_env("1.5.1")
    py_b = envs.ensure_env("1.9.1")
    py_c = envs.ensure_env("1.16.0")
    assert py_a == tmp_path / "warp-1.5.1" / "bin" / "python"
    installs = [c[c.index("install") + 1:] for c in fake_install]
    numpy_installs = [c for c in installs if "--target" not in c]
    # one NumPy per major, not one per release
    assert [c[-1] for c in numpy_installs] == ["numpy<2", "numpy"]
    warp_installs = [c for c in installs if "--target" in c]
    assert [c[-1] for c in warp_installs] == ["warp-lang==1.5.1", "warp-lang==1.9.1", "warp-lang==1.16.0"]
    assert all("--no-deps" in c and "--no-cache-dir" in c for c in warp_installs)
    # the release environment sees the base's site-packages through a .pth file
    pth = envs._site_packages(tmp_path / "warp-1.9.1") / "_defects4warp_base.pth"
    assert pth.read_text().strip() == str(envs._site_packages(tmp_path / "numpy-1"))
    assert "base=numpy-1" in (tmp_path / "warp-1.9.1" / envs.MARKER).read_text()
    assert py_b.exists() and py_c.exists()


def test_list_sizes_and_remove(tmp_path, fake_install):
    envs.ensure_env("1.5.1")
    envs.ensure_env("1.9.1")
    listed = {e["name"]: e for e in envs.list_envs()}
    assert list(listed) == ["numpy-1", "warp-1.5.1", "warp-1.9.1"]
    assert listed["warp-1.5.1"]["kind"] == "release" and listed["numpy-1"]["kind"] == "base"
    # the release holds warp only (40 KiB of fake warp.so), the base NumPy and pip
    assert 40960 <= listed["warp-1.5.1"]["bytes"] < 40960 + 12 * 4096  # + the folders' blocks
    assert not list((tmp_path / "warp-1.5.1").rglob("numpy.py"))
    assert listed["numpy-1"]["bytes"] >= 8192 + 4096
    assert listed["warp-1.9.1"]["last_used"] is not None
    removed = envs.remove_env("1.5.1")
    assert removed == [str(tmp_path / "warp-1.5.1")]  # the base is still used by 1.9.1
    removed = envs.remove_env("1.9.1")
    assert removed == [str(tmp_path / "warp-1.9.1"), str(tmp_path / "numpy-1")]
    assert envs.list_envs() == []
    with pytest.raises(envs.ReleaseEnvError, match="no environment for warp-lang 1.9.1"):
        envs.remove_env("1.9.1")


def test_envs_verb(tmp_path, fake_install):
    runner = CliRunner()
    res = runner.invoke(main, ["envs", "prepare", "--warp", "1.5.1,1.19.0"])
    assert res.exit_code == 0, res.output
    assert "installed release, no environment" in res.output
    res = runner.invoke(main, ["envs", "list"])
    assert res.exit_code == 0, res.output
    assert "1.5.1" in res.output and "numpy-1" in res.output and "1 release environment(s)" in res.output
    res = runner.invoke(main, ["envs", "remove"])
    assert res.exit_code == 2 and "give a RELEASE or --all" in res.output
    res = runner.invoke(main, ["envs", "remove", "--all"])
    assert res.exit_code == 0 and "warp-1.5.1" in res.output
    assert envs.list_envs() == []
