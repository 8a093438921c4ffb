"""The options shared by the verbs mean the same everywhere: ``--warp`` (a
release, a comma-separated list, or ``all``; a one-release verb says so when
given several), ``--json FILE``, ``--markdown FILE``; a usage error exits 2
with a message naming the option."""

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from defects4warp.cli import main
from defects4warp.commands._common import warp_option
from defects4warp.envs import RELEASES

ROOT = Path(__file__).resolve().parent.parent


def _echo_warp(many):
    @click.command()
    @warp_option(many=many)
    def c(warp):
        click.echo(json.dumps(warp))
    return c


@pytest.mark.parametrize("value, many, parsed", [
    ("1.16.0", False, "1.16.0"),
    ("1.16.0", True, ["1.16.0"]),
    (" 1.16.0, 1.19.0 ", True, ["1.16.0", "1.19.0"]),
    ("all", True, list(RELEASES)),
])
def test_warp_values(value, many, parsed):
    r = CliRunner().invoke(_echo_warp(many), ["--warp", value])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output) == parsed


def test_warp_absent_is_none():
    assert json.loads(CliRunner().invoke(_echo_warp(True), []).output) is None


@pytest.mark.parametrize("args, text", [
    (["run", "--warp", "1.16.0,1.19.0"], "`run` takes one release, not '1.16.0,1.19.0'"),
    (["diagnose", str(ROOT / "corpus" / "projectile-launch-fit" / "fixed"), "--warp", "all"], "`diagnose` takes one release"),
    (["export", "/tmp/never-written", "--warp", "1.16.0,1.19.0"], "`export` takes one release"),
    (["leaderboard", "--warp", "all"], "`leaderboard` takes one release"),
    (["validate", "--warp", "banana"], "'banana' is not a warp-lang release number"),
    (["matrix"], "Missing option '--warp'"),
    (["maint", "mutate", "admit", "--warp", ","], "give a release"),
])
def test_usage_errors_name_the_option(args, text):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    assert "'--warp'" in r.output and text in " ".join(r.output.split())


def test_list_json_flag_and_file(tmp_path):
    r = CliRunner().invoke(main, ["list", "--cases", "projectile-launch-fit", "--json"])
    assert r.exit_code == 0
    assert json.loads(r.output)["cases"][0]["id"] == "projectile-launch-fit"
    r = CliRunner().invoke(main, ["list", "--cases", "projectile-launch-fit", "--json", str(tmp_path / "l.json")])
    assert r.exit_code == 0
    assert json.loads((tmp_path / "l.json").read_text())["per_class"] == {"double_count": 1, "correct": 1}


def test_version_matrix_markdown_and_no_old_output_option(tmp_path):
    val = str(ROOT / "docs" / "data" / "oracle-validation-1.12.1-1.19.0.json")
    r = CliRunner().invoke(main, ["version-matrix", val, "--markdown", str(tmp_path / "a.md")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "a.md").read_text().startswith("# Version matrix")
    for old in ("-o", "--output"):  # the old hidden spelling of --markdown is gone
        r = CliRunner().invoke(main, ["version-matrix", val, old, str(tmp_path / "b.md")])
        assert r.exit_code == 2 and f"No such option '{old}'" in r.output, r.output
    assert not (tmp_path / "b.md").exists()


def test_unwritable_markdown_path_is_a_usage_error(tmp_path):
    val = str(ROOT / "docs" / "data" / "oracle-validation-1.12.1-1.19.0.json")
    r = CliRunner().invoke(main, ["version-matrix", val, "--markdown", str(tmp_path / "no" / "a.md")])
    assert r.exit_code == 2
    assert f"cannot write {tmp_path / 'no' / 'a.md'}: the folder {tmp_path / 'no'} does not exist" in " ".join(r.output.split())


def test_json_dash_prints_only_json_or_is_refused_where_the_file_is_written_as_it_goes(tmp_path):
    import json as _json

    from click.testing import CliRunner

    from defects4warp.cli import main

    res = CliRunner().invoke(main, ["history", "--results", str(tmp_path), "--json", "-"])
    assert res.exit_code == 0, res.output
    assert _json.loads(res.stdout) == []
    for verb in (["run", "--cases", "ball-drag-identification"], ["diagnose", str(tmp_path)]):
        res = CliRunner().invoke(main, verb + ["--json", "-"])
        assert res.exit_code == 2 and "--json" in res.output and "give a file" in res.output, res.output


def test_a_results_home_that_cannot_be_created_is_a_usage_error():
    from click.testing import CliRunner

    from defects4warp.cli import main

    for verb in (["run", "--cases", "ball-drag-identification", "--no-store"], ["history"]):
        res = CliRunner().invoke(main, verb + ["--results", "/proc/defects4warp-results"])
        assert res.exit_code == 2 and "cannot create the results home /proc/defects4warp-results" in res.output, res.output


UNSUPPORTED = [("1.9", "1.9.1"), ("1.8.0", "1.8.1"), ("2.0.0", None), ("1.19.1", "1.19.0")]


@pytest.fixture
def no_install(tmp_path, monkeypatch):
    """An empty environment cache, an installed release of 1.19.0, and pip/venv that fail the test if used."""
    from defects4warp import envs

    monkeypatch.setenv("DEFECTS4WARP_ENVS", str(tmp_path / "envs"))
    monkeypatch.setattr(envs, "installed_warp_version", lambda: "1.19.0")
    monkeypatch.setattr(envs.subprocess, "run", lambda *a, **k: pytest.fail(f"nothing may be installed: {a}"))
    monkeypatch.setattr(envs.venv, "EnvBuilder", lambda *a, **k: pytest.fail("no environment may be created"))
    return tmp_path / "envs"


def _one_line(out):
    return " ".join(out.split())


@pytest.mark.parametrize("value, near", UNSUPPORTED)
@pytest.mark.parametrize("many", [False, True])
def test_an_unsupported_release_is_a_usage_error_naming_the_supported_ones(no_install, value, near, many):
    r = CliRunner().invoke(_echo_warp(many), ["--warp", value])
    out = _one_line(r.output)
    assert r.exit_code == 2, r.output
    assert f"warp-lang {value} is not a supported release" in out
    assert "supported: " + ", ".join(RELEASES) in out
    if near:
        assert f"(did you mean {near}?)" in out
    else:
        assert "did you mean" not in out
    assert not no_install.exists() or list(no_install.iterdir()) == []


def test_an_unsupported_release_in_a_list_is_refused(no_install):
    r = CliRunner().invoke(_echo_warp(True), ["--warp", "1.16.0,1.7.0"])
    assert r.exit_code == 2 and "warp-lang 1.7.0 is not a supported release (did you mean 1.7.2?)" in _one_line(r.output)


def test_the_installed_release_is_accepted_even_when_unsupported(tmp_path, monkeypatch):
    """The installed warp-lang needs no environment, so its number is always accepted."""
    from defects4warp import envs

    monkeypatch.setenv("DEFECTS4WARP_ENVS", str(tmp_path))
    monkeypatch.setattr(envs, "installed_warp_version", lambda: "1.19.1")
    monkeypatch.setattr(envs.subprocess, "run", lambda *a, **k: pytest.fail("nothing may be installed"))
    r = CliRunner().invoke(_echo_warp(False), ["--warp", "1.19.1"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output) == "1.19.1"
    assert envs.ensure_env("1.19.1") == Path(envs.sys.executable)
    r = CliRunner().invoke(_echo_warp(False), ["--warp", "1.19.2"])
    assert r.exit_code == 2 and "and the installed release 1.19.1" in _one_line(r.output)


@pytest.mark.parametrize("args", [
    ["diagnose", str(ROOT / "corpus" / "projectile-launch-fit" / "fixed"), "--warp", "1.9"],
    ["run", "--cases", "projectile-launch-fit", "--no-store", "--warp", "1.9"],
    ["validate", "--cases", "projectile-launch-fit", "--warp", "1.9"],
    ["matrix", "--cases", "projectile-launch-fit", "--warp", "1.19.0,1.9"],
    ["export", "/tmp/never-written", "--warp", "1.9"],
    ["leaderboard", "--warp", "1.9"],
    ["maint", "builtins", "--warp", "1.9"],
    ["maint", "mutate", "admit", "--warp", "1.9"],
    ["envs", "prepare", "--warp", "1.9"],
    ["maint", "pages", "--check", "--warp", "1.9"],
    ["audit", "--from", "1.9", "--to", "1.19.0", "--cases", "projectile-launch-fit"],
    ["audit", "--from", "1.16.0", "--to", "1.9", "--cases", "projectile-launch-fit"],
])
def test_every_verb_refuses_an_unsupported_release_before_installing(no_install, args):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    assert "warp-lang 1.9 is not a supported release (did you mean 1.9.1?)" in _one_line(r.output)
    assert not no_install.exists() or list(no_install.iterdir()) == []


def test_ensure_env_refuses_an_unsupported_release_and_removes_a_failed_install(tmp_path, monkeypatch):
    from defects4warp import envs

    monkeypatch.setenv("DEFECTS4WARP_ENVS", str(tmp_path))
    monkeypatch.setattr(envs, "installed_warp_version", lambda: "1.19.0")
    monkeypatch.setattr(envs.subprocess, "run", lambda *a, **k: pytest.fail("pip must not run"))
    with pytest.raises(envs.ReleaseEnvError, match=r"warp-lang 1\.8\.0 is not a supported release \(did you mean 1\.8\.1\?\)"):
        envs.ensure_env("1.8.0")
    assert list(tmp_path.iterdir()) == []
    assert envs.supported_patch("1.9") == "1.9.1" and envs.supported_patch("2.0") is None

    # a supported release whose pip install fails leaves no half-made environment behind
    class Builder:
        def __init__(self, **kw):
            pass

        def create(self, root):
            (Path(root) / "bin").mkdir(parents=True)
            (Path(root) / "bin" / "python").write_text("#!")

    class Failed:
        returncode, stderr = 1, "ERROR: No matching distribution found for warp-lang==1.16.0"

    monkeypatch.setattr(envs.venv, "EnvBuilder", Builder)
    monkeypatch.setattr(envs.subprocess, "run", lambda *a, **k: Failed())
    (tmp_path / "numpy-2" / "bin").mkdir(parents=True)
    (tmp_path / "numpy-2" / "bin" / "python").write_text("#!")
    (tmp_path / "numpy-2" / envs.MARKER).write_text("numpy\n")
    with pytest.raises(envs.ReleaseEnvError, match="pip could not install warp-lang==1.16.0: ERROR: No matching"):
        envs.ensure_env("1.16.0")
    assert not (tmp_path / "warp-1.16.0").exists()


def _no_dash_file(path):
    assert not (path / "-").exists(), "a file literally named '-' was written"


def test_markdown_dash_prints_on_stdout_and_writes_no_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    val = str(ROOT / "docs" / "data" / "oracle-validation-1.12.1-1.19.0.json")
    r = CliRunner().invoke(main, ["version-matrix", val, "--markdown", str(tmp_path / "a.md")])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["version-matrix", val, "--markdown", "-"])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("# Version matrix")
    assert r.stdout.rstrip("\n") == (tmp_path / "a.md").read_text().rstrip("\n")
    _no_dash_file(tmp_path)
    run = str(ROOT / "docs" / "data" / "run-scripts.json")
    r = CliRunner().invoke(main, ["report", run, "--markdown", "-"])
    assert r.exit_code == 0 and r.stdout.startswith("# Results"), r.output
    r = CliRunner().invoke(main, ["report", run, "--html", "-"])
    assert r.exit_code == 0 and r.stdout.lstrip().lower().startswith("<!doctype html>"), r.output[:200]
    _no_dash_file(tmp_path)


def test_json_dash_prints_the_json_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    table = str(ROOT / "docs" / "data" / "capture-table.json")
    r = CliRunner().invoke(main, ["maint", "capture-table", "--from-json", table, "--json", "-"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == json.loads(Path(table).read_text())
    r = CliRunner().invoke(main, ["maint", "capture-table", "--from-json", table, "--markdown", "-"])
    assert r.exit_code == 0 and r.stdout.lstrip().startswith("#") and "{" not in r.stdout.splitlines()[0]
    r = CliRunner().invoke(main, ["maint", "capture-table", "--from-json", table, "--json", "-", "--markdown",
                                  str(tmp_path / "t.md")])
    assert r.exit_code == 0 and json.loads(r.stdout)["records"] == json.loads(Path(table).read_text())["records"]
    assert (tmp_path / "t.md").read_text().startswith(r"# ")

    import yaml

    (tmp_path / "m.yaml").write_text(yaml.safe_dump({"mutants": [{"id": "a-x", "operator": "double_backward"}]}))
    (tmp_path / "run.json").write_text(json.dumps({"summary": {"engine": "e"}, "results": [
        {"case": "a-x", "variant": "buggy", "correct": {"verdict": True, "class": False}}]}))
    r = CliRunner().invoke(main, ["maint", "mutate", "score", str(tmp_path / "run.json"), "--manifest", str(tmp_path / "m.yaml"),
                                  "--json", "-"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)[0]["operators"]["double_backward"]["mutants"] == 1
    r = CliRunner().invoke(main, ["maint", "mutate", "summary", "--manifest", str(tmp_path / "m.yaml"), "--markdown", "-"])
    _no_dash_file(tmp_path)


@pytest.mark.parametrize("args, text", [
    (["report", str(ROOT / "docs" / "data" / "run-scripts.json"), "--markdown", "-", "--html", "-"],
     "--markdown - and --html - would both print on standard output"),
    (["maint", "capture-table", "--from-json", str(ROOT / "docs" / "data" / "capture-table.json"), "--markdown", "-",
      "--json", "-"], "--markdown - and --json - would both print on standard output"),
    (["audit", "--from", "1.16.0", "--to", "1.19.0", "--markdown", "-", "--json", "-"],
     "--markdown - and --json - would both print on standard output"),
    (["matrix", "--warp", "1.19.0", "--cases", "projectile-launch-fit", "--json", "-"],
     "writes its JSON as it goes (a run killed midway keeps what finished): give a file, not -"),
    (["validate", "--cases", "projectile-launch-fit", "--json", "-"],
     "writes its JSON as it goes (a run killed midway keeps what finished): give a file, not -"),
])
def test_dash_is_refused_where_it_cannot_mean_stdout(tmp_path, monkeypatch, args, text):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    assert text in _one_line(r.output)
    _no_dash_file(tmp_path)
