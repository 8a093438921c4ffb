"""The contract of outside (``cmd:``) engines and the progress of a run on a pipe.

An outside engine writes its answer to the file ``$DEFECTS4WARP_ANSWER``
(stdout is free for Warp's banner and logs); it runs in its own process
group, killed with everything it started on timeout; a broken command is a
usage error before the run starts.
"""

import io
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from defects4warp.cli import main
from defects4warp.engines import get_engine
from defects4warp.engines.command import ANSWER_VAR, contract_failure
from defects4warp.progress import PlainProgress, clock, default_jobs

ROOT = Path(__file__).resolve().parent.parent
ONE = "ball-drag-identification"

ANSWER = {"verdict": "no_bug", "classes": [{"id": "correct", "score": 1.0}], "signature": None,
          "evidence": [{"probe": "toy", "clean": True, "finding": "nothing", "data": None}],
          "cost": {"objective_evals": 0, "gradient_evals": 0, "device": "cpu"}}


def _engine(tmp_path, body: str, name="e.py", args=""):
    script = tmp_path / name
    script.write_text("import json, os, sys\n" + body)
    return f"cmd:{sys.executable} {script}{args}"


def _alive(pid: int) -> bool:
    """True when ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_answer_file_is_read_whatever_stdout_holds(tmp_path):
    body = ("print('Warp 1.19.0 initialized:'); print('Module problem abc load on device cpu took 3 ms')\n"
            f"json.dump({ANSWER!r}, open(os.environ['{ANSWER_VAR}'], 'w'))\n"
            "print('{\"verdict\": \"bug\"}'); print('trailing noise', file=sys.stderr)\n")
    d = get_engine(_engine(tmp_path, body)).diagnose(str(tmp_path), "cpu", "small")
    assert d["verdict"] == "no_bug" and d["classes"] == [{"id": "correct", "score": 1.0}]
    assert d["cost"]["wall_s"] > 0  # filled in by the harness


def test_answer_placeholder_is_the_same_file(tmp_path):
    body = ("assert sys.argv[1] == os.environ['DEFECTS4WARP_ANSWER'], sys.argv\n"
            "a = dict(" + repr(ANSWER) + "); a['evidence'][0]['finding'] = json.dumps(sys.argv[2:])\n"
            "json.dump(a, open(sys.argv[1], 'w'))\n")
    d = get_engine(_engine(tmp_path, body, args=" {answer}")).diagnose(str(tmp_path), "cuda:0", "production")
    assert d["verdict"] == "no_bug"
    assert json.loads(d["evidence"][0]["finding"]) == [str(tmp_path), "cuda:0", "production"]


def test_legacy_stdout_answer_is_still_read(tmp_path):
    d = get_engine(_engine(tmp_path, f"print(json.dumps({ANSWER!r}))\n")).diagnose(str(tmp_path), "cpu", "small")
    assert d["verdict"] == "no_bug" and d["evidence"][0]["probe"] == "toy"


@pytest.mark.parametrize("body, failure, text", [
    ("print('Warp banner'); print('oops', file=sys.stderr); sys.exit(3)\n", "exit_status",
     "exited with status 3"),
    ("print('Warp banner only')\n", "no_answer", "wrote no answer"),
    ("open(os.environ['DEFECTS4WARP_ANSWER'], 'w').write('{not json')\n", "invalid_answer", "is not JSON"),
    ("a = " + repr(ANSWER) + "; del a['signature']; json.dump(a, open(os.environ['DEFECTS4WARP_ANSWER'], 'w'))\n",
     "invalid_answer", "'signature' is a required property"),
    ("a = " + repr(ANSWER) + "; a['verdict'] = 'maybe'; json.dump(a, open(os.environ['DEFECTS4WARP_ANSWER'], 'w'))\n",
     "invalid_answer", "at verdict: 'maybe' is not one of"),
])
def test_contract_failures_name_the_failure_and_show_the_output(tmp_path, body, failure, text):
    d = get_engine(_engine(tmp_path, body)).diagnose(str(tmp_path), "cpu", "small")
    assert d["verdict"] == "error" and contract_failure(d) == failure
    assert text in d["error"]
    if failure == "exit_status":
        assert "--- stderr (last 20 lines) ---\noops" in d["error"] and "Warp banner" in d["error"]


def test_timeout_kills_the_whole_group_and_escaped_children(tmp_path):
    pids = tmp_path / "pids"
    body = ("import subprocess, time\n"
            "a = subprocess.Popen(['sleep', '300'])\n"                            # same process group
            "b = subprocess.Popen(['sleep', '301'], start_new_session=True)\n"     # left the group
            f"open({str(pids)!r}, 'w').write(f'{{a.pid}} {{b.pid}}')\n"
            "time.sleep(300)\n")
    t0 = time.monotonic()
    d = get_engine(_engine(tmp_path, body), timeout_s=3).diagnose(str(tmp_path), "cpu", "small")
    assert time.monotonic() - t0 < 30
    assert d["verdict"] == "error" and "did not answer within 3 s" in d["error"]
    assert contract_failure(d) is None  # a slow variant is not a broken engine
    children = [int(p) for p in pids.read_text().split()]
    assert len(children) == 2
    assert not any(_alive(p) for p in children)


def test_children_left_behind_by_a_finished_engine_are_killed(tmp_path):
    pids = tmp_path / "pids"
    body = ("import subprocess\n"
            "a = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
            f"open({str(pids)!r}, 'w').write(str(a.pid))\n"
            f"json.dump({ANSWER!r}, open(os.environ['DEFECTS4WARP_ANSWER'], 'w'))\n")
    d = get_engine(_engine(tmp_path, body)).diagnose(str(tmp_path), "cpu", "small")
    assert d["verdict"] == "no_bug"
    assert not _alive(int(pids.read_text()))


def _runs_stored(results: Path) -> int:
    db = results / "history.sqlite"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        return con.execute("select count(*) from runs").fetchone()[0]


@pytest.mark.parametrize("kind", ["missing", "not_executable", "relative_elsewhere", "exit", "fields"])
def test_a_broken_engine_is_a_usage_error_before_the_run(tmp_path, kind):
    if kind == "missing":
        engine, text = "cmd:no-such-engine-d4w --flag", "'no-such-engine-d4w' not found"
    elif kind == "not_executable":
        script = tmp_path / "engine.py"
        script.write_text("print(1)\n")
        script.chmod(0o644)
        engine, text = f"cmd:{script}", "is not executable"
    elif kind == "relative_elsewhere":  # a script path relative to another folder: python's own message shows
        engine, text = f"cmd:{sys.executable} elsewhere/my_engine.py", "can't open file"
    elif kind == "exit":
        engine = _engine(tmp_path, "print('Traceback: ImportError: no module named foo', file=sys.stderr); sys.exit(1)\n")
        text = "ImportError: no module named foo"
    else:
        engine = _engine(tmp_path, "json.dump({'verdict': 'bug', 'classes': []}, open(os.environ['DEFECTS4WARP_ANSWER'], 'w'))\n")
        text = "'evidence' is a required property"
    res = CliRunner().invoke(main, ["run", "--engine", engine, "--cases", ONE, "--results", str(tmp_path / "r"),
                                    "--json", str(tmp_path / "o.json")])
    assert res.exit_code == 2, res.output
    assert "failed on the first item (ball-drag-identification/buggy)" in res.output
    assert text in res.output
    assert not (tmp_path / "o.json").exists() and _runs_stored(tmp_path / "r") == 0


def test_the_preflight_result_is_reused_not_measured_twice(tmp_path):
    log = tmp_path / "calls"
    body = (f"open({str(log)!r}, 'a').write(sys.argv[1] + '\\n')\n"
            f"json.dump({ANSWER!r}, open(os.environ['DEFECTS4WARP_ANSWER'], 'w'))\n")
    res = CliRunner().invoke(main, ["run", "--engine", _engine(tmp_path, body), "--cases", f"{ONE},puck-launch-fit",
                                    "--no-store", "--json", str(tmp_path / "o.json"), "--jobs", "2"])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "o.json").read_text())
    assert len(log.read_text().splitlines()) == len(doc["results"]) == 4
    assert all(r["diagnosis"]["verdict"] == "no_bug" for r in doc["results"])


@pytest.mark.slow
def test_example_fd_engine_runs_warp_and_its_verdicts_are_read(tmp_path):
    """The documented example runs the variant with Warp (banner and module-load lines on stdout)."""
    engine = f"cmd:{sys.executable} examples/fd_check_engine.py"
    cwd = os.getcwd()
    os.chdir(ROOT)  # the documented command line, relative to the repository
    try:
        res = CliRunner().invoke(main, ["run", "--engine", engine, "--cases", ONE, "--no-store",
                                        "--json", str(tmp_path / "o.json"), "--timeout", "300"])
    finally:
        os.chdir(cwd)
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "o.json").read_text())
    by = {(r["variant"], r["scale"]): r["diagnosis"] for r in doc["results"]}
    assert by[("buggy", "small")]["verdict"] == "bug"
    assert by[("fixed", "small")]["verdict"] == "no_bug"
    assert by[("buggy", "small")]["cost"]["objective_evals"] == 6
    assert doc["summary"]["errors"] == 0


# ----------------------------------------------------------------- progress


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_plain_progress_lines_are_rate_limited_with_eta():
    out, now = io.StringIO(), FakeClock()
    with PlainProgress("diagnosing", stream=out, every_s=30, clock_fn=now) as p:
        task = p.add_task("", total=246)
        for i in range(12):
            now.t = 41.0 * (i + 1) / 12
            p.update(task, advance=1, description=f"case-{i}/buggy bug")
        now.t = 400.0
        p.update(task, advance=1, description="late/fixed no_bug")
    lines = out.getvalue().splitlines()
    # the first item (at 3.4 s), the first 30 s after it (item 10 at 34.2 s), then 400 s; none at exit (shown);
    # no estimate from one item (progress.ETA_MIN_ITEMS)
    assert lines == [
        "diagnosing [  1/246]   0% elapsed 0:03 eta -- last: case-0/buggy bug",
        "diagnosing [ 10/246]   4% elapsed 0:34 eta 13:26 last: case-9/buggy bug",
        "diagnosing [ 13/246]   5% elapsed 6:40 eta 1:59:29 last: late/fixed no_bug",
    ]


def test_plain_progress_prints_the_end_even_between_intervals():
    out, now = io.StringIO(), FakeClock()
    with PlainProgress("", stream=out, every_s=1000, clock_fn=now) as p:
        task = p.add_task("", total=3)
        for i in range(3):
            now.t += 2
            p.update(task, advance=1, description=f"c{i}")
    assert out.getvalue().splitlines() == ["[1/3]  33% elapsed 0:02 eta -- last: c0",
                                           "[3/3] 100% elapsed 0:06 eta 0:00 last: c2"]


def test_clock_format():
    assert [clock(x) for x in (0, 59.9, 61, 3600, 7325)] == ["0:00", "0:59", "1:01", "1:00:00", "2:02:05"]


def test_run_on_a_pipe_prints_progress_lines(tmp_path):
    res = CliRunner().invoke(main, ["run", "--engine", "always-bug", "--cases", f"{ONE},puck-launch-fit",
                                    "--no-store", "--progress-every", "0"])
    assert res.exit_code == 0, res.output
    lines = [x for x in res.stderr.splitlines() if x.startswith("diagnosing [")]
    assert [x.split(" elapsed")[0] for x in lines] == [f"diagnosing [{i}/4] {100 * i // 4:3d}%" for i in range(1, 5)]
    assert lines[-1].endswith("bug") and "eta 0:00" in lines[-1]


def test_jobs_default_is_the_cores_available(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert default_jobs() == 3
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: 7)
    assert default_jobs() == 7
    res = CliRunner().invoke(main, ["run", "--help"])
    assert "(the cores available to this process)" in " ".join(res.output.split())


@pytest.mark.parametrize("value", ["cmd:", "cmd:   ", "cmd:'unterminated"])
def test_a_malformed_cmd_engine_is_a_usage_error(value):
    res = CliRunner().invoke(main, ["run", "--engine", value, "--cases", "ball-drag-identification"])
    assert res.exit_code == 2, res.output
    assert "--engine" in res.output and ("needs a command" in res.output or "cannot split" in res.output)


def test_a_script_variant_reaches_a_cmd_engine_with_how_to_run_it(tmp_path):
    from defects4warp.capture import ScriptSpec

    eng = get_engine(_engine(tmp_path, "spec = os.environ.get('DEFECTS4WARP_SCRIPT')\n"
                            "json.dump({'verdict': 'no_bug', 'classes': [], 'signature': None, 'cost': {},\n"
                            "           'evidence': [{'probe': 'env', 'clean': True, 'finding': str(spec)}]},\n"
                            "          open(os.environ['DEFECTS4WARP_ANSWER'], 'w'))\n"))
    spec = ScriptSpec("train.py", ["--iters", "3"], 2)
    d = eng.diagnose(str(tmp_path), "cpu", "small", script=spec)
    assert json.loads(d["evidence"][0]["finding"]) == {"entry": "train.py", "args": ["--iters", "3"],
                                                         "iteration": 2, "params": None}
    d = eng.diagnose(str(tmp_path), "cpu", "small")
    assert d["evidence"][0]["finding"] == "None"
