"""Skipped runs (a case ``requires`` a module that is missing) are shown as
skipped with the reason in the table, the summary, JSON, Markdown, HTML and
the stored history, and never as inconclusive nor in any metric."""

import json
import shutil

from click.testing import CliRunner

from defects4warp.corpus.case import default_corpus, load_corpus
from defects4warp.cli import main

REASON = "requires no_such_module_d4w, not installed"


def _corpus(tmp_path):
    """A corpus of two cases, the second of which requires a missing module."""
    cases, _ = load_corpus(default_corpus(), "projectile-launch-fit,cylinder-marker-radii")
    root = tmp_path / "corpus"
    for c in cases:
        shutil.copytree(c.path, root / c.id, ignore=shutil.ignore_patterns("__pycache__"))
    y = root / "cylinder-marker-radii" / "case.yaml"
    y.write_text(y.read_text() + "requires: [no_such_module_d4w]\n")
    return root


def test_skipped_runs_are_shown_as_skipped_everywhere(tmp_path):
    root = _corpus(tmp_path)
    res_home = tmp_path / "results"
    out = tmp_path / "run.json"
    r = CliRunner().invoke(main, ["run", "--corpus", str(root), "--engine", "always-bug", "--results", str(res_home),
                                  "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert f"skipped ({REASON})" in r.output
    assert "inconclusive 0, skipped 2)" in r.output
    doc = json.loads(out.read_text())
    s = doc["summary"]
    assert s["skipped"] == 2 and s["inconclusive"] == 0 and s["errors"] == 0
    assert s["scored"] == 2 and s["runs"] == 4
    # always-bug on projectile-launch-fit: the buggy variant right, the fixed one wrong
    assert s["verdict_accuracy"] == 0.5
    assert sorted((x["variant"], x["reason"]) for x in s["skipped_runs"]) == [("buggy", REASON), ("fixed", REASON)]
    skipped = [x for x in doc["results"] if x["case"] == "cylinder-marker-radii"]
    assert {x["diagnosis"]["verdict"] for x in skipped} == {"skipped"}
    assert {x["skipped"] for x in skipped} == {REASON}

    # the Markdown and HTML reports of the JSON and of the stored run list the skipped runs with the reason
    for src in (str(out), "1"):
        r = CliRunner().invoke(main, ["report", src, "--results", str(res_home)])
        assert r.exit_code == 0, r.output
        assert "0 inconclusive, 2 skipped." in r.output
        assert f"| cylinder-marker-radii | buggy | {REASON} |" in r.output
    html = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["report", "1", "--results", str(res_home), "--html", str(html)])
    assert r.exit_code == 0, r.output
    page = html.read_text()
    assert "skipped runs" in page and REASON in page
    assert "<tr><th>runs scored / errors / inconclusive / skipped</th><td>2 / 0 / 0 / 2</td></tr>" in page
    assert f"<tr><th>run on</th><td>{s['date']}</td></tr>" in page
    assert "<tr><th>wall time</th><td>" in page
    assert f"<tr><th>corpus</th><td>{root.resolve()}, 2 cases</td></tr>" in page


def test_cost_chart_names_the_costliest_cases_and_totals_the_rest():
    from defects4warp.report.html import cost_bars

    results = [{"case": f"c{i:03d}", "diagnosis": {"cost": {"wall_s": float(i)}}} for i in range(123)]
    results.append({"case": "c122", "diagnosis": {"cost": {"wall_s": 1.0}}})  # a second variant of c122
    labels, secs, n_rest, s_rest = cost_bars({"results": results}, top_cases=20)
    assert len(labels) == 20 and labels[0] == "c122" and secs[0] == 123.0
    assert labels[1:] == [f"c{i:03d}" for i in range(121, 102, -1)]
    assert n_rest == 103 and s_rest == sum(range(103))
    assert cost_bars({"results": results[:5]}, top_cases=20) == (["c004", "c003", "c002", "c001", "c000"],
                                                                 [4.0, 3.0, 2.0, 1.0, 0.0], 0, 0)
