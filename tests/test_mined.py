"""The mined tier's records are well-formed and agree with each other (no Warp run).

* every ``provenance: mined`` case has a ``mined:`` record (the loader's schema),
  is in the test split, and its measured releases bracket the fix (a downstream
  case: its buggy and fixed variants differ on the pinned release);
* Warp's changelog table (docs/data/warp-changelog-gradients.yaml) follows its
  schema, accounts for every entry it lists (a case or a reason), and its
  case entries and the mined cases point at each other;
* the manifest has one row per mined case, and its releases agree with the
  case's measured ``buggy_release``/``fixed_release``;
* docs/mined.md is what ``scripts/mined.py render`` writes from these files.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from packaging.version import Version

from defects4warp.corpus.case import load_case

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "harness" / "schemas"


def _mined_cases():
    out = []
    for d in sorted((ROOT / "corpus").iterdir()):
        y = d / "case.yaml"
        if y.is_file() and yaml.safe_load(y.read_text()).get("provenance") == "mined":
            out.append(load_case(d))
    return out


MINED = _mined_cases()
TABLE = yaml.safe_load((ROOT / "docs" / "data" / "warp-changelog-gradients.yaml").read_text())
MANIFEST = yaml.safe_load((ROOT / "docs" / "data" / "mined-manifest.yaml").read_text())


#: SPDX ids of the licences mined code may come under (permissive ones; the variant files keep the notice).
PERMISSIVE = {"Apache-2.0", "MIT", "BSD-3-Clause", "BSD-2-Clause"}


def test_mined_cases_have_their_record():
    assert len(MINED) >= 6
    for c in MINED:
        m = c.mined
        assert c.split == "test", c.id
        # taken code keeps its notice: Apache-2.0 (Warp, Newton, MuJoCo Warp) or another permissive licence (skrl: MIT)
        assert m["files"] and m["licence"] in PERMISSIVE, c.id
        for v in c.variants:
            src = (v.path / "problem.py").read_text()
            assert f"SPDX-License-Identifier: {m['licence']}" in src, f"{c.id}/{v.name}: licence notice missing"
        buggy = c.variant("buggy")
        if "pinned" in m:
            # a downstream fix: the buggy variant is wrong and the fixed one right on the pinned release
            rel = m["pinned"]["warp-lang"]
            assert "buggy_release" not in m and "fixed_release" not in m, c.id
            assert buggy.expectation_for(rel, "small").verdict == "bug", c.id
            assert c.variant("fixed").expectation_for(rel, "small").verdict == "no_bug", c.id
            continue
        assert Version(m["buggy_release"]) < Version(m["fixed_release"]), c.id
        # the buggy variant's expectation flips exactly at the measured first fixed release
        assert buggy.expectation_for(m["buggy_release"], "small").verdict == "bug", c.id
        assert buggy.expectation_for(m["fixed_release"], "small").verdict == "no_bug", c.id


def test_a_mined_provenance_without_its_record_is_rejected(tmp_path):
    src = ROOT / "corpus" / MINED[0].id
    dst = tmp_path / MINED[0].id
    dst.mkdir()
    for v in ("buggy", "fixed"):
        (dst / v).mkdir()
        (dst / v / "problem.py").write_text((src / v / "problem.py").read_text())
    data = yaml.safe_load((src / "case.yaml").read_text())
    del data["mined"]
    (dst / "case.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(Exception, match="mined"):
        load_case(dst)


def test_changelog_table_accounts_for_every_entry():
    jsonschema.validate(TABLE, json.loads((SCHEMAS / "warp-changelog.schema.json").read_text()))
    ids = [e["id"] for e in TABLE["entries"]]
    assert len(ids) == len(set(ids))
    by_case = {c.id: c for c in MINED}
    for e in TABLE["entries"]:
        if e["status"] == "case":
            c = by_case.get(e["case"])
            assert c is not None, f"{e['id']}: no mined case {e['case']}"
            assert c.mined["changelog"] == e["id"]
            assert e["first_fixed"] == c.mined["fixed_release"] and e["last_buggy"] == c.mined["buggy_release"]
        else:
            assert e["reason"].strip(), e["id"]
    for c in MINED:
        if c.mined.get("changelog"):
            assert c.mined["changelog"] in ids, c.id


def test_manifest_matches_the_cases():
    jsonschema.validate(MANIFEST, json.loads((SCHEMAS / "mined-manifest.schema.json").read_text()))
    rows = {r["case"]: r for r in MANIFEST["bugs"]}
    assert sorted(rows) == sorted(c.id for c in MINED)
    for c in MINED:
        r = rows[c.id]
        if "pinned" in c.mined:
            assert r["source"] == "downstream", c.id
            assert c.mined["pinned"]["warp-lang"] in r["before"] and c.mined["pinned"]["warp-lang"] in r["after"], c.id
            continue
        assert r["source"] == "warp", c.id
        assert r["before"][-1] == c.mined["buggy_release"], c.id
        assert r["after"][0] == c.mined["fixed_release"], c.id
        assert r.get("changelog") == c.mined.get("changelog"), c.id


def test_mined_page_is_current():
    spec = importlib.util.spec_from_file_location("mined_script", ROOT / "scripts" / "mined.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (ROOT / "docs" / "mined.md").read_text() == mod.render(), "run: python scripts/mined.py render"


def test_engine_runs_on_the_tier_are_summarised_per_engine_and_release(tmp_path):
    spec = importlib.util.spec_from_file_location("mined_script", ROOT / "scripts" / "mined.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = [{"case": "warp-x", "variant": "buggy", "tier": "mined", "expected": {"verdict": "bug"},
            "diagnosis": {"verdict": "no_bug", "classes": [{"id": "correct"}]}, "correct": {"verdict": False, "class": False}}]
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"summary": {"engine": "fd-only", "warp_version": "1.13.0", "scored": 1,
                                         "detection_rate": 0.0, "false_positive_rate": None, "class_accuracy": 0.0},
                             "results": res}))
    prev = {"engines": {"reference": {"1.1.0": {"scored": 3, "runs": []}}}}
    out = mod.summarise_runs([str(f)], prev)
    assert out["engines"]["reference"]["1.1.0"]["scored"] == 3  # kept from the committed file
    got = out["engines"]["fd-only"]["1.13.0"]
    assert got["detection_rate"] == 0.0 and got["runs"][0]["top"] == "correct" and got["runs"][0]["expected"] == "bug"
    f.write_text(json.dumps({"summary": {}, "results": [dict(res[0], tier="original")]}))
    with pytest.raises(SystemExit, match="not mined"):
        mod.summarise_runs([str(f)])


def test_every_mined_case_is_admitted_with_its_debug_runs():
    """docs/data/mined-checks.json holds, for every manifest row, triggering runs all as
    expected and one passed debug-mode run per variant (scripts/mined.py verify /
    verify-debug; a program indexing out of bounds fails there)."""
    checks = json.loads((ROOT / "docs" / "data" / "mined-checks.json").read_text())["cases"]
    for r in MANIFEST["bugs"]:
        c = checks.get(r["case"])
        assert c is not None, f"{r['case']}: no checks recorded (python scripts/mined.py verify --cases {r['case']})"
        variants = {v.name for v in load_case(ROOT / "corpus" / r["case"]).variants}
        assert set(c.get("debug", {})) == variants, f"{r['case']}: debug-mode runs missing"
        assert all(d["passed"] for d in c["debug"].values()), f"{r['case']}: a debug-mode run failed"
        for side in ("before", "after"):
            assert sorted(c[side]) == sorted(r[side]), (r["case"], side)
            assert all(v["as_expected"] == v["runs"] == 3 for v in c[side].values()), (r["case"], side)
        assert c["ok"], r["case"]
