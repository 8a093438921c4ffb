"""``defects4warp run``: the runner, the CLI, and a scored run of the
reference engine on a few bundled cases."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from defects4warp.corpus.case import default_corpus, load_corpus
from defects4warp.cli import main
from defects4warp.engines import ReferenceEngine, get_engine
from defects4warp.run.runner import plan, run

CASES, _ = load_corpus(default_corpus())


class RaisingEngine:
    name, version = "raising", "0"

    def diagnose(self, path, device, scale):
        raise ValueError("engine blew up")


class OffSchemaEngine:
    name, version = "off-schema", "0"

    def diagnose(self, path, device, scale):
        return {"verdict": "maybe"}


class PathRecordingEngine:
    name, version = "recorder", "0"

    def __init__(self):
        self.paths = []

    def diagnose(self, path, device, scale, script=None):
        self.paths.append(path)
        return get_engine("always-no-bug").diagnose(path, device, scale, script=script)


def test_constant_engine_bounds():
    doc = run(plan(CASES), get_engine("always-bug"), warp_version="1.19.0")
    s = doc["summary"]
    assert s["detection_rate"] == 1.0
    assert s["false_positive_rate"] == 1.0
    n_bug = sum(r["expected"]["verdict"] == "bug" for r in doc["results"] if r["expected"])
    assert s["verdict_accuracy"] == pytest.approx(n_bug / s["scored"])


def test_engine_failures_are_recorded_and_the_run_goes_on():
    items = plan(CASES[:2])
    for engine, text in [(RaisingEngine(), "engine raised ValueError: engine blew up"),
                         (OffSchemaEngine(), "engine returned an invalid diagnosis")]:
        doc = run(items, engine, warp_version="1.19.0")
        assert len(doc["results"]) == len(items)
        assert all(r["diagnosis"]["verdict"] == "error" for r in doc["results"])
        assert text in doc["results"][0]["diagnosis"]["error"]


def test_engine_sees_only_a_neutral_copy():
    rec = PathRecordingEngine()
    doc = run(plan(CASES), rec, warp_version="1.19.0")
    # a case whose `requires:` module is missing here (torch) is skipped, never handed to the engine
    assert len(rec.paths) == len(plan(CASES)) - sum(1 for r in doc["results"] if r.get("skipped"))
    for p in rec.paths:
        assert not any(c.id in p for c in CASES)
        assert "buggy" not in p and "fixed" not in p


def test_json_is_written_atomically_and_complete(tmp_path):
    out = tmp_path / "out.json"
    doc = run(plan(CASES[:3]), get_engine("always-no-bug"), warp_version="1.19.0", json_path=str(out))
    on_disk = json.loads(out.read_text())
    assert on_disk["summary"]["complete"] is True
    assert len(on_disk["results"]) == len(doc["results"])
    assert not list(tmp_path.glob(".part-*"))


def test_cli_run_list_and_errors(tmp_path):
    r = CliRunner()
    res = r.invoke(main, ["run", "--engine", "always-no-bug", "--json", str(tmp_path / "o.json")])
    assert res.exit_code == 0, res.output
    s = json.loads((tmp_path / "o.json").read_text())["summary"]
    for key in ("cases", "variants", "verdict_accuracy", "class_accuracy", "detection_rate",
                "false_positive_rate", "per_class", "engine", "engine_version", "warp_version", "device", "wall_s"):
        assert key in s
    assert s["cases"] == len(CASES) and s["detection_rate"] == 0.0
    assert "verdict accuracy" in res.output

    res = r.invoke(main, ["list"])
    assert res.exit_code == 0 and CASES[0].id in res.output

    res = r.invoke(main, ["run", "--cases", "no-such-case-*", "--engine", "always-bug"])
    assert res.exit_code == 2

    broken = tmp_path / "corpus"
    shutil.copytree(CASES[0].path, broken / CASES[0].id)
    (broken / "bad-case").mkdir()
    (broken / "bad-case" / "case.yaml").write_text("id: bad-case\n")
    res = r.invoke(main, ["run", "--corpus", str(broken), "--engine", "always-bug"])
    assert res.exit_code == 1
    assert "bad-case" in res.output and CASES[0].id in res.output


@pytest.mark.slow
def test_reference_engine_scores_a_few_cases():
    picked = [c for c in CASES if c.id in {"hanging-chain-rest-lengths", "thermistor-adc-calibration",
                                            "heated-strip-conductivity"}]
    assert len(picked) == 3
    doc = run(plan(picked), ReferenceEngine(timeout_s=300), jobs=2)  # generous: the suite runs on every core
    s = doc["summary"]
    assert s["variants"] == 6 and s["errors"] == 0
    assert s["verdict_accuracy"] == 1.0
    assert s["false_positive_rate"] == 0.0
    assert s["detection_rate"] == 1.0


def test_case_with_missing_requirement_is_skipped_not_failed(tmp_path):
    from defects4warp.corpus.case import load_case
    from defects4warp.validate import validate_item

    src = CASES[0].path
    dst = tmp_path / CASES[0].id
    shutil.copytree(src, dst)
    text = (dst / "case.yaml").read_text()
    (dst / "case.yaml").write_text(text + "requires: [no_such_module_d4w]\n")
    case = load_case(dst)
    assert case.requires == ("no_such_module_d4w",)
    doc = run(plan([case]), get_engine("always-bug"), warp_version="1.19.0")
    assert all(r["skipped"] == "requires no_such_module_d4w, not installed" for r in doc["results"])
    assert doc["summary"]["skipped"] == len(case.variants) and doc["summary"]["scored"] == 0
    check = validate_item(plan([case])[0], "cpu", "1.19.0", timeout_s=5)
    assert check.ok and check.message.startswith("skipped: requires no_such_module_d4w")


def test_new_case_scaffold_loads_and_is_blind(tmp_path):
    from defects4warp.blind import hint_findings
    from defects4warp.corpus.case import load_case

    r = CliRunner()
    res = r.invoke(main, ["maint", "new-case", "my-new-case", "--corpus", str(tmp_path)])
    assert res.exit_code == 0, res.output
    case = load_case(tmp_path / "my-new-case")
    assert [v.name for v in case.variants] == ["buggy", "fixed"]
    assert hint_findings(tmp_path / "my-new-case" / "buggy") == []
    assert r.invoke(main, ["maint", "new-case", "my-new-case", "--corpus", str(tmp_path)]).exit_code == 2
    assert r.invoke(main, ["maint", "new-case", "Bad Name", "--corpus", str(tmp_path)]).exit_code == 2


def test_version_matrix_renders_measured_cells():
    from defects4warp.report.markdown import version_matrix_markdown

    check = lambda rel, ok, sig, err, variant="buggy": {  # noqa: E731
        "case": "c1", "variant": variant, "scale": "small", "ok": ok, "signature": sig,
        "relative_error": err, "message": "m"}
    doc = {"device": "cpu", "repeat": 3, "wall_s": 120.0,
           "machine": {"cpu": "X", "cores": 2, "memory_gib": 24, "os": "Linux", "python": "3.11"},
           "releases": {"1.16.0": {"wall_s": 60, "checks": [check("1.16.0", True, "zero", 1.0), check("1.16.0", True, "agrees", 1e-10, "fixed")]},
                        "1.17.0": {"wall_s": 60, "checks": [check("1.17.0", True, "agrees", 1e-10), check("1.17.0", True, "agrees", 1e-10, "fixed")]}}}
    md = version_matrix_markdown(doc)
    assert "| c1 | buggy | - | wrong 1 | right |" in md
    assert "All 2 fixed-variant checks agree" in md
    assert "the full matrix took 2.0 min" in md


def test_version_matrix_merges_partial_validations():
    from defects4warp.report.markdown import merge_validations

    machine = {"cpu": "X", "cores": 2, "memory_gib": 24, "os": "Linux", "python": "3.11"}
    mk = lambda case, err: {"case": case, "variant": "buggy", "scale": "small", "ok": True,  # noqa: E731
                            "signature": "zero", "relative_error": err, "message": ""}
    a = {"device": "cpu", "machine": machine, "wall_s": 10, "releases": {"1.16.0": {"wall_s": 10, "checks": [mk("a", 1.0), mk("b", 1.0)]}}}
    b = {"device": "cpu", "machine": machine, "wall_s": 5, "releases": {"1.16.0": {"wall_s": 5, "checks": [mk("b", 0.5), mk("c", 2.0)]}}}
    m = merge_validations([a, b])
    checks = m["releases"]["1.16.0"]["checks"]
    assert sorted((c["case"], c["relative_error"]) for c in checks) == [("a", 1.0), ("b", 0.5), ("c", 2.0)]
    assert m["wall_s"] == 15 and m["releases"]["1.16.0"]["wall_s"] == 15


@pytest.mark.slow
def test_cli_diagnose_prints_class_evidence_and_fix(programs):
    res = CliRunner().invoke(main, ["diagnose", str(programs / "growth")])
    assert res.exit_code == 0, res.output
    assert "verdict bug" in res.output and "signature growth" in res.output
    assert "missing_tape_zero" in res.output
    assert "gradient() grows across calls at the same point: factors 1, 2, 3" in res.output
    assert "standard fix for missing_tape_zero" in res.output and "tape.zero()" in res.output


def test_json_is_strict_without_nan(tmp_path):
    from defects4warp.run.runner import write_json_atomic

    write_json_atomic(str(tmp_path / "x.json"), {"a": float("nan"), "b": [float("inf"), 1.0]})
    text = (tmp_path / "x.json").read_text()
    assert "NaN" not in text and json.loads(text) == {"a": "nan", "b": ["inf", 1.0]}


def test_cli_refuses_bad_options_before_measuring(tmp_path):
    r = CliRunner()
    assert r.invoke(main, ["run", "--warp", "banana"]).exit_code == 2
    (tmp_path / "afile").write_text("")
    res = r.invoke(main, ["run", "--engine", "always-bug", "--json", str(tmp_path / "afile" / "out.json")])
    assert res.exit_code == 2 and "is not a folder" in res.output
    assert r.invoke(main, ["run", "--timeout", "-1"]).exit_code == 2
    (tmp_path / "v.json").write_text("{}")
    res = r.invoke(main, ["report", str(tmp_path / "v.json")])
    assert res.exit_code == 2 and "not the JSON of" in res.output


def test_engine_registered_through_entry_point(tmp_path, monkeypatch):
    from defects4warp.engines import engine_names, get_engine as get

    (tmp_path / "toy_engine_mod.py").write_text(
        "class Toy:\n"
        "    name, version = 'toy', '9.9'\n"
        "    def __init__(self, **kw):\n"
        "        pass\n"
        "    def diagnose(self, path, device, scale):\n"
        "        return {'verdict': 'bug', 'classes': [{'id': 'overwrite', 'score': 1.0}], 'signature': None,\n"
        "                'evidence': [], 'cost': {'wall_s': 0.0}}\n"
    )
    dist = tmp_path / "toy_engine-9.9.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-engine\nVersion: 9.9\n")
    (dist / "entry_points.txt").write_text("[defects4warp.engines]\ntoy = toy_engine_mod:Toy\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "toy" in engine_names()
    doc = run(plan(CASES[:1]), get("toy", timeout_s=1), warp_version="1.19.0")
    assert doc["summary"]["engine"] == "toy" and doc["summary"]["detection_rate"] in (1.0, None)


def test_outside_command_engine_worked_example(tmp_path):
    import sys as _sys

    example = Path(__file__).resolve().parent.parent / "examples" / "cmd_engine.py"
    engine = f'cmd:{_sys.executable} {example}'
    res = CliRunner().invoke(main, ["run", "--engine", engine, "--cases", "ball-drag-identification,puck-launch-fit",
                                    "--json", str(tmp_path / "o.json")])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "o.json").read_text())
    by = {(r["case"], r["variant"]): r["diagnosis"] for r in doc["results"]}
    assert by[("ball-drag-identification", "buggy")]["classes"][0]["id"] == "inplace_math"
    assert by[("ball-drag-identification", "fixed")]["verdict"] == "no_bug"
    assert by[("puck-launch-fit", "buggy")]["verdict"] == "no_bug"  # a grep cannot see a dynamic loop


def test_outside_command_failures_are_error_diagnoses(tmp_path):
    from defects4warp.engines import get_engine as get

    for script, text in [("import sys; sys.exit(4)", "exited with status 4"),
                         ("print('not json')", "wrote no answer"),
                         ("import time; time.sleep(30)", "timeout")]:
        (tmp_path / "e.py").write_text(script)
        import sys as _sys

        d = get(f"cmd:{_sys.executable} {tmp_path / 'e.py'}", timeout_s=2).diagnose(str(tmp_path), "cpu", "small")
        assert d["verdict"] == "error" and text in d["error"]


def test_history_compare_and_leaderboard(tmp_path):
    r = CliRunner()
    args = ["--results", str(tmp_path), "--cases", "ball-drag-identification,puck-launch-fit"]
    for e in ("always-bug", "always-no-bug"):
        assert r.invoke(main, ["run", "--engine", e] + args).exit_code == 0
    from defects4warp.run.history import compare, leaderboard, list_runs

    runs = list_runs(str(tmp_path))
    assert [x["engine"] for x in runs] == ["always-no-bug", "always-bug"]
    assert runs[0]["corpus_digest"] == runs[1]["corpus_digest"] and len(runs[0]["corpus_digest"]) == 64
    c = compare(runs[1]["id"], runs[0]["id"], str(tmp_path))
    assert c["comparable"] and c["metrics"]["false_positive_rate"]["change"] == -1.0
    assert len(c["flipped"]) == 4  # every variant's verdict flips between the two constants
    _, _, rows = leaderboard(runs[0]["corpus_digest"], path=str(tmp_path))
    assert [x["engine"] for x in rows] == ["always-no-bug", "always-bug"]  # class accuracy 0.5 vs 0.0
    out = r.invoke(main, ["leaderboard"] + args).output
    assert "always-no-bug" in out
    out = r.invoke(main, ["compare", str(runs[1]["id"]), str(runs[0]["id"]), "--results", str(tmp_path)]).output
    assert "4 variant run(s) flipped" in out
    # judged in both runs: always-bug's 'overwrite' is the wrong class for these buggy variants, so a flip to
    # no_bug stays wrong, and is right only on the fixed twins
    assert "ball-drag-identification/buggy@small: bug overwrite -> no_bug correct (wrong -> wrong)" in out
    assert "ball-drag-identification/fixed@small: bug overwrite -> no_bug correct (wrong -> right)" in out


def test_with_summary_passes_only_the_users_words(tmp_path):
    import sys as _sys

    script = tmp_path / "echo_engine.py"
    script.write_text(
        "import json, sys\n"
        "print(json.dumps({'verdict': 'no_bug', 'classes': [{'id': 'correct', 'score': 1.0}], 'signature': None,\n"
        "  'evidence': [{'probe': 'args', 'clean': True, 'finding': json.dumps(sys.argv[2:]), 'data': None}],\n"
        "  'cost': {'wall_s': 0.0}}))\n")
    case = CASES[0]
    doc = run(plan([case])[:1], get_engine(f"cmd:{_sys.executable} {script}", with_summary=True), warp_version="1.19.0")
    args = json.loads(doc["results"][0]["diagnosis"]["evidence"][0]["finding"])
    assert args == ["cpu", "small", case.summary]
    assert case.id not in json.dumps(doc["results"][0]["diagnosis"])


@pytest.mark.slow
def test_reference_runs_are_reproducible():
    from defects4warp.run.runner import without_timing

    picked = [c for c in CASES if c.id in {"fountain-jet-aiming", "crate-push-friction-fit"}]
    # 300 s as the other reference runs of the suite (its other jobs share the cores); an error says what it was
    a = run(plan(picked), ReferenceEngine(timeout_s=300), jobs=2)
    b = run(plan(picked), ReferenceEngine(timeout_s=300), jobs=2)
    errors = [(r["case"], r["variant"], r["diagnosis"].get("error")) for r in a["results"] + b["results"]
              if r["diagnosis"]["verdict"] == "error"]
    assert not errors, errors
    assert [(r["diagnosis"]["verdict"], r["diagnosis"]["classes"]) for r in a["results"]] == \
           [(r["diagnosis"]["verdict"], r["diagnosis"]["classes"]) for r in b["results"]]
    assert without_timing(a) == without_timing(b)


def _browser():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def test_html_report_embeds_the_figures(tmp_path):
    doc = run(plan(CASES), get_engine("always-bug"), warp_version="1.16.0")
    other = run(plan(CASES), get_engine("always-bug"), warp_version="1.19.0")
    res = CliRunner().invoke(main, ["report", "--html", str(tmp_path / "r.html"),
                                    *[str(_dump(tmp_path, d, i)) for i, d in enumerate([doc, other])]])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "r.html").read_text()
    for fig in ("confusion", "per_class", "cost", "releases"):
        assert f'alt="{fig}" src="data:image/png;base64,' in page
    assert "http" not in page.replace("http-equiv", "")  # self-contained


def _dump(tmp_path, doc, i):
    p = tmp_path / f"run{i}.json"
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.skipif(_browser() is None, reason="no Chromium installed (apt-get install chromium to run this check)")
def test_html_report_renders_in_headless_chromium(tmp_path):
    import subprocess

    doc = run(plan(CASES), get_engine("always-bug"), warp_version="1.19.0")
    from defects4warp.report.html import html_report

    page = tmp_path / "r.html"
    page.write_text(html_report(doc))
    shot = tmp_path / "shot.png"
    subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1200,2400",
                    page.as_uri()], capture_output=True, timeout=120)
    assert shot.is_file()
    from matplotlib.image import imread

    img = imread(shot)
    # the figures put many distinct colours on the page; a blank or text-only page has a handful
    colours = len({tuple(p) for p in (img[::4, ::4, :3] * 255).astype(int).reshape(-1, 3)})
    assert colours > 50


def test_buggy_only_corpus_is_accepted(tmp_path):
    from defects4warp.corpus.case import load_case

    src = next(c for c in CASES if c.id == "puck-launch-fit")
    dst = tmp_path / src.id
    shutil.copytree(src.path / "buggy", dst / "buggy")
    text = (src.path / "case.yaml").read_text()
    head, _, _ = text.partition("variants:")
    (dst / "case.yaml").write_text(head + "variants:\n  buggy:\n    - verdict: bug\n      classes: [dynamic_loop]\n")
    case = load_case(dst)
    assert [v.name for v in case.variants] == ["buggy"]
    doc = run(plan([case]), get_engine("always-bug"), warp_version="1.19.0")
    s = doc["summary"]
    assert s["variants"] == 1 and s["detection_rate"] == 1.0 and s["false_positive_rate"] is None


@pytest.mark.slow
def test_summary_records_the_release_actually_imported():
    picked = [c for c in CASES if c.id == "fountain-jet-aiming"]
    doc = run(plan(picked), ReferenceEngine(timeout_s=120))
    from defects4warp.run.runner import installed_warp_version

    assert doc["summary"]["warp_imported"] == [installed_warp_version()]


def test_json_path_in_a_missing_folder_is_a_usage_error(tmp_path):
    r = CliRunner()
    res = r.invoke(main, ["run", "--engine", "always-no-bug", "--cases", CASES[0].id,
                          "--json", str(tmp_path / "no" / "such" / "o.json")])
    assert res.exit_code == 2 and "does not exist" in res.output
    res = r.invoke(main, ["diagnose", str(CASES[0].variants[0].path), "--json", str(tmp_path / "no" / "d.json")])
    assert res.exit_code == 2 and "does not exist" in res.output


@pytest.mark.slow
def test_cli_diagnose_correct_program_offers_no_fix(programs):
    """A no_bug answer has nothing to fix: the footer names the class and its meaning, not a 'standard fix'."""
    res = CliRunner().invoke(main, ["diagnose", str(programs / "cubic")])
    assert res.exit_code == 0, res.output
    assert "verdict no_bug" in res.output
    assert "standard fix" not in res.output
    assert "correct: no fix needed in the differentiation" in res.output


def test_run_scores_each_provenance_tier_and_selects_one(tmp_path):
    """`run --tier`: a corpus of original and report cases (always-bug engine, no Warp run) gets a per-tier
    breakdown in its summary and report; --tier report keeps one tier (no breakdown), --tier mined none."""
    from defects4warp.report.html import html_report
    from defects4warp.report.markdown import run_markdown
    from tiny_corpus import make_tiny_corpus

    corpus = make_tiny_corpus(tmp_path / "c")
    yml = corpus / "tiny-factor-two" / "case.yaml"
    yml.write_text(yml.read_text().replace("provenance: original", "provenance: https://example.org/report/1"))
    base = ["run", "--engine", "always-bug", "--corpus", str(corpus), "--no-store", "--results", str(tmp_path / "r")]
    r = CliRunner().invoke(main, base + ["--json", str(tmp_path / "a.json")])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "a.json").read_text())
    t = doc["summary"]["tiers"]
    # original: tiny-cubic (no_bug, diagnosed bug) and tiny-growth (bug); report: tiny-factor-two (bug)
    assert {k: (v["scored"], v["detection_rate"], v["false_positive_rate"]) for k, v in t.items()} == {
        "original": (2, 1.0, 1.0), "report": (1, 1.0, None)}
    assert "per provenance tier" in r.output
    assert "| report | 1 | 1.000 (1) | n/a (0) | 0.000 |" in run_markdown(doc)
    assert "<tr><td>original</td><td>2</td><td>1.000 (1)</td><td>1.000 (1)</td>" in html_report(doc)
    r = CliRunner().invoke(main, base + ["--tier", "report", "--json", str(tmp_path / "b.json")])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "b.json").read_text())
    assert [x["case"] for x in doc["results"]] == ["tiny-factor-two"] and "tiers" not in doc["summary"]
    r = CliRunner().invoke(main, base + ["--tier", "mined"])
    assert r.exit_code == 2 and "no case of tier 'mined'" in r.output


def test_compile_counts_are_left_out_of_a_reproducibility_comparison_like_timings():
    from defects4warp.run.runner import without_timing

    # a run that found its kernels in Warp's cache and one that compiled one (another process of the
    # suite, sharing the cache, had not yet written it): the same results (the CI rehearsal of 2026-12-05)
    a = {"summary": {"runs": 4, "total_compiles": 0}, "results": [{"diagnosis": {"cost": {"compiles": 0}}}]}
    b = {"summary": {"runs": 4, "total_compiles": 1}, "results": [{"diagnosis": {"cost": {"compiles": 1}}}]}
    assert without_timing(a) == without_timing(b) == {"summary": {"runs": 4}, "results": [{"diagnosis": {"cost": {}}}]}
