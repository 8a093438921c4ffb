"""The newcomer's findings in the command line (follow-up of issue 19): each
test runs the CLI the way a user does and checks the message they get."""

from pathlib import Path

from click.testing import CliRunner

from defects4warp.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _one_line(text):
    return " ".join(text.split())


def _store_run(results, engine="fd-only"):
    from defects4warp.run.history import store

    doc = {"summary": {"engine": engine, "warp_version": "1.19.0", "device": "cpu"},
           "results": [{"case": "c", "variant": "fixed", "scale": "small",
                        "expected": {"verdict": "no_bug", "classes": []},
                        "diagnosis": {"verdict": "no_bug", "classes": [], "cost": {"wall_s": 1.0}},
                        "correct": {"verdict": True, "class": True}}]}
    return store(doc, "d", str(results))


def test_report_of_a_missing_run_names_the_stored_ids(tmp_path):
    r = CliRunner().invoke(main, ["report", "99", "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    out = _one_line(r.output)
    assert "KeyError" not in out and "'no stored run" not in out  # was: Error: 'no stored run 99'
    assert f"no stored run 99: {tmp_path / 'history.sqlite'} holds no runs yet" in out
    for _ in range(3):
        _store_run(tmp_path)
    r = CliRunner().invoke(main, ["report", "99", "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert "its runs are 1-3 (`defects4warp history` lists them)" in _one_line(r.output)
    r = CliRunner().invoke(main, ["compare", "1", "7", "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert "Error: no stored run 7 in" in _one_line(r.output)


def test_id_ranges():
    from defects4warp.run.history import _id_ranges

    assert _id_ranges([9, 1, 2, 3, 7, 10]) == "1-3, 7, 9-10"
    assert _id_ranges([4]) == "4"


def _fake_builtins(monkeypatch):
    """Replace the measurement and the data writers of `builtins` by recorders."""
    from defects4warp.builtins import conformance
    import defects4warp.builtins as b
    import defects4warp.report.builtins_page as builtins_page
    import defects4warp.envs as envs

    seen = {"measured": [], "data": 0, "page": 0}

    def measure_release(ver, py, **kw):
        seen["measured"].append(ver)
        return {"warp": ver, "cells": {"x": {"state": "agrees"}}, "reused_batches": 1, "batches": 1, "seconds": 0}

    monkeypatch.setattr(envs, "python_for", lambda rel, log=None: ("python", rel))
    monkeypatch.setattr(conformance, "measure_release", measure_release)
    monkeypatch.setattr(conformance, "compact", lambda doc: doc)
    monkeypatch.setattr(b, "write_data", lambda doc, device: seen.__setitem__("data", seen["data"] + 1) or "DATA")
    monkeypatch.setattr(builtins_page, "write_page", lambda: seen.__setitem__("page", seen["page"] + 1) or "PAGE")
    return seen


def test_builtins_defaults_to_the_installed_release_and_writes_no_package_data(tmp_path, monkeypatch):
    from defects4warp.run.runner import installed_warp_version

    seen = _fake_builtins(monkeypatch)
    r = CliRunner().invoke(main, ["maint", "builtins", "--results", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert seen == {"measured": [installed_warp_version()], "data": 0, "page": 0}
    r = CliRunner().invoke(main, ["maint", "builtins", "--warp", "all", "--results", str(tmp_path)])
    from defects4warp.builtins import ALL_RELEASES

    assert seen["measured"][1:] == list(ALL_RELEASES) and seen["data"] == 0


def test_builtins_help_names_the_package_data_flag_honestly():
    r = CliRunner().invoke(main, ["maint", "builtins", "--help"])
    out = _one_line(r.output)
    assert "--data" not in out.replace("--write-package-data", "")
    assert "--write-package-data" in out and "overwrite the package's committed results" in out
    assert "Default: the installed release" in out


def test_builtins_package_data_only_from_a_checkout(tmp_path, monkeypatch):
    import defects4warp.commands.builtins as cb

    seen = _fake_builtins(monkeypatch)
    r = CliRunner().invoke(main, ["maint", "builtins", "--warp", "1.19.0", "--write-package-data", "--results", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert seen["data"] == 1 and seen["page"] == 1
    r = CliRunner().invoke(main, ["maint", "builtins", "--warp", "1.19.0", "--data", "--results", str(tmp_path)])
    assert r.exit_code == 2 and "No such option '--data'" in _one_line(r.output) and seen["data"] == 1
    monkeypatch.setattr(cb, "checkout_root", lambda: None)
    r = CliRunner().invoke(main, ["maint", "builtins", "--warp", "1.19.0", "--write-package-data", "--results", str(tmp_path)])
    assert r.exit_code == 2
    assert "is an installed package" in _one_line(r.output) and seen["data"] == 1


def test_bundled_case_ids_name_programs_from_any_folder(tmp_path, monkeypatch):
    """`diagnose CASE/VARIANT` (and `mutate generate`) find the bundled corpus, as an
    installed wheel needs: no checkout path is given, the working folder is elsewhere."""
    import subprocess
    import sys

    from defects4warp.corpus.case import default_corpus
    from defects4warp.commands._common import bundled_program

    monkeypatch.chdir(tmp_path)
    corpus = default_corpus()
    assert bundled_program("projectile-launch-fit/buggy") == corpus / "projectile-launch-fit" / "buggy"
    one = next(d for d in sorted(corpus.iterdir()) if (d / "case.yaml").is_file() and [p.name for p in d.iterdir()
                                                                                          if p.is_dir()] == ["program"])
    assert bundled_program(one.name) == one / "program"
    assert bundled_program("no-such-case") is None and bundled_program("../corpus") is None
    r = CliRunner().invoke(main, ["maint", "mutate", "generate", "projectile-launch-fit/buggy"])
    assert r.exit_code == 0, r.output
    assert "->" in r.output
    for ref, text in [("projectile-launch-fit", "is a bundled case with variants buggy, fixed: name one"),
                      ("projectile-launch-fit/nope", "has no variant 'nope' (its variants: buggy, fixed)"),
                      ("no-such-case", "no such file or folder, and no bundled case of that id")]:
        r = CliRunner().invoke(main, ["diagnose", ref])
        assert r.exit_code == 2 and text in _one_line(r.output), r.output
    r = subprocess.run([sys.executable, "-m", "defects4warp", "diagnose", "projectile-launch-fit/fixed",
                        "--engine", "fd-only"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "verdict no_bug" in _one_line(r.stdout)


PROGRAMS = ROOT / "tests" / "programs"


def test_param_file_missing_is_told_apart_before_the_script_runs():
    import pytest

    from defects4warp.capture.targets import TargetError, resolve_target

    train = PROGRAMS / "script_two_params" / "train.py"
    with pytest.raises(TargetError) as exc:
        resolve_target(train, params=["nope.py:3"])
    assert f"--param nope.py:3: there is no file nope.py in {train.parent}" in str(exc.value)
    assert "its Python files: model.py, train.py" in str(exc.value)
    folder, spec, _ = resolve_target(train, params=["model.py:5", str(train) + ":10"])
    assert spec.params == ["model.py:5", str(train) + ":10"]
    r = CliRunner().invoke(main, ["diagnose", str(train), "--param", "nope.py:3"])
    assert r.exit_code == 2 and "there is no file nope.py" in _one_line(r.output), r.output


def test_param_site_not_found_lists_the_tapes_allocations_not_kernel_annotations():
    """A kernel's `a: wp.array(dtype=...)` annotation constructs an array at the
    kernel's def line; those are not sites a user can name."""
    import pytest

    from defects4warp.capture import CaptureError, ScriptSpec
    from defects4warp.capture.core import capture_problem

    spec = ScriptSpec(entry="train.py", params=["train.py:99"])
    with pytest.raises(CaptureError) as exc:
        capture_problem(PROGRAMS / "script_two_params", spec, "cpu", timeout_s=60)
    msg = str(exc.value)
    assert "the script allocates no array at train.py:99 that the launches of iteration 1 (from backward 1) use" in msg
    # the params first, apart although one helper line allocates both, each with the site --param takes
    assert ("most likely params first: a (train.py:10): the capture's choice; b (train.py:10:2): the capture's "
            "choice; x (train.py:18): its .grad is not used after the backward; loss (train.py:22): written by a "
            "launch its tapes recorded (an intermediate))") in msg
    assert "model.py" not in msg  # the kernel's def lines (5, 6) were listed before


def _store_old_run(results):
    """A run as stored before skipped runs had their own verdict: the skipped run is an
    `inconclusive` outcome with no expectation and no cost, counted in both totals."""
    from defects4warp.run.history import store

    def rec(case, verdict, expected, wall, top=None):
        return {"case": case, "variant": "fixed", "scale": "small",
                "expected": expected, "correct": None if expected is None else {"verdict": True, "class": True},
                "diagnosis": {"verdict": verdict, "classes": [{"id": top, "score": 1.0}] if top else [],
                              "cost": {"wall_s": wall}}}

    from defects4warp.run.scoring import summarize

    results_ = [rec("needs-torch", "inconclusive", None, 0.0), rec("unlabelled-here", "inconclusive", None, 3.5),
                rec("ok-case", "no_bug", {"verdict": "no_bug", "classes": ["correct"]}, 1.0, "correct")]
    summary = summarize(results_)
    summary.pop("skipped_runs")
    summary.update(engine="reference", warp_version="1.19.0", device="cpu", skipped=1, inconclusive=2, wall_s=12.0)
    return store({"summary": summary, "results": results_}, "d", str(results))


def test_old_stored_skipped_runs_read_back_as_skipped(tmp_path):
    from defects4warp.run.history import OLD_SKIP_REASON, list_runs, run_document

    rid = _store_old_run(tmp_path)
    doc = run_document(rid, str(tmp_path))
    by_case = {r["case"]: r for r in doc["results"]}
    assert by_case["needs-torch"]["diagnosis"]["verdict"] == "skipped"
    assert by_case["needs-torch"]["skipped"] == OLD_SKIP_REASON
    assert by_case["unlabelled-here"]["diagnosis"]["verdict"] == "inconclusive"  # a real one stays
    assert doc["summary"]["inconclusive"] == 1 and doc["summary"]["skipped"] == 1
    assert list_runs(str(tmp_path))[0]["summary"]["inconclusive"] == 1
    r = CliRunner().invoke(main, ["report", str(rid), "--results", str(tmp_path)])
    assert r.exit_code == 0, r.output
    out = _one_line(r.output)
    assert "1 inconclusive, 1 skipped" in out
    assert f"| needs-torch | fixed | {OLD_SKIP_REASON} |" in r.output


def test_an_interrupted_verb_says_only_what_it_wrote_and_exits_as_the_signal_asks():
    """The group's note after SIGTERM / Ctrl-C is the verb's own (on_interrupt), never a --json that was not
    given; Ctrl-C exits 130 (was 1, click's "Aborted!"), SIGTERM 143."""
    import click

    from defects4warp.commands._common import MainGroup, Terminated, on_interrupt, written_at_end

    @click.group(cls=MainGroup)
    def grp():
        pass

    @grp.command()
    @click.option("--json", "json_path", default=None)
    @click.option("--term", is_flag=True)
    def verb(json_path, term):
        on_interrupt(written_at_end(json_path))
        raise Terminated() if term else KeyboardInterrupt()

    r = CliRunner().invoke(grp, ["verb"])
    assert r.exit_code == 130 and "Aborted" not in r.output
    assert _one_line(r.output) == "defects4warp verb: interrupted by Ctrl-C (SIGINT) before it finished; nothing was written"
    r = CliRunner().invoke(grp, ["verb", "--term", "--json", "d.json"])
    assert r.exit_code == 143
    assert _one_line(r.output) == ("defects4warp verb: interrupted by SIGTERM before it finished; nothing was written "
                                   "(d.json is written when it finishes)")


def test_validate_prints_a_case_format_error_once_and_counts_it_at_the_end(tmp_path):
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / "projectile-launch-fit", corpus / "broken")
    yml = corpus / "broken" / "case.yaml"
    yml.write_text(yml.read_text().replace("id: projectile-launch-fit", "id: broken")
                   .replace("verdict: no_bug", "verdict: nobug"))
    r = CliRunner().invoke(main, ["validate", "--corpus", str(corpus), "--results", str(tmp_path / "r")])
    assert r.exit_code == 1, r.output
    # was printed twice: when the corpus was read, and again in the end's list of problems
    assert r.output.count("'nobug' is not one of") == 1, r.output
    assert "1 case folder(s) not validated because of case format errors (listed above)" in r.output
    assert "problem(s):" not in r.output  # no check ran, so no check failed
