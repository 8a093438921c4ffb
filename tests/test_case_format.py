"""Case loading: valid cases load, every violation names the file and field."""

import pytest
import yaml

from defects4warp.corpus.case import CaseFormatError, case_schema, load_case, load_corpus
from defects4warp.taxonomy import BUG_CLASSES, CLASSES, NO_BUG_CLASSES

VALID = {
    "id": "toy-case",
    "title": "A toy",
    "summary": "The fit stalls.",
    "explanation": "Root cause and fix.",
    "provenance": "original",
    "tags": {"domain": "particles", "features": ["tape"]},
    "variants": {
        "buggy": [
            {"warp": "<1.17", "verdict": "bug", "classes": ["copy_adjoint"]},
            {"warp": ">=1.17", "verdict": "no_bug", "classes": ["correct"]},
        ],
        "fixed": [{"verdict": "no_bug", "classes": ["correct"]}],
    },
}


def make_case(tmp_path, data=None, name="toy-case", variants=("buggy", "fixed"), raw=None):
    d = tmp_path / name
    d.mkdir()
    for v in variants:
        (d / v).mkdir()
        (d / v / "problem.py").write_text("def make_problem(device, scale='small'):\n    pass\n")
    (d / "case.yaml").write_text(raw if raw is not None else yaml.safe_dump(data or VALID))
    return d


def test_valid_case_loads(tmp_path):
    c = load_case(make_case(tmp_path))
    assert c.id == "toy-case"
    assert c.domain == "particles"
    assert c.split == "dev"
    assert [v.name for v in c.variants] == ["buggy", "fixed"]
    assert c.classes == ["copy_adjoint", "correct"]


def test_first_matching_expectation_wins(tmp_path):
    buggy = load_case(make_case(tmp_path)).variant("buggy")
    assert buggy.expectation_for("1.16.0", "small").verdict == "bug"
    assert buggy.expectation_for("1.17.0", "small").verdict == "no_bug"
    assert buggy.expectation_for("1.19.0", "production").classes == ("correct",)


def test_scale_restricts_expectation(tmp_path):
    data = yaml.safe_load(yaml.safe_dump(VALID))
    data["variants"]["buggy"] = [{"scale": "production", "verdict": "bug", "classes": ["overwrite"]}]
    v = load_case(make_case(tmp_path, data)).variant("buggy")
    assert v.expectation_for("1.19.0", "production").verdict == "bug"
    assert v.expectation_for("1.19.0", "small") is None


@pytest.mark.parametrize(
    "mutate, field, text",
    [
        (lambda d: d.pop("summary"), "", "'summary' is a required property"),
        (lambda d: d.update(provenance="somewhere"), "provenance", "does not match"),
        (lambda d: d["variants"]["fixed"][0].update(classes=["not_a_class"]), "variants.fixed.0.classes.0", "is not one of"),
        (lambda d: d["variants"]["fixed"][0].update(verdict="maybe"), "variants.fixed.0.verdict", "is not one of"),
        (lambda d: d["variants"]["fixed"][0].update(classes=["overwrite"]), "variants.fixed.0.classes", "does not fit verdict"),
        (lambda d: d["variants"]["buggy"][0].update(warp="~=banana"), "variants.buggy.0.warp", "not a PEP 440 specifier"),
        (lambda d: d.update(id="other-name"), "id", "differs from the folder name"),
        (lambda d: d["tags"].pop("domain"), "tags", "'domain' is a required property"),
        (lambda d: d.update(colour="red"), "", "Additional properties"),
    ],
)
def test_violations_name_file_and_field(tmp_path, mutate, field, text):
    data = yaml.safe_load(yaml.safe_dump(VALID))
    mutate(data)
    d = make_case(tmp_path, data)
    with pytest.raises(CaseFormatError) as exc:
        load_case(d)
    assert exc.value.field == field
    assert exc.value.path == d / "case.yaml"
    assert text in str(exc.value)
    assert str(d / "case.yaml") in str(exc.value)


def test_broken_yaml_reports_line(tmp_path):
    d = make_case(tmp_path, raw="id: toy-case\ntitle: [unclosed\n")
    with pytest.raises(CaseFormatError, match=r"line \d+"):
        load_case(d)


def test_variant_folder_without_entry(tmp_path):
    d = make_case(tmp_path, variants=("buggy", "fixed", "extra"))
    with pytest.raises(CaseFormatError, match="extra/ holds a problem.py"):
        load_case(d)


def test_entry_without_folder(tmp_path):
    d = make_case(tmp_path, variants=("buggy",))
    with pytest.raises(CaseFormatError) as exc:
        load_case(d)
    assert exc.value.field == "variants.fixed"


def test_corpus_collects_errors_and_goes_on(tmp_path):
    make_case(tmp_path)
    make_case(tmp_path, name="broken", raw="{{{")
    cases, errors = load_corpus(tmp_path)
    assert [c.id for c in cases] == ["toy-case"]
    assert len(errors) == 1 and "broken" in str(errors[0])


def test_schema_lists_exactly_the_taxonomy():
    enum = case_schema()["$defs"]["expectation"]["properties"]["classes"]["items"]["enum"]
    assert enum == sorted(CLASSES)
    assert BUG_CLASSES | NO_BUG_CLASSES == set(CLASSES)
    assert "correct" in NO_BUG_CLASSES and "overwrite" in BUG_CLASSES


def test_bundled_corpus_loads_without_errors():
    from defects4warp.corpus.case import default_corpus

    cases, errors = load_corpus(default_corpus())
    assert errors == []
    assert len(cases) >= 12
    # a case with a bug (or a refusal) on some release has the defective program and its fix; a
    # program written elsewhere stands alone as `program/`, labelled by what the oracle measures
    # (correct, or a bug nobody here fixed)
    for c in cases:
        names = {v.name for v in c.variants}
        has_bug = any(e.verdict in ("bug", "refused") for v in c.variants for e in v.expectations)
        if names == {"program"}:
            continue
        if has_bug:
            assert {"buggy", "fixed"} <= names, c.id
        else:
            assert all(e.verdict == "no_bug" for v in c.variants for e in v.expectations), c.id


def test_non_utf8_case_yaml_is_a_format_error(tmp_path):
    d = make_case(tmp_path)
    (d / "case.yaml").write_bytes("id: toy-case\ntitle: caf\xe9\n".encode("latin-1"))
    with pytest.raises(CaseFormatError, match="not UTF-8"):
        load_case(d)


def test_folder_with_variants_but_no_case_yaml_is_reported(tmp_path):
    d = make_case(tmp_path)
    (d / "case.yaml").rename(d / "case.yml")
    cases, errors = load_corpus(tmp_path)
    assert cases == [] and "no case.yaml" in str(errors[0])


def test_every_schema_error_is_shown_with_its_field(tmp_path):
    data = yaml.safe_load(yaml.safe_dump(VALID))
    data.pop("summary")
    data["provenance"] = "somewhere"
    data["variants"]["fixed"][0]["verdict"] = "maybe"
    data["id"] = "other-name"
    d = make_case(tmp_path, data)
    with pytest.raises(CaseFormatError) as exc:
        load_case(d)
    fields = [p.field for p in exc.value.problems]
    assert sorted(fields) == sorted(["", "provenance", "variants.fixed.0.verdict", "id"])
    text = str(exc.value)
    assert text.startswith(f"4 problems in {d / 'case.yaml'}:")
    for line, want in [("field 'provenance'", "does not match"), ("field 'variants.fixed.0.verdict'", "is not one of"),
                       ("field 'id'", "differs from the folder name"), ("- 'summary'", "required property")]:
        assert any(line in ln and want in ln for ln in text.splitlines()), (line, text)


def test_every_cross_field_error_is_shown(tmp_path):
    data = yaml.safe_load(yaml.safe_dump(VALID))
    data["variants"]["fixed"][0]["classes"] = ["overwrite"]
    data["variants"]["buggy"][0]["warp"] = "~=banana"
    data["variants"]["gone"] = [{"verdict": "no_bug", "classes": ["correct"]}]
    data["min_warp"] = {"nosuch": "1.2.0"}
    d = make_case(tmp_path, data, variants=("buggy", "fixed", "extra"))
    with pytest.raises(CaseFormatError) as exc:
        load_case(d)
    assert sorted(p.field for p in exc.value.problems) == sorted(
        ["variants.gone", "variants", "min_warp.nosuch", "variants.buggy.0.warp", "variants.fixed.0.classes"])
    assert all(p.path == d / "case.yaml" for p in exc.value.problems)


def test_cli_lists_each_problem(tmp_path):
    from click.testing import CliRunner

    from defects4warp.cli import main

    data = yaml.safe_load(yaml.safe_dump(VALID))
    data["provenance"] = "somewhere"
    data["variants"]["fixed"][0]["verdict"] = "maybe"
    make_case(tmp_path, data)
    r = CliRunner().invoke(main, ["list", "--corpus", str(tmp_path)])
    out = " ".join(r.output.split())
    assert "2 problems in" in out
    assert "field 'provenance'" in out and "field 'variants.fixed.0.verdict'" in out
