"""The evidence table is schema-checked, with class enums taken from the taxonomy, and holds the
interpretation that used to be constants in code: refusals and the releases' changelog entries."""

import copy
import json
import re

import pytest
import yaml

from defects4warp.engines.base import refusal_of
from defects4warp.engines.assess.release import assess_differential
from defects4warp.evidence_table import TABLE_PATH, EvidenceTableError, load_table, table_schema
from defects4warp.program_audit import refusal
from defects4warp.taxonomy import BUG_CLASSES, CLASSES

LIVE = yaml.safe_load(TABLE_PATH.read_text(encoding="utf-8"))


def _write(tmp_path, doc, name="t.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return p


def test_schema_class_enums_are_the_taxonomys():
    s = table_schema()
    assert s["$defs"]["class_id"]["enum"] == sorted(CLASSES)
    assert s["$defs"]["bug_class_id"]["enum"] == sorted(BUG_CLASSES)


def test_live_table_loads_with_its_refusals_and_release_changes():
    t = load_table()
    assert [(p.pattern, c) for p, c in t.refusals] == [
        ("augmented assignments? .*not supported with backward", ("inplace_math",)),
        ("WarpCodegenError", ("inplace_math", "warp_adjoint_bug"))]
    assert sorted(t.release_changes) == ["1.13.0", "1.14.0", "1.15.0", "1.16.0", "1.17.0", "1.18.0", "1.19.0"]
    # every changelog release has its evidence row and every such row its changelog entry
    rows = {eid.split(":")[1] for eid in t.rows if eid.startswith("release_first_change:")}
    assert rows == set(t.release_changes)


@pytest.mark.parametrize("edit, where", [
    (lambda d: d["rows"][3].update({"class": "overwritten"}), "rows/3/class (signature:nan_inf): 'overwritten' is not a class of the taxonomy"),
    (lambda d: d["rows"][0].pop("source"), "rows/0 (signature:nan_inf): 'source' is a required property"),
    (lambda d: d["rows"][1].update({"mode": "sum"}), "rows/1/mode (signature:nan_inf): 'sum' is not one of"),
    (lambda d: d["refusals"][0]["classes"].append("correct"), "refusals/0/classes/1: 'correct' is not one of"),
    (lambda d: d["refusals"][1].update({"flags": ["VERBOSE"]}), "refusals/1/flags/0"),
    (lambda d: d["release_changes"].update({"next": "x"}), "release_changes: 'next' does not match"),
    (lambda d: d.update({"scores": "max"}), "scores: 'max' is not one of"),
])
def test_a_broken_table_is_refused_naming_the_field(tmp_path, edit, where):
    doc = copy.deepcopy(LIVE)
    edit(doc)
    with pytest.raises(EvidenceTableError) as e:
        load_table(_write(tmp_path, doc))
    assert where in str(e.value)
    assert str(tmp_path / "t.yaml") in str(e.value)


@pytest.mark.parametrize("edit, where", [
    (lambda d: d["rows"].__setitem__(0, "signature:nan_inf"), "rows/0: 'signature:nan_inf' is not of type 'object'"),
    (lambda d: d["release_changes"].update({1.2: "x"}), "release_changes: key 1.2 is a float, not a release"),
    (lambda d: d["rows"][2].update({"weight": float("nan")}), "rows/2/weight (signature:nan_inf): nan is not a finite"),
    (lambda d: d["rows"].append(dict(d["rows"][0])), "a second row for class 'nonsmooth_nan' (the first is rows/0)"),
    (lambda d: d["rows"][1].update({"mode": "lift"}), "rows/1 (signature:nan_inf): mode 'lift', but rows/0"),
    (lambda d: d["release_changes"].pop("1.16.0"), "rows: release_first_change:1.16.0 has no changelog entry"),
    (lambda d: d["release_changes"].update({"1.20.0": "x"}), "release_changes/1.20.0: no row release_first_change"),
    (lambda d: d.update({"rows": []}), "rows: [] should be non-empty"),
])
def test_what_the_schema_cannot_say_is_refused_too(tmp_path, edit, where):
    doc = copy.deepcopy(LIVE)
    edit(doc)
    with pytest.raises(EvidenceTableError, match=re.escape(where)):
        load_table(_write(tmp_path, doc))


def test_every_problem_is_listed_rows_in_number_order(tmp_path):
    doc = copy.deepcopy(LIVE)
    for i in (10, 2):
        doc["rows"][i]["mode"] = "sum"
    with pytest.raises(EvidenceTableError) as e:
        load_table(_write(tmp_path, doc))
    text = str(e.value)
    assert "2 problems:" in text and text.index("rows/2/mode") < text.index("rows/10/mode")


@pytest.mark.parametrize("content, where", [
    (None, "cannot read the evidence table: FileNotFoundError"),
    (b"rows: [a, b\n", "not valid YAML"),
    (b"\xff\xfe rows", "cannot read the evidence table: UnicodeDecodeError"),
    (b"", "(top level): None is not of type 'object'"),
])
def test_an_unreadable_table_is_named(tmp_path, content, where):
    p = tmp_path / "t.yaml"
    if content is not None:
        p.write_bytes(content)
    with pytest.raises(EvidenceTableError, match=re.escape(where)):
        load_table(p)


def test_a_refusal_pattern_that_does_not_compile_is_refused(tmp_path):
    doc = copy.deepcopy(LIVE)
    doc["refusals"][0]["pattern"] = "augmented (assignment"
    with pytest.raises(EvidenceTableError, match=r"refusals/0/pattern: missing \), unterminated subpattern"):
        load_table(_write(tmp_path, doc))


def test_refusals_and_changelog_entries_are_read_from_the_table(tmp_path):
    """Editing the table changes what the engine calls a refusal and which change it cites: no
    constant in code decides either."""
    doc = copy.deepcopy(LIVE)
    doc["refusals"] = [{"pattern": "kernel too wide", "flags": ["IGNORECASE"], "classes": ["dynamic_loop"],
                        "source": "test"}]
    doc["release_changes"]["1.16.0"] = "loops fixed (test entry)"
    del doc["release_changes"]["1.18.0"]  # and its rows: a release without a changelog entry
    doc["rows"] = [r for r in doc["rows"] if not r["id"].startswith("release_first_change:1.18.0")]
    t = load_table(_write(tmp_path, doc))
    failed = {"errors": [{"probe": "load", "error": "RuntimeError: Kernel too WIDE for this release\nmore"}]}
    assert refusal_of(failed, t) == ("RuntimeError: Kernel too WIDE for this release", ["dynamic_loop"])
    codegen = {"errors": [{"probe": "load", "error": "WarpCodegenError: augmented assignments are not supported "
                                                      "with backward"}]}
    assert refusal_of(codegen, t) is None
    assert refusal_of(codegen)[1] == ["inplace_math"]  # the live table's first refusal
    diff = {"current": "1.19.0", "other": "1.12.1", "first_change": "1.16.0", "bracket": ["1.15.0", "1.16.0"],
            "compared": {"1.12.1": {"gradient_changed": True, "objective_same": True, "relative_change": 0.5,
                                    "b_agrees": True}}}
    a = assess_differential(diff, copies=0, table=t)
    assert "first release where it changes: 1.16.0 (loops fixed (test entry))" in a.evidence[0]["finding"]
    assert [c.id for c in a.cited] == ["release_first_change:1.16.0"]
    diff["first_change"] = "1.18.0"  # not a changelog release of this table
    assert [c.id for c in assess_differential(diff, copies=0, table=t).cited] == ["release_changed"]


def test_program_audit_refusal_uses_the_tables_patterns():
    text = "Traceback ...\nwarp.codegen.WarpCodegenError: Error while parsing function\nIn function 'step' (x.py:12)"
    assert refusal(text) == "In function 'step' (x.py:12)"
    assert refusal("ValueError: shapes differ") is None


def test_the_diagnosis_schema_takes_its_classes_from_the_taxonomy():
    from defects4warp.engines.base import check_diagnosis, diagnosis_schema

    assert diagnosis_schema()["properties"]["classes"]["items"]["properties"]["id"]["enum"] == sorted(CLASSES)
    diag = {"verdict": "bug", "classes": [{"id": "overwritten", "score": 1.0}], "signature": "zero", "evidence": [],
            "cost": {"wall_s": 0.1, "objective_evals": 1, "gradient_evals": 1, "device": "cpu"}}
    assert check_diagnosis(diag).startswith("classes.0.id: 'overwritten' is not one of ['backward_disabled'")
    diag["classes"][0]["id"] = "overwrite"
    assert check_diagnosis(diag) is None


def test_a_broken_table_is_one_line_and_exit_status_2_on_the_command_line(tmp_path, monkeypatch):
    """Any verb that reads the broken table ends with the loader's message on standard error and status 2,
    no traceback; ``--version`` and ``list`` never read it."""
    import click
    from click.testing import CliRunner

    from defects4warp import evidence_table
    from defects4warp.cli import main
    from defects4warp.commands._common import MainGroup

    doc = copy.deepcopy(LIVE)
    doc["rows"][0]["class"] = "nonsmoth_nan"
    monkeypatch.setattr(evidence_table, "TABLE_PATH", _write(tmp_path, doc))
    evidence_table.clear_cache()

    @click.group(cls=MainGroup)
    def group():
        pass

    @group.command()
    def interpret():
        load_table()

    r = CliRunner().invoke(group, ["interpret"])
    assert r.exit_code == 2
    assert r.output.splitlines() == [f"defects4warp: the evidence table is broken: {tmp_path / 't.yaml'}: rows/0/class "
                                     "(signature:nan_inf): 'nonsmoth_nan' is not a class of the taxonomy "
                                     "(harness/taxonomy.py) nor '*'"]
    assert CliRunner().invoke(main, ["--version"]).exit_code == 0
    assert CliRunner().invoke(main, ["list"]).exit_code == 0


def test_the_table_reads_as_the_pure_python_loader_reads_it():
    """_read uses PyYAML's C loader where there is one: the live table is the same document as
    yaml.safe_load (pure Python) makes of it."""
    from defects4warp.evidence_table import _read

    assert _read(str(TABLE_PATH)) == LIVE and json.dumps(_read(str(TABLE_PATH))) == json.dumps(LIVE)
