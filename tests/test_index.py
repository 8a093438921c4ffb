"""The corpus index is current, ids are never reused, and fixes are data (`diff`)."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from defects4warp.case import default_corpus, load_corpus
from defects4warp.commands.diff import patch
from defects4warp.index import IndexError_, build

ROOT = Path(__file__).resolve().parent.parent


def test_committed_index_is_current():
    corpus = default_corpus()
    cases, _ = load_corpus(corpus)
    assert (corpus / "INDEX.md").read_text(encoding="utf-8") == build(corpus, cases), \
        "corpus/INDEX.md is out of date: run `defects4warp index`"


def test_retired_ids_stay_listed_and_are_never_reused(tmp_path):
    src = default_corpus() / "projectile-launch-fit"
    subprocess.run(["cp", "-r", str(src), str(tmp_path / "projectile-launch-fit")], check=True)
    (tmp_path / "RETIRED.yaml").write_text(yaml.safe_dump([{"id": "old-cloth-case", "reason": "label was wrong",
                                                            "retired": "2026-11-30"}]))
    cases, _ = load_corpus(tmp_path)
    text = build(tmp_path, cases, today="2026-12-01")
    assert "| `old-cloth-case` | - | - | - | - | - | - | deprecated 2026-11-30: label was wrong |" in text
    assert "| `projectile-launch-fit` | dev | adapter | double_count, correct | buggy: all releases | original |" in text
    (tmp_path / "RETIRED.yaml").write_text(yaml.safe_dump([{"id": "projectile-launch-fit", "reason": "x"}]))
    with pytest.raises(IndexError_, match="ids are never reused"):
        build(tmp_path, cases)


def test_diff_prints_the_minimal_fix():
    text = patch(default_corpus() / "projectile-launch-fit")
    assert text.startswith("--- a/buggy/problem.py\n+++ b/fixed/problem.py\n")
    assert [ln for ln in text.splitlines() if ln.startswith(("+", "-")) and not ln.startswith(("+++", "---"))] == \
        ["-            self._evaluate()"]


def test_diff_cli_names_a_missing_case():
    res = subprocess.run([sys.executable, "-m", "defects4warp", "diff", "no-such-case"], capture_output=True, text=True,
                         cwd=ROOT)
    assert res.returncode == 2 and "no such case" in res.stderr
