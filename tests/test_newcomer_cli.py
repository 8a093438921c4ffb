"""The newcomer's findings in the command line (follow-up of issue 19): each
test runs the CLI the way a user does and checks the message they get."""

import json
from pathlib import Path

from click.testing import CliRunner

from defects4warp.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _one_line(text):
    return " ".join(text.split())


def _store_run(results, engine="fd-only"):
    from defects4warp.history import store

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
    from defects4warp.history import _id_ranges

    assert _id_ranges([9, 1, 2, 3, 7, 10]) == "1-3, 7, 9-10"
    assert _id_ranges([4]) == "4"
