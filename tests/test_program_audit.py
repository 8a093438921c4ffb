"""The program audit (``defects4warp audit PATH --warp A,B``): a user's program across Warp releases.

Fast tests check the comparison, the ticket line, the changelog hook and the verb's options on synthetic
data; the slow ones run tests/programs/script_vec_fit (``y[i].x = 2 * x[i]``: Warp 1.12.1 and 1.13.0 give
the component write of an array element no adjoint, 1.14.0 fixed it; measured, docs/builtins.md) on
prepared release environments.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from defects4warp import program_audit as pa
from defects4warp.report.program_audit_report import audit_program_markdown
from defects4warp.cli import main
from defects4warp.envs import MARKER, ReleaseEnvError, cache_root, installed_warp_version

PROGRAMS = Path(__file__).parent / "programs"

SCRIPT = PROGRAMS / "script_vec_fit" / "train.py"


def test_relative_change_has_a_safe_denominator():
    assert pa.relative_change([0.0, 0.0], [3.0, 4.0]) == 1.0  # from a zero gradient: 1, not 1e+300
    assert pa.relative_change([0.0, 0.0], [0.0, 0.0]) == 0.0
    assert pa.relative_change([3.0, 4.0], [3.0, -4.0]) == pytest.approx(8.0 / 5.0)
    assert pa.relative_change([1.0, float("nan")], [1.0, float("nan")]) == 0.0
    assert pa.relative_change([1.0, 2.0], [1.0, float("inf")]) == float("inf")
    assert pa.relative_change([1.0], [1.0, 2.0]) == float("inf")


def test_param_changes_compare_values_else_digests_else_norms():
    a = {"k": {"shape": [2], "values": [1.0, 0.0], "digest": "a", "norm": 1.0},
         "big": {"shape": [9], "digest": "d1", "norm": 2.0}, "gone": {"shape": [1], "values": [1.0]}}
    b = {"k": {"shape": [2], "values": [1.0, 1.0], "digest": "b", "norm": 2 ** 0.5},
         "big": {"shape": [9], "digest": "d2", "norm": 4.0}}
    got = pa.param_changes(a, b)
    assert got["k"] == pytest.approx(1.0 / 2 ** 0.5) and got["big"] == pytest.approx(0.5)
    assert got["gone"] == float("inf")
    assert pa.param_changes(a, dict(a))["big"] == 0.0


def test_builtin_changes_between_name_the_fixed_access_pattern():
    used = {"[component_write]": ["place"], "dot": ["misfit"]}
    got = pa.builtin_changes_between("1.12.1", "1.19.0", used)
    assert {c["id"] for c in got} == {"[component_write](vec3f)", "[component_write](vec3d)"}
    assert all(c["between"] == ["1.13.0", "1.14.0"] and c["fixed"] is True and c["functions"] == ["place"]
               for c in got)
    assert pa.builtin_changes_between("1.14.0", "1.19.0", used) == []


def test_changelog_hook_reads_a_committed_table(tmp_path):
    assert [e["release"] for e in pa.changelog_entries("1.13.0", "1.14.0", root=tmp_path)] == ["1.14.0"]
    (tmp_path / "docs" / "data").mkdir(parents=True)
    (tmp_path / "docs" / "data" / "warp-changelog.json").write_text(json.dumps({"entries": [
        {"release": "1.14.0", "text": "Fix adjoint of component writes", "builtins": ["[component_write]"]},
        {"release": "1.14.0", "text": "Fix wp.sign adjoint for vectors", "builtins": ["sign"]},
        {"release": "1.15.0", "text": "Something later"}]}))
    got = pa.changelog_entries("1.13.0", "1.14.0", {"[component_write]", "dot"}, root=tmp_path)
    table = [e for e in got if e["source"].endswith("warp-changelog.json")]
    assert [e["text"] for e in table] == ["Fix adjoint of component writes"]
    assert table[0]["matches"] == ["[component_write]"]
    (tmp_path / "docs" / "data" / "warp-changelog.json").write_text("{not json")
    with pytest.raises(ValueError, match="warp-changelog.json: not readable JSON"):
        pa.changelog_table(tmp_path)


def _grad(values):
    return {"x": {"shape": [len(values)], "values": values, "digest": str(values), "norm": 1.0, "finite": True}}


def test_a_release_that_fails_does_not_stop_the_others(monkeypatch, tmp_path):
    """Three releases, the middle one without an environment: its row quotes why, the other two are
    measured and compared, and the ticket line says which release did not run."""
    grads = {"1.16.0": [1.0, 2.0], "1.19.0": [1.0, 2.0]}

    def python_for(r, log=None):
        if r == "1.17.0":
            raise ReleaseEnvError("pip could not install warp-lang==1.17.0 (offline)")
        return f"/py/{r}", r

    def measure_gradient(folder, python, **kw):
        r = python.rsplit("/", 1)[1]
        return {"warp_version": r, "objective": 0.5, "params": _grad(grads[r]), "kernels": ["k"],
                "functions": ["k"], "wall_s": 0.1}

    monkeypatch.setattr(pa, "python_for", python_for)
    monkeypatch.setattr(pa, "measure_gradient", measure_gradient)
    doc = pa.audit_program(tmp_path, None, ["1.19.0", "1.16.0", "1.17.0"], engine=False)
    assert [r["release"] for r in doc["rows"]] == ["1.16.0", "1.17.0", "1.19.0"]
    assert [r["runs"] for r in doc["rows"]] == [True, False, True]
    assert "pip could not install warp-lang==1.17.0 (offline)" in doc["rows"][1]["error"]
    assert doc["changes"] == [] and doc["rows"][2]["change"] == {"x": 0.0}
    assert doc["ticket"].startswith("gradient unchanged (1.16.0 .. 1.19.0, 2 releases, CPU only)")
    assert "did not run on 1.17.0" in doc["ticket"]
    md = audit_program_markdown(doc)
    assert "Measured on the CPU only" in md and "| 1.17.0 | no: no environment for Warp 1.17.0" in md


@pytest.mark.parametrize("args, text", [
    (["audit", str(SCRIPT), "--warp", "1.19.0", "--cases", "x*"], "a program PATH takes none of them"),
    (["audit", "--warp", "1.12.1,1.16.0,1.19.0"], "the corpus audit compares two releases"),
    (["audit", "--from", "1.16.0"], "--from and --to go together"),
    (["audit", "--from", "1.16.0", "--to", "1.19.0", "--warp", "1.16.0,1.19.0"], "not both"),
    (["audit"], "give the releases to compare"),
    (["audit", str(SCRIPT), "--warp", "1.9"], "warp-lang 1.9 is not a supported release"),
])
def test_audit_options_are_checked_before_anything_runs(args, text):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    assert text in " ".join(r.output.split())


def _prepared(release: str) -> bool:
    return release == installed_warp_version() or (cache_root() / f"warp-{release}" / MARKER).is_file()


@pytest.mark.slow
def test_program_audit_on_two_releases(tmp_path):
    """1.12.1 (prepared) and the installed 1.19.0, no bisection: the zero gradient on 1.12.1 and the right
    one on 1.19.0 (2 * 2 * sum(2 x_i - 1) per element, relative change exactly 1 from zero), the engine's
    verdict on each, and the builtins data naming the component write fixed in between."""
    if not _prepared("1.12.1") or installed_warp_version() != "1.19.0":
        pytest.skip("needs Warp 1.19.0 installed and the 1.12.1 environment prepared (envs prepare --warp 1.12.1)")
    out = tmp_path / "a.json"
    r = CliRunner().invoke(main, ["audit", str(SCRIPT), "--warp", "1.19.0,1.12.1", "--bisect", "none",
                                  "--json", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    r12, r19 = doc["rows"]
    assert (r12["release"], r19["release"]) == ("1.12.1", "1.19.0") and r12["runs"] and r19["runs"]
    assert r12["loss"] == pytest.approx(r19["loss"], rel=1e-6)  # same forward: only the adjoint differs
    assert r12["params"]["x"]["norm"] == 0.0 and r19["params"]["x"]["norm"] > 1.0
    assert r19["change"]["x"] == pytest.approx(1.0)
    assert (r12["engine"]["verdict"], r19["engine"]["verdict"]) == ("bug", "no_bug")
    assert all(r["cost"]["wall_s"] > 0 and r["cost"]["cpu_s"] > 0 for r in (r12, r19))
    (c,) = doc["changes"]
    assert c["first_change"] is None and c["bracket"] == ["1.12.1", "1.19.0"] and c["how"] == "not bisected"
    assert {b["builtin"] for b in c["builtins"]} == {"[component_write]"}
    assert doc["ticket"] == ("gradient of `x` changes between 1.12.1 and 1.19.0: the component-write adjoint was "
                             "fixed in between; 1.12.1 and earlier were wrong")
    assert "Measured on the CPU only" in r.output and "**Ticket:** gradient of `x`" in r.output


@pytest.mark.slow
def test_program_audit_bisects_to_the_release_that_changed_the_builtin(tmp_path):
    """1.12.1 -> 1.14.0 with 1.13.0 in between: the release differential's bisection measures 1.13.0 and
    names 1.14.0, the release whose component-write adjoint changed in the builtins data."""
    if not all(_prepared(r) for r in ("1.12.1", "1.13.0", "1.14.0")):
        pytest.skip("needs the 1.12.1, 1.13.0 and 1.14.0 environments prepared (envs prepare --warp ...)")
    out = tmp_path / "a.json"
    r = CliRunner().invoke(main, ["audit", str(SCRIPT), "--warp", "1.12.1,1.14.0", "--no-engine",
                                  "--bisect", "prepared", "--json", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    (c,) = doc["changes"]
    assert c["first_change"] == "1.14.0" and c["how"] == "bisected" and c["measured"] == ["1.13.0"]
    assert {b["id"] for b in c["builtins"]} == {"[component_write](vec3f)", "[component_write](vec3d)"}
    assert any(e["release"] == "1.14.0" and "component writes" in e["text"] for e in c["changelog"])
    assert doc["ticket"] == ("gradient of `x` changes at 1.14.0: the component-write adjoint was fixed there; "
                             "1.13.0 and earlier were wrong")


def test_pages_keep_the_hand_written_program_audit_section():
    """docs/upgrade-audit.md is rendered by `defects4warp maint pages`; its measured program-audit section lies
    between markers and is carried over as it is (a page without them gets nothing appended)."""
    from defects4warp.report.pages.prose import _kept_block
    from defects4warp.report.pages.sources import ROOT
    from defects4warp.report.pages.upgrade_audit import PROGRAM_AUDIT_MARKERS

    start, end = PROGRAM_AUDIT_MARKERS
    assert _kept_block(f"generated\n{start}\n## Your program\nmeasured\n{end}\n", start, end) == \
        f"\n{start}\n## Your program\nmeasured\n{end}\n"
    assert _kept_block("generated only\n", start, end) == "" and _kept_block(None, start, end) == ""
    page = (ROOT / "docs" / "upgrade-audit.md").read_text()
    assert page.count(start) == 1 and page.rstrip().endswith(end)


def test_a_loss_that_changes_is_not_bisected_and_the_ticket_says_so(monkeypatch, tmp_path):
    """The forward differs between 1.12.1 and 1.16.0 (measured on Warp's example_navier_stokes_perturbation:
    loss -1.97e-06 on 1.12.1, -1.30 on 1.16.0): no release differential is run (it bisects autodiff under one
    objective), the bracket stays open and the ticket names the loss change, not a changelog entry."""
    losses = {"1.12.1": -1.97e-06, "1.16.0": -1.3}
    grads = {"1.12.1": [1e-6, 0.0], "1.16.0": [4e-3, 1e-3]}
    monkeypatch.setattr(pa, "python_for", lambda r, log=None: (f"/py/{r}", r))
    monkeypatch.setattr(pa, "measure_gradient", lambda folder, python, **kw: {
        "warp_version": python[4:], "objective": losses[python[4:]], "params": _grad(grads[python[4:]]),
        "kernels": [], "functions": [], "wall_s": 0.1})
    monkeypatch.setattr(pa, "locate_change", lambda *a, **k: pytest.fail("bisected a change of the forward"))
    doc = pa.audit_program(tmp_path, None, ["1.12.1", "1.16.0"], engine=False)
    (c,) = doc["changes"]
    assert c["first_change"] is None and c["how"] == "not bisected" and c["loss"] == [-1.97e-06, -1.3]
    assert doc["ticket"] == ("gradient of `x` changes between 1.12.1 and 1.16.0: the loss changes too (-1.97e-06 -> "
                             "-1.3): the program computes something else on these releases")


def test_a_param_whose_shape_changes_reads_inf_in_strict_json(monkeypatch, tmp_path):
    shapes = {"1.18.0": [1.0, 2.0], "1.19.0": [1.0, 2.0, 3.0]}
    monkeypatch.setattr(pa, "python_for", lambda r, log=None: (f"/py/{r}", r))
    monkeypatch.setattr(pa, "measure_gradient", lambda folder, python, **kw: {
        "warp_version": python[4:], "objective": 0.25, "params": _grad(shapes[python[4:]]), "kernels": [],
        "functions": [], "wall_s": 0.1})
    doc = pa.audit_program(tmp_path, None, ["1.18.0", "1.19.0"], engine=False)
    assert doc["rows"][1]["change"] == {"x": "inf"} and doc["changes"][0]["params"] == {"x": "inf"}
    assert doc["changes"][0]["first_change"] == "1.19.0" and doc["changes"][0]["how"] == "adjacent"
    json.loads(json.dumps(doc, allow_nan=False))
    assert doc["ticket"].startswith("gradient of `x` changes at 1.19.0: Warp 1.19.0's changelog: loop adjoints fixed")
    assert "`x` inf" in audit_program_markdown(doc)


def test_program_audit_of_a_module_inside_a_package(monkeypatch, tmp_path):
    """`audit -m pkg.train --warp R -- ARGS` runs the module as `python -m pkg.train` from the current folder,
    as `diagnose -m` does (the release's measurement is replaced here: only the resolution is tested)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text("if __name__ == '__main__':\n    pass\n")
    seen = []

    def measure_gradient(folder, python, *, script=None, **kw):
        seen.append((Path(folder).resolve(), script))
        return {"warp_version": "1.19.0", "objective": 0.5, "params": _grad([1.0]), "kernels": [], "functions": [],
                "wall_s": 0.1}

    monkeypatch.setattr(pa, "python_for", lambda r, log=None: (f"/py/{r}", r))
    monkeypatch.setattr(pa, "measure_gradient", measure_gradient)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["audit", "-m", "pkg.train", "--warp", "1.19.0", "--no-engine", "--", "--iters", "3"])
    assert r.exit_code == 0, r.output
    ((folder, spec),) = seen
    assert folder == tmp_path.resolve() and spec.module and spec.entry == "pkg.train" and spec.args == ["--iters", "3"]
    assert "# Program audit: -m pkg.train" in r.output
    r = CliRunner().invoke(main, ["audit", "-m", "pkg.nosuch", "--warp", "1.19.0"])
    assert r.exit_code == 2 and "there is no pkg/nosuch.py or pkg/nosuch/__main__.py" in " ".join(r.output.split())
