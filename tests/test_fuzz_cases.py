"""Fuzzing the case loader and schema with hypothesis: malformed case.yaml
files and variant folders each give exactly one clear :class:`CaseFormatError`
naming the file (and the field where there is one), never a traceback, and
the valid case next to them still loads. Nothing here runs Warp."""

import os
import shutil
from pathlib import Path

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from defects4warp.corpus.case import MAX_CASE_YAML_BYTES, CaseFormatError, load_corpus
from defects4warp.cli import main

#: Generated examples per property (the issue asks for at least 200 malformed inputs in all).
EXAMPLES = 120

VALID = {
    "id": "PLACEHOLDER",
    "title": "A valid case",
    "summary": "The fit converges.",
    "explanation": "Nothing is wrong.",
    "provenance": "original",
    "tags": {"domain": "fuzzing", "features": ["kernel"]},
    "variants": {"buggy": [{"verdict": "bug", "classes": ["overwrite"]}],
                 "fixed": [{"verdict": "no_bug", "classes": ["correct"], "warp": ">=1.12"}]},
}

PROBLEM = "def make_problem(device, scale='small'):\n    raise RuntimeError('not run by these tests')\n"

REQUIRED = ["id", "title", "summary", "explanation", "provenance", "tags", "variants"]

JUNK_VALUES = st.one_of(st.integers(), st.floats(allow_nan=True), st.booleans(), st.none(),
                        st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
                        st.text(max_size=20))


def write_case(root: Path, cid: str, data, variants=("buggy", "fixed")) -> Path:
    d = root / cid
    d.mkdir(parents=True)
    for v in variants:
        (d / v).mkdir()
        (d / v / "problem.py").write_text(PROBLEM)
    if isinstance(data, bytes):
        (d / "case.yaml").write_bytes(data)
    elif isinstance(data, str):
        (d / "case.yaml").write_text(data)
    else:
        (d / "case.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return d


def valid(cid):
    d = yaml.safe_load(yaml.safe_dump(VALID))
    d["id"] = cid
    return d


# --- mutations of case.yaml ------------------------------------------------

@st.composite
def broken_yaml(draw):
    """(case.yaml content, field the error must name or None)."""
    kind = draw(st.sampled_from(["drop", "retype", "unknown_class", "bad_spec", "bad_verdict", "extra_key",
                                 "bad_variant_name", "empty_variants", "bad_scale", "verdict_class_mismatch",
                                 "junk_bytes", "bad_yaml", "not_mapping", "id_mismatch", "bad_requires"]))
    d = valid("broken")
    field = None
    if kind == "drop":
        field = draw(st.sampled_from(REQUIRED))
        del d[field]
        field = ""  # a missing property is reported at the object holding it
    elif kind == "retype":
        field = draw(st.sampled_from(["title", "summary", "tags", "variants", "provenance", "id"]))
        d[field] = draw(JUNK_VALUES.filter(lambda v: not isinstance(v, (str, dict)) or field in ("tags", "variants")))
        if field in ("tags", "variants") and isinstance(d[field], dict):
            d[field] = 17
    elif kind == "unknown_class":
        d["variants"]["buggy"][0]["classes"] = [draw(st.text(alphabet="abcdefghij_", min_size=1, max_size=12)
                                                     .filter(lambda s: s not in ("overwrite",)))]
        field = "variants.buggy.0.classes"
    elif kind == "bad_spec":
        d["variants"]["fixed"][0]["warp"] = draw(st.sampled_from(["1.12", "=>1.0", ">=one", "~~1", "<", "1.12.1,", ">=1.0 <2"]))
        field = "variants.fixed.0.warp"
    elif kind == "bad_verdict":
        d["variants"]["buggy"][0]["verdict"] = draw(st.sampled_from(["maybe", "BUG", "", "yes"]))
        field = "variants.buggy.0.verdict"
    elif kind == "extra_key":
        d[draw(st.sampled_from(["colour", "Title", "variant", "expected"]))] = 1
        field = ""
    elif kind == "bad_variant_name":
        d["variants"][draw(st.sampled_from(["../up", "a b", "-x", "/abs"]))] = [{"verdict": "bug", "classes": ["overwrite"]}]
        field = "variants"
    elif kind == "empty_variants":
        d["variants"] = draw(st.sampled_from([{}, {"buggy": []}]))
        field = "variants"
    elif kind == "bad_scale":
        d["variants"]["buggy"][0]["scale"] = draw(st.sampled_from(["huge", 3, ""]))
        field = "variants.buggy.0.scale"
    elif kind == "verdict_class_mismatch":
        d["variants"]["fixed"][0]["classes"] = ["overwrite"]
        field = "variants.fixed.0.classes"
    elif kind == "junk_bytes":
        return draw(st.binary(min_size=1, max_size=200)), None
    elif kind == "bad_yaml":
        return draw(st.sampled_from(["id: [unclosed", "a: b: c", "\t- x", "key: 'open", "{a: 1", "- [1, 2\n"])), ""
    elif kind == "not_mapping":
        return yaml.safe_dump(draw(st.one_of(st.lists(st.integers(), max_size=3), st.integers(), st.text(max_size=5)))), ""
    elif kind == "id_mismatch":
        d["id"] = "another-id"
        field = "id"
    elif kind == "bad_requires":
        d["requires"] = draw(st.sampled_from([["os; rm"], "numpy", [1]]))
        field = "requires"
    return yaml.safe_dump(d, sort_keys=False), field


def check_one_clear_error(root: Path, broken: Path, field):
    cases, errors = load_corpus(root)
    assert [c.id for c in cases] == ["good"]
    assert len(errors) == 1, errors
    (err,) = errors
    assert isinstance(err, CaseFormatError)
    text = str(err)
    assert str(broken) in text  # names the file or folder
    assert "Traceback" not in text
    if field:
        assert err.field.startswith(field.split(".")[0]), (err.field, field, text)
    return err


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(broken_yaml())
def test_malformed_case_yaml_gives_one_clear_error(tmp_path_factory, bad):
    content, field = bad
    root = tmp_path_factory.mktemp("corpus")
    write_case(root, "good", valid("good"))
    d = write_case(root, "broken", content)
    check_one_clear_error(root, d, field)


# --- mutations of the folders -----------------------------------------------

@st.composite
def broken_folder(draw):
    return draw(st.sampled_from(["missing_variant", "undeclared_variant", "symlink_yaml_out", "symlink_variant_out",
                                 "symlink_file_out", "symlink_case_out", "huge_yaml", "huge_file", "fifo",
                                 "dangling_symlink", "problem_is_folder"])), draw(st.integers(0, 3))


def test_hypothesis_examples_reach_200():
    assert 2 * EXAMPLES >= 200


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(broken_folder())
def test_malformed_variant_folders_give_one_clear_error(tmp_path_factory, bad):
    kind, k = bad
    base = tmp_path_factory.mktemp("fuzz")
    root = base / "corpus"
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x = 1\n")
    (outside / "case.yaml").write_text(yaml.safe_dump(valid("broken")))
    (outside / "v").mkdir()
    (outside / "v" / "problem.py").write_text(PROBLEM)
    write_case(root, "good", valid("good"))
    d = write_case(root, "broken", valid("broken"))
    target, field = d, None
    if kind == "missing_variant":
        shutil.rmtree(d / "fixed")
        field = "variants.fixed"
    elif kind == "undeclared_variant":
        (d / f"extra{k}").mkdir()
        (d / f"extra{k}" / "problem.py").write_text(PROBLEM)
        field = "variants"
    elif kind == "symlink_yaml_out":
        (d / "case.yaml").unlink()
        (d / "case.yaml").symlink_to(outside / "case.yaml")
        target = d / "case.yaml"
    elif kind == "symlink_variant_out":
        shutil.rmtree(d / "buggy")
        (d / "buggy").symlink_to(outside / "v")
        target, field = d / "buggy", "variants.buggy"
    elif kind == "symlink_file_out":
        (d / "fixed" / "helper.py").symlink_to(outside / "secret.py")
        target, field = d / "fixed" / "helper.py", "variants.fixed"
    elif kind == "symlink_case_out":
        shutil.rmtree(d)
        d.symlink_to(outside)
        target = d
    elif kind == "huge_yaml":
        (d / "case.yaml").write_text("title: " + "x" * (MAX_CASE_YAML_BYTES + 1 + k) + "\n")
        target = d / "case.yaml"
    elif kind == "huge_file":
        with open(d / "buggy" / "data.bin", "wb") as f:
            f.truncate((16 << 20) + 1 + k)  # sparse: no real disk used
        target, field = d / "buggy" / "data.bin", "variants.buggy"
    elif kind == "fifo":
        os.mkfifo(d / "buggy" / "pipe")
        target, field = d / "buggy" / "pipe", "variants.buggy"
    elif kind == "dangling_symlink":
        (d / "fixed" / "gone.py").symlink_to(base / "nowhere.py")
        target, field = d / "fixed" / "gone.py", "variants.fixed"
    elif kind == "problem_is_folder":
        (d / "buggy" / "problem.py").unlink()
        (d / "buggy" / "problem.py").mkdir()
        field = "variants.buggy"
    check_one_clear_error(root, target, field)


def test_cli_names_the_broken_case_and_runs_the_others(tmp_path):
    write_case(tmp_path, "good", valid("good"))
    write_case(tmp_path, "broken", b"\xff\xfe\x00junk")
    out = tmp_path / "o.json"
    res = CliRunner().invoke(main, ["run", "--corpus", str(tmp_path), "--engine", "always-bug", "--json", str(out)])
    assert res.exit_code == 1
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "broken/case.yaml" in res.output and "not UTF-8" in res.output
    import json

    doc = json.loads(out.read_text())
    assert [r["case"] for r in doc["results"]] == ["good", "good"]
