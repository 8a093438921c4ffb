"""`export --format skill-evals` round-trips: every file present, ids unique, no label inside the files."""

import json
import re

from defects4warp.blind import hint_findings
from defects4warp.case import default_corpus, load_corpus
from defects4warp.export import export_skill_evals
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
        assert case.summary in e["prompt"]
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
