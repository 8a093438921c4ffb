"""The installable package: import name ``defects4warp`` from the source folder
``harness/``, the corpus and data shipped inside it, and subprocesses that
import this very copy without the environment's site-packages."""

import importlib.util
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from defects4warp.paths import BUNDLED, IMPORT_NAME, PACKAGE_DIR, bundled, import_root, module

ROOT = Path(__file__).resolve().parent.parent


def _pyproject():
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_code_folder_is_a_listed_package_and_data_is_mapped():
    cfg = _pyproject()["tool"]["setuptools"]
    listed = set(cfg["packages"])
    code = {".".join((IMPORT_NAME,) + p.parent.relative_to(ROOT / "harness").parts)
            for p in (ROOT / "harness").rglob("__init__.py") if "__pycache__" not in p.parts}
    assert code <= listed, f"folders of harness/ missing from [tool.setuptools] packages: {sorted(code - listed)}"
    data = {f"{IMPORT_NAME}.{inside}": name for name, inside in BUNDLED.items()}
    assert listed - code == set(data)
    assert cfg["package-dir"] == {IMPORT_NAME: "harness", **data}
    assert _pyproject()["project"]["scripts"] == {"defects4warp": "defects4warp.cli:main"}


def test_bundled_data_in_a_checkout():
    assert bundled("corpus") == ROOT / "corpus"
    assert (bundled("mutants") / "manifest.yaml").is_file()
    assert (bundled("docs") / "taxonomy.md").is_file()
    with pytest.raises(KeyError):
        bundled("results")
    assert module("probes.worker") == "defects4warp.probes.worker"


def test_import_root_holds_only_this_package(tmp_path):
    root = import_root(tmp_path)
    assert import_root(tmp_path) == root  # reused
    assert os.listdir(root) == [IMPORT_NAME]
    assert Path(os.readlink(Path(root) / IMPORT_NAME)) == PACKAGE_DIR
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = root
    out = subprocess.run([sys.executable, "-c", "import defects4warp.paths as p; print(p.PACKAGE_DIR)"],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(PACKAGE_DIR)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_wheel_installs_into_a_fresh_venv_and_diagnoses(tmp_path):
    """pip wheel, then a venv without system site-packages (dependencies from
    pip's cache or index), then ``defects4warp list`` and one diagnosis from
    a folder that is not the checkout."""
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    no_iso = []  # build with this environment's setuptools when it is recent enough (no download)
    if importlib.util.find_spec("setuptools"):
        from importlib.metadata import version

        from packaging.version import Version

        # bdist_wheel is part of setuptools from 70.1, before that it needs the wheel package
        own = Version(version("setuptools"))
        if own >= Version("70.1") or (own >= Version("64") and importlib.util.find_spec("wheel")):
            no_iso = ["--no-build-isolation"]
    res = subprocess.run(pip + ["wheel", "--no-deps", "-q", *no_iso, "-w", str(tmp_path / "dist"), str(ROOT)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("defects4warp-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"defects4warp", wheel.name.split("-py")[0] + ".dist-info"}
    assert "defects4warp/_corpus/ball-drag-identification/buggy/problem.py" in names
    assert "defects4warp/_mutants/manifest.yaml" in names and "defects4warp/schemas/diagnosis.schema.json" in names
    assert not any("__pycache__" in n for n in names)

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    py, exe = env_dir / "bin" / "python", env_dir / "bin" / "defects4warp"
    res = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["DEFECTS4WARP_RESULTS"] = str(tmp_path / "results")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    work = tmp_path / "elsewhere"
    work.mkdir()

    def cli(*args):
        return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, cwd=work, timeout=900)

    no_top_level = "import importlib.util, sys; sys.exit(importlib.util.find_spec('harness') is not None)"
    assert subprocess.run([str(py), "-c", no_top_level], env=env, cwd=work).returncode == 0
    listing = cli("list")
    assert listing.returncode == 0, listing.stderr[-3000:]
    assert "ball-drag-identification" in listing.stdout and "per class:" in listing.stdout
    run = cli("run", "--cases", "ball-drag-identification", "--no-store", "--jobs", "1")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "bug inplace_math │ bug inplace_math │ yes" in run.stdout
    assert "no_bug correct   │ no_bug correct   │ yes" in run.stdout
    assert "class accuracy 1.000" in run.stdout
    # a bundled case is named by its id from anywhere (the wheel has no corpus/ folder to give a path in)
    diag = cli("diagnose", "ball-drag-identification/fixed", "--engine", "fd-only")
    assert diag.returncode == 0, diag.stderr[-3000:]
    assert "verdict no_bug" in diag.stdout
    # the committed builtins data belongs to a checkout: an installed package refuses to overwrite it
    bi = cli("maint", "builtins", "--warp", "1.19.0", "--write-package-data")
    assert bi.returncode == 2 and "is an installed package" in " ".join(bi.stderr.split()), bi.stderr[-3000:]
    # the worker imported the installed copy through the import folder, not the checkout
    (link,) = (tmp_path / "cache" / "defects4warp" / "import").glob(f"*/{IMPORT_NAME}")
    assert Path(os.readlink(link)).is_relative_to(env_dir)


def test_verbs_that_write_leave_an_installed_bundled_corpus_alone(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from defects4warp import paths
    from defects4warp.cli import main
    from defects4warp.commands import new_case

    assert paths.installed_copy(paths.PACKAGE_DIR / "_corpus" / "x") and not paths.installed_copy(tmp_path)
    monkeypatch.setattr(new_case, "default_corpus", lambda: paths.PACKAGE_DIR / "_corpus")
    res = CliRunner().invoke(main, ["maint", "new-case", "zz-probe"])
    assert res.exit_code == 2 and "--corpus DIR" in res.output, res.output
    assert not (paths.PACKAGE_DIR / "_corpus" / "zz-probe").exists()
