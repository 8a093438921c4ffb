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
    (["mutate", "admit", "--warp", ","], "give a release"),
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


def test_version_matrix_markdown_and_deprecated_output(tmp_path):
    val = str(ROOT / "docs" / "data" / "oracle-validation-1.12.1-1.19.0.json")
    r = CliRunner().invoke(main, ["version-matrix", val, "--markdown", str(tmp_path / "a.md")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "a.md").read_text().startswith("# Version matrix")
    r = CliRunner().invoke(main, ["version-matrix", val, "-o", str(tmp_path / "b.md")])
    assert r.exit_code == 0 and "--output/-o is deprecated; use --markdown FILE" in r.output
    assert (tmp_path / "b.md").read_text() == (tmp_path / "a.md").read_text()


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
