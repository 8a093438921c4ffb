"""What a newcomer trips on when a run goes wrong or takes long: a run in which every variant
errored, an outside engine that fails on the first variant, the summary's wall time, the
progress lines and messages in a log file, and a run stopped by SIGTERM. Each test runs the
command line with a trivial or outside engine (no Warp program runs)."""

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from defects4warp.cli import main
from defects4warp.progress import PlainProgress

ROOT = Path(__file__).resolve().parent.parent
ONE = "projectile-launch-fit"  # two variants, no `requires`

ANSWER = {"verdict": "no_bug", "classes": [{"id": "correct", "score": 1.0}], "signature": None,
          "evidence": [], "cost": {}}


def _engine(tmp_path, body: str, name="e.py", args=""):
    script = tmp_path / name
    script.write_text("import json, os, sys, time\n" + body)
    return f"cmd:{sys.executable} {script}{args}"


def test_a_run_in_which_every_variant_errored_exits_1_and_counts_the_preflight(tmp_path):
    engine = _engine(tmp_path, "time.sleep(30)\n")
    out = tmp_path / "o.json"
    r = CliRunner().invoke(main, ["run", "--engine", engine, "--cases", ONE, "--timeout", "1", "--no-store",
                                  "--results", str(tmp_path / "r"), "--json", str(out)])
    assert r.exit_code == 1, r.output  # was 0: a CI job read a run that measured nothing as a success
    assert "no run got a verdict: all 2 that ran ended in an error, so nothing was measured" in r.output
    assert "did not answer within 1 s" in r.output
    doc = json.loads(out.read_text())
    s = doc["summary"]
    assert s["errors"] == 2 and s["runs"] == 2
    # the first variant is diagnosed by the preflight, before the run proper: its second counts too
    assert s["wall_s"] >= sum(x["seconds"] for x in doc["results"]) >= 2.0


def test_a_run_with_one_verdict_among_errors_still_exits_0(tmp_path):
    # the first call (the preflight) answers, the second times out: one verdict, so something was measured
    log = tmp_path / "calls"
    body = (f"first = not os.path.exists({str(log)!r})\nopen({str(log)!r}, 'a').write('x')\n"
            "time.sleep(0 if first else 30)\n"
            f"json.dump({ANSWER!r}, open(os.environ['DEFECTS4WARP_ANSWER'], 'w'))\n")
    r = CliRunner().invoke(main, ["run", "--engine", _engine(tmp_path, body), "--cases", ONE, "--timeout", "1",
                                  "--no-store", "--results", str(tmp_path / "r"), "--jobs", "1"])
    assert r.exit_code == 0, r.output
    assert "errors 1" in r.output and "no run got a verdict" not in r.output


def test_a_broken_outside_engine_is_an_engine_error_not_a_usage_error(tmp_path):
    engine = _engine(tmp_path, "print('ImportError: no module named foo', file=sys.stderr); sys.exit(1)\n")
    for args in (["run", "--engine", engine, "--cases", ONE, "--no-store", "--results", str(tmp_path / "r")],
                 ["diagnose", f"{ONE}/buggy", "--engine", engine]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, r.output
        assert "ImportError: no module named foo" in r.output
        assert "Error: the engine cmd:" in r.output
        # was printed under "Usage: ... Try '... --help' for help": the options were right, the engine was not
        assert "Usage:" not in r.output and "--help" not in r.output


def test_messages_and_progress_in_a_log_file_are_one_line_each(tmp_path):
    # a long engine command makes the first message over 80 columns; rich wrapped it at 80 on a pipe
    long_dir = tmp_path / ("x" * 60)
    long_dir.mkdir()
    engine = _engine(long_dir, f"json.dump({ANSWER!r}, open(os.environ['DEFECTS4WARP_ANSWER'], 'w'))\n")
    r = CliRunner().invoke(main, ["run", "--engine", engine, "--cases", ONE, "--no-store",
                                  "--results", str(tmp_path / "r"), "--jobs", "1"])
    assert r.exit_code == 0, r.output
    head = next(ln for ln in r.output.splitlines() if ln.startswith("engine cmd:"))
    assert len(head) > 120
    assert head.endswith("| 1 cases, 2 runs (0 of them scripts) | 1 jobs")
    # said before the first diagnosis: the preflight ran one variant, the other is left (an outside
    # engine: no cost per run is known, so only the counts)
    assert "1 of 2 run(s) to measure (the others reused from the store, skipped, or run by the engine's " \
           "preflight)\n" in r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith("diagnosing [")]
    assert lines and all(" last: projectile-launch-fit/" in ln for ln in lines)


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_a_run_says_what_it_will_cost_before_it_starts():
    from defects4warp.commands.run import CPU_S_PER_RUN, cost_note

    # the README's first command on a fresh machine: the whole bundled corpus, nothing stored
    full = cost_note(459, 0, 2, cores=2)
    assert full.startswith("459 of 459 run(s) to measure: about 35 min of CPU time, some 18 min at --jobs 2")
    assert "--cases GLOB or --split dev|test runs a part" in full
    assert CPU_S_PER_RUN * 459 / 60 == pytest.approx(35.19, abs=0.01)
    # more jobs than cores do not make it faster
    assert "some 18 min at --jobs 8" in cost_note(459, 0, 8, cores=2)
    # a resumed run: a few seconds, no hint
    assert cost_note(3, 456, 2, cores=2) == ("3 of 459 run(s) to measure (the others reused from the store, "
                                             "skipped, or run by the engine's preflight): about 14 s of CPU "
                                             "time, some 7 s at --jobs 2")
    assert cost_note(0, 459, 2).endswith(": nothing to measure")
    assert cost_note(10, 0, 2, reference=False) == "10 of 10 run(s) to measure"


def test_the_eta_waits_for_enough_items_after_the_start_up_burst():
    """A run that resumes 40 items from the result store (finished at once) and then measures
    items of 8 s each: the first lines say 'eta --', not the seconds that 40 free items suggest."""
    out, now = io.StringIO(), FakeClock()
    with PlainProgress("diagnosing", stream=out, every_s=0, clock_fn=now) as p:
        task = p.add_task("", total=246)
        for i in range(40):  # the burst: reused, skipped, preflighted, milliseconds apart
            now.t = 0.001 * (i + 1)
            p.update(task, advance=1, description=f"reused-{i}")
        for i in range(6):
            now.t = 0.04 + 8.0 * (i + 1)
            p.update(task, advance=1, description=f"measured-{i}")
    lines = out.getvalue().splitlines()
    # the old estimate after the first item was 0.001 s * 245 = 0 s; after item 41, 8 s / 41 * 205 = 40 s
    assert lines[0] == "diagnosing [  1/246]   0% elapsed 0:00 eta -- last: reused-0"
    assert all(" eta -- " in ln for ln in lines[:44])  # 40 burst items and 4 measured ones
    # 5 measured in 40 s since the burst: 8 s an item, 201 left
    assert lines[44] == "diagnosing [ 45/246]  18% elapsed 0:40 eta 26:48 last: measured-4"
    assert lines[45] == "diagnosing [ 46/246]  19% elapsed 0:48 eta 26:40 last: measured-5"


def _wait_for(pred, timeout_s=60.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        if pred():
            return True
        time.sleep(0.1)
    return False


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("sig,status,why", [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGINT, 130, "Ctrl-C (SIGINT)")])
def test_sigterm_says_the_run_was_interrupted_and_the_json_is_partial(tmp_path, sig, status, why):
    """The first variant answers at once, the second hangs; SIGTERM (or Ctrl-C) while it hangs: the exit
    status a shell gives the signal, 128 + its number (Ctrl-C exited 1, click's "Aborted!")."""
    pids = tmp_path / "pids"
    body = (f"first = not os.path.exists({str(pids)!r})\nopen({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
            "time.sleep(0 if first else 120)\n"
            f"json.dump({ANSWER!r}, open(os.environ['DEFECTS4WARP_ANSWER'], 'w'))\n")
    out = tmp_path / "o.json"
    proc = subprocess.Popen([sys.executable, "-m", "defects4warp", "run", "--engine", _engine(tmp_path, body),
                             "--cases", ONE, "--jobs", "1", "--json", str(out), "--results", str(tmp_path / "r")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            # a shell's background job inherits SIGINT ignored; the run must see it as a user's would
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert _wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2), "the second call never started"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == status, err
    # was: nothing on stderr after the last progress line
    assert (f"interrupted by {why} after 1 of 2 runs: {out} is partial: it holds the 1 that finished "
            "(summary.complete is false); the run was not stored in the history") in err
    assert "defects4warp run: interrupted" not in err and "Aborted!" not in err  # said once, by the run itself
    doc = json.loads(out.read_text())
    assert doc["summary"]["complete"] is False and len(doc["results"]) == 1
    hung = int(pids.read_text().split()[1])
    assert _wait_for(lambda: not _alive(hung), 10), "the engine's process outlived the run"


def _bug_runs(spec):
    """Run records of bug runs diagnosed bug: ``[(top-1 score, right?, how many)]``."""
    out = []
    for score, right, n in spec:
        for _ in range(n):
            out.append({"expected": {"verdict": "bug", "classes": ["a"]},
                        "diagnosis": {"verdict": "bug", "classes": [{"id": "a" if right else "b", "score": score},
                                                                    {"id": "b" if right else "a",
                                                                     "score": round(1 - score, 6)}]}})
    return out


def test_the_reliability_diagram_bins_by_counts_or_says_why_it_cannot():
    from defects4warp.report.html import confidence_bins, reliability_html

    # equal-width bins of 0.1 put 30 of these 40 runs (0.9 and 1.0) in one bin; equal counts keep ties together
    bins = confidence_bins([(0.6, i < 5) for i in range(10)] + [(0.9, i < 8) for i in range(10)] + [(1.0, True)] * 20)
    assert [(b["lo"], b["hi"], b["count"], b["right"]) for b in bins] == [(0.6, 0.6, 10, 5), (0.9, 0.9, 10, 8),
                                                                           (1.0, 1.0, 20, 20)]
    assert bins[0]["low"] == pytest.approx(0.2366, abs=1e-4) and bins[0]["high"] == pytest.approx(0.7634, abs=1e-4)
    assert bins[2]["low"] == pytest.approx(0.8389, abs=1e-4) and bins[2]["high"] == 1.0  # Wilson, 20 of 20
    # a last bin with fewer than 5 runs joins the one before it
    assert [b["count"] for b in confidence_bins([(x / 13, True) for x in range(13)])] == [6, 7]

    page = reliability_html({"results": _bug_runs([(0.6, True, 5), (0.6, False, 5), (0.9, True, 8), (0.9, False, 2),
                                                   (1.0, True, 20)])})
    assert "<p>3 bins of about 13 runs each over the top-1 scores of 40 bug runs diagnosed bug (0.600 to 1.000)" in page
    # was: one dot at (1, 1) and no word
    page = reliability_html({"results": _bug_runs([(1.0, True, 3)])})
    assert ("<p>One bin only: 3 run(s) with top-1 scores 1.000 to 1.000, 3 right. A curve needs at least 10 runs "
            "(two bins of 5), so this figure cannot say whether the scores are calibrated.</p>") in page
    page = reliability_html({"results": _bug_runs([(1.0, True, 30)])})
    assert "A curve needs scores that differ (the runs' scores are all alike)" in page


def test_the_wall_time_says_how_warm_the_kernel_cache_was():
    from defects4warp.report.pages.results import RESULTS_KERNEL_CACHE
    from defects4warp.report.markdown import run_markdown

    def doc(costs, **summary):
        res = [{"case": "c", "variant": f"v{i}", "scale": "small", "expected": None, "correct": None,
                "diagnosis": {"verdict": "bug", "classes": [], "cost": c}} for i, c in enumerate(costs)]
        s = {"engine": "reference", "warp_version": "1.19.0", "device": "cpu", "wall_s": 126.0, "cases": 1,
             "variants": 2, "runs": 2, "scored": 0, "verdict_accuracy": None, "class_accuracy": None,
             "detection_rate": None, "false_positive_rate": None, "per_class": {}, **summary}
        return {"summary": s, "results": res}

    row = [ln for ln in run_markdown(doc([{"compiles": 0}, {"compiles": 0, "compile_s": 0.0}])).splitlines()
           if ln.startswith("| wall time")]
    assert row == ["| wall time of the whole run | 2.1 min (Warp's kernel cache warm: no kernel compiled) |"]
    row = [ln for ln in run_markdown(doc([{"compiles": 12, "compile_s": 80.4}, {"compiles": 0}])).splitlines()
           if ln.startswith("| wall time")]
    assert row == ["| wall time of the whole run | 2.1 min (12 kernel build(s) took 80 s of it: the kernel cache was "
                   "cold for some) |"]
    assert "| wall time of the whole run | 2.1 min |" in run_markdown(doc([{"wall_s": 1.0}]))  # not recorded: no claim
    # docs/results.md (from an engine file that records no compiles) says the cache was warm, and what cold costs
    text = (ROOT / "docs" / "results.md").read_text()
    assert f" min ({RESULTS_KERNEL_CACHE}) |" in text
    assert "35 min on 2 shared cores" in RESULTS_KERNEL_CACHE


def _long_prose_lines(text: str, limit: int = 400) -> list:
    fenced, out = False, []
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced and len(line) > limit and not line.lstrip().startswith(("|", "#", "<")):
            out.append((n, len(line)))
    return out


def test_no_line_of_prose_in_the_docs_is_over_400_characters():
    from defects4warp.report.pages.prose import wrap_prose

    pages = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
    # was: docs/upgrade-audit.md:7 (4,659 characters), docs/old-releases.md:7, docs/capture-table.md:7, ...
    assert {p.name: _long_prose_lines(p.read_text()) for p in pages if _long_prose_lines(p.read_text())} == {}
    item = "- " + " ".join(f"word{i}" for i in range(120))
    text = "\n".join(["# t", item, "| " + "x " * 300 + "|", "```", "y " * 300, "```", "> " + "q " * 250])
    out = wrap_prose(text, max_line=400, width=60).splitlines()
    cont = [ln for ln in out if ln.startswith("  word")]
    assert out[0] == "# t" and out[1].startswith("- word0 ") and all(len(ln) <= 60 for ln in [out[1]] + cont)
    assert cont and " ".join(x.strip() for x in [out[1][2:]] + cont) == item[2:]  # the item's text, in order
    assert "| " + "x " * 300 + "|" in out and "y " * 300 in out  # tables and code as they were
    quote = out[len(out) - out[::-1].index("```"):]
    assert len(quote) == 9 and all(ln.startswith("> q") and len(ln) <= 60 for ln in quote)


def test_the_glossary_defines_the_release_row_and_the_pages_link_it():
    glossary = (ROOT / "docs" / "glossary.md").read_text()
    assert "### release row\nAn [expectation](#expectation) that holds for some Warp releases only" in glossary
    assert "](docs/glossary.md)" in (ROOT / "README.md").read_text()
    for p in sorted((ROOT / "docs").glob("*.md")):
        if p.name == "glossary.md":
            continue
        text = p.read_text()
        assert text.count("release row") == text.count("[release row](glossary.md#release-row)"), p.name


def test_the_bar_on_a_terminal_uses_the_same_eta():
    from rich.console import Console

    from defects4warp.progress import BarProgress, progress

    assert isinstance(progress("x", Console(file=io.StringIO(), force_terminal=True)), BarProgress)
    now = FakeClock()
    p = BarProgress("diagnosing", Console(file=io.StringIO(), force_terminal=True), get_time=now)
    task = p.add_task("", total=100)
    eta = p.columns[5]
    for i in range(30):  # reused from the result store, at once
        now.t = 0.001 * (i + 1)
        p.update(task, advance=1)
    assert eta.render(p.tasks[0]).plain == "-:--"  # rich's own column said 0:00:00 here
    for i in range(5):
        now.t = 0.03 + 10.0 * (i + 1)
        p.update(task, advance=1)
    assert eta.render(p.tasks[0]).plain == "10:50"  # 10 s an item, 65 left


def test_an_interrupted_verb_says_so(monkeypatch):
    import defects4warp.commands.list_cases as list_cases
    from defects4warp.commands._common import Terminated

    def stop(*a, **k):
        raise Terminated()

    monkeypatch.setattr(list_cases, "load_corpus", stop, raising=False)
    monkeypatch.setattr(list_cases, "_load", stop, raising=False)
    r = CliRunner().invoke(main, ["list"])
    assert r.exit_code == 143
    assert "defects4warp list: interrupted by SIGTERM before it finished" in r.output


def test_the_reliability_diagram_draws_bins_that_are_all_wrong_or_all_right():
    from defects4warp.report.html import confidence_bins, reliability_html

    # a fraction of 0 (or 1): the Wilson interval's end may miss it by a rounding error (matplotlib refused it)
    bins = confidence_bins([(0.3, False)] * 11 + [(0.9, True)] * 6)
    assert [(b["accuracy"], b["count"]) for b in bins] == [(0.0, 11), (1.0, 6)]
    assert bins[0]["low"] > 0.0 and bins[1]["high"] < 1.0  # 2.8e-17 and 1 - 1.1e-16: Wilson in floating point
    assert "<img" in reliability_html({"results": _bug_runs([(0.3, False, 11), (0.9, True, 6)])})


def test_an_audit_of_a_release_on_which_nothing_got_a_verdict_exits_1(tmp_path):
    """As for `run`: a release on which every variant that ran ended in an error (an engine that
    always times out) gives nothing to compare, and the audit says so instead of a clean report."""
    def release(errors):
        return {"run": {"summary": {"runs": 2, "skipped": 0, "errors": errors}, "results": []}, "checks": []}

    doc = tmp_path / "m.json"
    doc.write_text(json.dumps({"releases": {"1.18.0": release(0), "1.19.0": release(2)}}))
    r = CliRunner().invoke(main, ["audit", "--warp", "1.18.0,1.19.0", "--matrix", str(doc)])
    assert r.exit_code == 1, r.output
    assert "no run got a verdict on Warp 1.19.0: every variant that ran there ended in an error" in " ".join(r.output.split())
