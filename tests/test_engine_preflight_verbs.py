"""The preflight of an outside (``cmd:``) engine runs in every verb that takes
an engine (run, matrix, audit, diagnose): a broken command is a usage error
(exit 2) naming the failure before any measurement; `engines --json` lists the
engines as JSON (a file or '-')."""

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from defects4warp.cli import main

ROOT = Path(__file__).resolve().parent.parent
ONE = "ball-drag-identification"


def _engine(tmp_path, body: str):
    script = tmp_path / "e.py"
    script.write_text("import json, os, sys\n" + body)
    return f"cmd:{sys.executable} {script}"


BROKEN = [
    ("missing", lambda t: "cmd:no-such-engine-d4w --flag", "'no-such-engine-d4w' not found"),
    ("exit", lambda t: _engine(t, "print('ImportError: no module named foo', file=sys.stderr); sys.exit(1)\n"),
     "ImportError: no module named foo"),
    ("schema", lambda t: _engine(t, "json.dump({'verdict': 'bug', 'classes': []}, "
                                    "open(os.environ['DEFECTS4WARP_ANSWER'], 'w'))\n"),
     "'evidence' is a required property"),
]


@pytest.mark.parametrize("kind, make, text", BROKEN, ids=[b[0] for b in BROKEN])
def test_matrix_and_audit_refuse_a_broken_engine_before_measuring(tmp_path, kind, make, text):
    from defects4warp.run.runner import installed_warp_version

    rel = installed_warp_version()
    engine = make(tmp_path)
    res = CliRunner().invoke(main, ["matrix", "--warp", rel, "--engine", engine, "--cases", ONE,
                                    "--results", str(tmp_path / "r"), "--json", str(tmp_path / "m.json")])
    assert res.exit_code == 2, res.output
    out = " ".join(res.output.split())
    assert f"failed on the first item ({ONE}/buggy)" in out and text in out
    assert not (tmp_path / "m.json").exists()
    res = CliRunner().invoke(main, ["audit", "--from", rel, "--to", rel, "--engine", engine, "--cases", ONE,
                                    "--results", str(tmp_path / "r"), "--json", str(tmp_path / "a.json")])
    assert res.exit_code == 2, res.output
    assert text in " ".join(res.output.split()) and not (tmp_path / "a.json").exists()


def test_diagnose_with_a_broken_engine_is_a_usage_error(tmp_path):
    engine = BROKEN[2][1](tmp_path)
    res = CliRunner().invoke(main, ["diagnose", str(ROOT / "corpus" / ONE / "fixed"), "--engine", engine])
    assert res.exit_code == 2, res.output
    out = " ".join(res.output.split())
    assert "failed on" in out and "'evidence' is a required property" in out


def test_engines_json_file_and_dash(tmp_path):
    res = CliRunner().invoke(main, ["engines", "--json", "-"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    names = [e["name"] for e in doc["engines"]]
    assert "reference" in names and "fd-only" in names
    ref = doc["engines"][names.index("reference")]
    assert ref["source"] == "built in" and ref["version"]
    res = CliRunner().invoke(main, ["engines", "--json", str(tmp_path / "e.json")])
    assert res.exit_code == 0
    assert json.loads((tmp_path / "e.json").read_text()) == doc
