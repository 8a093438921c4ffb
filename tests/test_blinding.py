"""Blinding: variant sources hold no hint words, engines see neutral paths only."""

from pathlib import Path

import pytest

from defects4warp.blind import HINT_WORDS, hint_findings, neutral_copy
from defects4warp.corpus.case import default_corpus, load_corpus

CASES, _ = load_corpus(default_corpus())


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_variant_sources_hold_no_hint_words(case):
    for v in case.variants:
        assert hint_findings(v.path) == [], f"{case.id}/{v.name}"


def test_hint_scan_finds_words_in_comments_names_and_strings(tmp_path):
    (tmp_path / "problem.py").write_text(
        "# the Fix is here\n"
        "def wrongStep():\n"
        "    return 'no stale data'\n"
        "fixture_value = 1\n"
    )
    words = sorted((line, w) for _, line, w in hint_findings(tmp_path))
    assert words == [(1, "fix"), (2, "wrong"), (3, "stale")]


def test_word_list_covers_the_obvious_ones():
    assert {"bug", "buggy", "fix", "fixed", "wrong", "overwrite", "stale", "missing"} <= HINT_WORDS


def test_neutral_copy_hides_case_and_variant_names(tmp_path):
    src = tmp_path / "my-secret-case" / "buggy"
    (src / "__pycache__").mkdir(parents=True)
    (src / "problem.py").write_text("x = 1\n")
    (src / "helper.py").write_text("y = 2\n")
    with neutral_copy(src) as dst:
        assert "secret" not in str(dst) and "buggy" not in str(dst)
        assert sorted(p.name for p in Path(dst).iterdir()) == ["helper.py", "problem.py"]
        kept = Path(dst)
    assert not kept.exists()
