"""``history`` and ``leaderboard`` name the corpus of each run, and the
leaderboard ranks on the whole bundled corpus unless told otherwise."""

import json
import shutil

from click.testing import CliRunner

from defects4warp.corpus.case import default_corpus, load_corpus
from defects4warp.cli import main

PAIR = "ball-drag-identification,puck-launch-fit"


def test_history_and_leaderboard_name_the_corpus(tmp_path):
    r = CliRunner()
    res = ["--results", str(tmp_path / "results")]
    for e in ("always-bug", "always-no-bug"):
        out = r.invoke(main, ["run", "--engine", e, "--cases", PAIR] + res)
        assert out.exit_code == 0, out.output
    scratch = tmp_path / "scratch"
    src = load_corpus(default_corpus(), "puck-launch-fit")[0][0]
    shutil.copytree(src.path, scratch / src.id, ignore=shutil.ignore_patterns("__pycache__"))
    assert r.invoke(main, ["run", "--engine", "always-bug", "--corpus", str(scratch)] + res).exit_code == 0

    # the run summary keeps the corpus's name, size and selection
    hist = tmp_path / "h.json"
    out = r.invoke(main, ["history", "--json", str(hist)] + res)
    assert out.exit_code == 0, out.output
    runs = json.loads(hist.read_text())
    assert [x["corpus"] for x in runs] == [f"{scratch.resolve()}, 1 case",
                                           f"bundled, 2 cases (subset: --cases {PAIR})",
                                           f"bundled, 2 cases (subset: --cases {PAIR})"]
    assert runs[1]["summary"]["corpus"] == {"name": "bundled", "cases": 2, "subset": True,
                                            "selection": f"--cases {PAIR}"}
    assert "bundled, 2 cases (subset: --cases" in out.output

    # default: the whole bundled corpus, where nothing ran yet; it says so and where runs are
    n = len(load_corpus(default_corpus())[0])
    out = r.invoke(main, ["leaderboard"] + res)
    assert out.exit_code == 0
    assert f"no stored run on the corpus bundled, {n} cases" in out.output
    assert f"  bundled, 2 cases (subset: --cases {PAIR}): --corpus-digest {runs[1]['corpus_digest'][:10]}" in out.output

    # the subset and the scratch corpus are chosen explicitly, never mixed
    board = tmp_path / "b.json"
    out = r.invoke(main, ["leaderboard", "--cases", PAIR, "--json", str(board)] + res)
    assert out.exit_code == 0, out.output
    doc = json.loads(board.read_text())
    assert [x["engine"] for x in doc["rows"]] == ["always-no-bug", "always-bug"]
    assert doc["corpus"] == f"bundled, 2 cases (subset: --cases {PAIR})"
    out = r.invoke(main, ["leaderboard", "--corpus", str(scratch), "--json", str(board)] + res)
    doc = json.loads(board.read_text())
    assert [(x["engine"], x["run"]) for x in doc["rows"]] == [("always-bug", 3)]

    # compare names both corpora when they differ, and writes --json
    out = r.invoke(main, ["compare", "1", "3", "--json", str(tmp_path / "c.json")] + res)
    assert out.exit_code == 0, out.output
    assert (f"the runs differ in corpus or Warp release: run 1 on bundled, 2 cases (subset: --cases {PAIR}), "
            f"Warp {runs[2]['warp_version']}; run 3 on {scratch.resolve()}, 1 case") in " ".join(out.output.split())
    assert json.loads((tmp_path / "c.json").read_text())["comparable"] is False

    n_test = sum(c.split == "test" for c in load_corpus(default_corpus())[0])
    out = r.invoke(main, ["leaderboard", "--split", "test"] + res)
    assert f"no stored run on the corpus bundled, {n_test} cases (subset: --split test)" in out.output

    out = r.invoke(main, ["leaderboard", "--warp", "1.16.0,1.19.0"] + res)
    assert out.exit_code == 2 and "'--warp'" in out.output and "`leaderboard` takes one release" in out.output
