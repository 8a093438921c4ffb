"""`export --format skill-evals` round-trips: every file present, ids unique, no label inside the files."""

import json
import re

from defects4warp.blind import hint_findings
from defects4warp.corpus.case import default_corpus, load_corpus
from defects4warp.report.export import export_skill_evals, goal_sentence, summary_sentences
from defects4warp.taxonomy import CLASSES


def test_skill_evals_round_trip(tmp_path):
    cases, _ = load_corpus(default_corpus(), "projectile-launch-fit,cylinder-marker-radii,oral-dose-absorption-fit")
    out = tmp_path / "evals"
    doc = export_skill_evals(cases, out, "1.19.0")
    assert doc == json.loads((out / "evals.json").read_text())
    ids = [e["id"] for e in doc["evals"]]
    assert len(ids) == len(set(ids)) == sum(len(c.variants) for c in cases)
    by_case = {c.id: c for c in cases}
    for e in doc["evals"]:
        case = by_case[e["case"]]
        for f in e["files"]:
            assert (out / f).is_file()
            assert f.split("/", 2)[2] in e["prompt"]
        # the variant's name (buggy, fixed ...) is a label: it appears nowhere an agent looks
        assert not re.search(r"\b(buggy|fixed|fixed_first)\b", e["id"] + " ".join(e["files"]) + e["prompt"])
        assert e["prompt"].startswith(goal_sentence(case.summary))
        if e["expected"]["verdict"] == "bug":
            assert any(e["expected"]["classes"][0] in a for a in e["assertions"])
        else:
            assert e["assertions"][0].startswith("Does not claim a gradient bug")
    # release caveat where the label depends on the release
    cyl = [e for e in doc["evals"] if e["case"] == "cylinder-marker-radii" and "depends on the Warp release" in " ".join(e["assertions"])]
    assert len(cyl) == 1 and "<1.14" in cyl[0]["assertions"][-1]
    # no label text inside the files
    for d in (out / "files").iterdir():
        assert not hint_findings(d)
        text = " ".join(p.read_text() for p in d.rglob("*.py"))
        assert not [c for c in CLASSES if re.search(rf"\b{c}\b", text)]


def test_export_replaces_an_older_export(tmp_path):
    cases, _ = load_corpus(default_corpus(), "projectile-launch-fit")
    out = tmp_path / "evals"
    export_skill_evals(cases, out, "1.19.0")
    (out / "files" / "stale").mkdir()
    export_skill_evals(cases, out, "1.19.0")
    assert not (out / "files" / "stale").exists()


def test_prompts_are_true_of_every_variant(tmp_path):
    """Every exported task of the bundled corpus: the prompt carries the
    user's goal and no symptom sentence of the case (the summary's sentences
    after the goal tell the buggy variant's symptom), so a fixed or not-a-bug
    variant is never told its buggy sibling's symptom; every variant of a case
    gets the same prompt up to its folder name."""
    cases, _ = load_corpus(default_corpus())
    doc = export_skill_evals(cases, tmp_path / "evals", "1.19.0")
    by_case = {c.id: c for c in cases}
    prompts = {}
    no_bug = 0
    for e in doc["evals"]:
        case = by_case[e["case"]]
        symptoms = summary_sentences(case.summary)[1:]
        assert symptoms, case.id  # every summary states a symptom after the goal
        leaked = [s for s in symptoms if s in e["prompt"]]
        assert not leaked, (e["id"], e["expected"]["verdict"], leaked)
        assert goal_sentence(case.summary) in e["prompt"] and case.title not in e["prompt"]
        assert "whether the gradient that Warp computes for this objective is right" in e["prompt"]
        no_bug += e["expected"]["verdict"] == "no_bug"
        prompts.setdefault(case.id, set()).add(e["prompt"].replace(e["id"], "<id>"))
    assert no_bug > 100
    assert all(len(p) == 1 for p in prompts.values())


def test_caveat_names_the_release_range_a_row_really_covers(tmp_path):
    """A row without `warp:` after bounded rows applies only where they do not (first match
    wins): its caveat names that range, never "all releases" (a newcomer's finding)."""
    from packaging.specifiers import SpecifierSet

    from defects4warp.corpus.case import Expectation
    from defects4warp.report.export import effective_releases

    def rows(*spec):
        return tuple(Expectation("bug", ("overwrite",), SpecifierSet(w), s) for w, s in spec)

    assert effective_releases(rows(("<1.4.2", None), ("", None)), 1) == (">=1.4.2", ("small", "production"))
    ex = rows(("<1.1.0", None), ("<1.13", None), ("", None))
    assert [effective_releases(ex, i)[0] for i in range(3)] == ["<1.1.0", ">=1.1.0,<1.13", ">=1.13"]
    assert effective_releases(rows(("<1.13", None), ("<1.10", None)), 1)[0] is None  # shadowed
    ex = rows(("<1.13", None), ("", "production"), ("", "small"))
    assert effective_releases(ex, 1) == (">=1.13", ("production",))
    assert effective_releases(rows(("", "production"), ("", None)), 1) == ("", ("small",))

    cases, _ = load_corpus(default_corpus(), "anchor-stiffness-calibration")
    doc = export_skill_evals(cases, tmp_path / "ev", "1.19.0")
    text = " ".join(a for e in doc["evals"] for a in e["assertions"])
    assert "all releases" not in text
    assert ("bug (warp_adjoint_bug) on Warp ==1.5.1; bug (warp_adjoint_bug) on Warp <1.4.2; "
            "no_bug (correct) on Warp >=1.4.2,!=1.5.1") in text
    # an exact release earlier leaves the rows below it everything else
    ex = (Expectation("bug", ("x",), SpecifierSet("==1.5.1"), None),
          Expectation("bug", ("y",), SpecifierSet("<1.4.2"), None),
          Expectation("no_bug", ("correct",), SpecifierSet(""), None))
    assert [effective_releases(ex, i)[0] for i in range(3)] == ["==1.5.1", "<1.4.2", ">=1.4.2,!=1.5.1"]
    shadowed = (Expectation("bug", ("x",), SpecifierSet("<1.6"), None),
                Expectation("bug", ("y",), SpecifierSet("==1.5.1"), None))
    assert effective_releases(shadowed, 1)[0] is None
