"""The corpus index is current, ids are never reused, and fixes are data (`diff`)."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from defects4warp.corpus.case import default_corpus, load_corpus
from defects4warp.commands.diff import patch
from defects4warp.corpus.index import IndexError_, build

ROOT = Path(__file__).resolve().parent.parent


def test_committed_index_is_current():
    corpus = default_corpus()
    cases, _ = load_corpus(corpus)
    assert (corpus / "INDEX.md").read_text(encoding="utf-8") == build(corpus, cases), \
        "corpus/INDEX.md is out of date: run `defects4warp maint index`"


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


def test_release_ranges_compress_over_the_supported_releases():
    from defects4warp.envs import RELEASES
    from defects4warp.corpus.index import release_ranges

    assert release_ranges(RELEASES) == "all releases"
    assert release_ranges([]) == ""
    assert release_ranges(RELEASES[:3]) == "<=1.2.2"
    assert release_ranges(RELEASES[6:]) == ">=1.6.2"
    assert release_ranges(RELEASES[1:16]) == "1.1.0-1.15.0"
    assert release_ranges(["1.9.1", "1.0.2", "1.19.0", "1.18.0", "1.4.2"]) == "1.0.2, 1.4.2, 1.9.1, >=1.18.0"


def _case(case_id):
    cases, errors = load_corpus(default_corpus(), case_id)
    assert not errors and len(cases) == 1
    return cases[0]


@pytest.mark.parametrize("case_id, where", [
    # a no_bug row for old releases before an unconditional bug row: the bug shows from 1.6.2 only
    ("rover-fleet-pd-gain-tuning", ["buggy: >=1.6.2"]),
    # no_bug <1.1.0, then bug <1.17: 1.0.2 is correct
    ("print-ink-spread-compensation", ["buggy: 1.1.0-1.16.0"]),
    # a refused row is listed with its releases
    ("imu-triad-bias-scale-fit", ["buggy: <=1.17.0", "buggy: >=1.18.0 (refused)"]),
    # scales that differ are listed per scale
    ("arm-batch-reach-targets", ["buggy: <=1.12.1 @small", "buggy: all releases @production"]),
    # min_warp 1.3.3: older releases are unsupported, not buggy
    ("arm-joint-friction-id", ["buggy: 1.3.3-1.13.0"]),
])
def test_bug_releases_follow_the_first_row_that_applies(case_id, where):
    from defects4warp.corpus.index import bug_releases

    assert bug_releases(_case(case_id)) == where


def test_bug_releases_match_the_expectation_of_every_release():
    """Expanding each listed range gives back exactly the releases whose
    expectation (first applicable row) is a bug, for every case."""
    from defects4warp.corpus.case import SCALES
    from defects4warp.envs import RELEASES
    from defects4warp.corpus.index import bug_releases

    def expand(ranges):
        got = set()
        for part in ranges.split(", "):
            if part == "all releases":
                got |= set(RELEASES)
            elif part.startswith("<="):
                got |= set(RELEASES[:RELEASES.index(part[2:]) + 1])
            elif part.startswith(">="):
                got |= set(RELEASES[RELEASES.index(part[2:]):])
            elif "-" in part:
                a, b = part.split("-")
                got |= set(RELEASES[RELEASES.index(a):RELEASES.index(b) + 1])
            else:
                got.add(part)
        return got

    cases, _ = load_corpus(default_corpus())
    checked = 0
    for c in cases:
        listed = {}
        for item in bug_releases(c, verdicts=("bug",)):
            name, rest = item.split(": ", 1)
            ranges, _, scale = rest.partition(" @")
            for s in ([scale] if scale else SCALES):
                listed[(name, s)] = expand(ranges)
        for v in c.variants:
            for s in SCALES:
                want = {r for r in RELEASES if (e := v.expectation_for(r, s)) is not None and e.verdict == "bug"}
                assert listed.get((v.name, s), set()) == want, (c.id, v.name, s)
                checked += 1
    assert checked == len(SCALES) * sum(len(c.variants) for c in cases) > 300


def test_list_shows_what_the_index_shows():
    import json

    from click.testing import CliRunner

    from defects4warp.cli import main

    ids = "rover-fleet-pd-gain-tuning,print-ink-spread-compensation,imu-triad-bias-scale-fit"
    r = CliRunner().invoke(main, ["list", "--cases", ids, "--json"])
    assert r.exit_code == 0, r.output
    got = {c["id"]: c["bug_on"] for c in json.loads(r.output)["cases"]}
    assert got == {"rover-fleet-pd-gain-tuning": ["buggy: >=1.6.2"],
                   "print-ink-spread-compensation": ["buggy: 1.1.0-1.16.0"],
                   "imu-triad-bias-scale-fit": ["buggy: <=1.17.0", "buggy: >=1.18.0 (refused)"]}
    index = (default_corpus() / "INDEX.md").read_text(encoding="utf-8")
    for cid, where in got.items():
        assert f"| {'; '.join(where)} |" in next(ln for ln in index.splitlines() if ln.startswith(f"| `{cid}` |"))
