"""Script variants in the case format: the ``script:`` block, the
``tags.form`` tag, what the loader rejects (naming file and field), and how a
run plans adapter and script programs."""

import copy

import pytest
import yaml

from defects4warp.corpus.case import CaseFormatError, load_case, load_corpus
from defects4warp.run.runner import plan

BASE = {
    "id": "toy-script",
    "title": "A toy script",
    "summary": "The fit stalls.",
    "explanation": "Root cause and fix.",
    "provenance": "original",
    "tags": {"domain": "particles"},
    "script": {"entry": "train.py", "args": ["--iters", "3"]},
    "variants": {
        "buggy": [{"verdict": "bug", "classes": ["double_count"]}],
        "fixed": [{"verdict": "no_bug", "classes": ["correct"]}],
    },
}

TRAIN = "import sys\n\nif __name__ == \"__main__\":\n    print(sys.argv)\n"
ADAPTER = "def make_problem(device, scale='small'):\n    pass\n"


def make(tmp_path, data=None, files=None, name="toy-script"):
    """A case folder: ``files`` maps variant -> file names written there."""
    d = tmp_path / name
    d.mkdir()
    files = files if files is not None else {"buggy": ["train.py"], "fixed": ["train.py"]}
    for v, names in files.items():
        (d / v).mkdir()
        for f in names:
            (d / v / f).write_text(ADAPTER if f == "problem.py" else TRAIN)
    (d / "case.yaml").write_text(yaml.safe_dump(data if data is not None else BASE))
    return d


def with_(**changes):
    data = copy.deepcopy(BASE)
    for k, v in changes.items():
        if v is None:
            data.pop(k, None)
        else:
            data[k] = v
    return data


def test_script_case_loads_and_infers_the_form(tmp_path):
    c = load_case(make(tmp_path))
    assert c.form == "script"
    assert c.script.entry == "train.py" and c.script.args == ("--iters", "3") and c.script.iteration == 1
    assert c.script.params is None
    assert [v.form for v in c.variants] == ["script", "script"]
    assert all(not v.adapter for v in c.variants)
    assert c.script.to_json() == {"entry": "train.py", "args": ["--iters", "3"], "iteration": 1, "params": None}
    assert c.script.command_line() == "python train.py --iters 3"


def test_converted_case_is_both(tmp_path):
    files = {"buggy": ["train.py", "problem.py"], "fixed": ["train.py", "problem.py"]}
    data = with_(tags={"domain": "particles", "form": "both"})
    c = load_case(make(tmp_path, data, files))
    assert c.form == "both"
    assert [v.form for v in c.variants] == ["both", "both"]


def test_plan_chooses_programs(tmp_path):
    files = {"buggy": ["train.py", "problem.py"], "fixed": ["train.py", "problem.py"]}
    both = load_case(make(tmp_path, with_(tags={"domain": "d", "form": "both"}), files, name="toy-script"))
    data = with_(id="toy-only")
    only = load_case(make(tmp_path, data, name="toy-only"))
    cases = [both, only]
    got = {p: [(i.case.id, i.variant.name, i.program) for i in plan(cases, programs=p)]
           for p in ("auto", "adapters", "scripts", "all")}
    assert got["auto"] == [("toy-script", "buggy", "adapter"), ("toy-script", "fixed", "adapter"),
                           ("toy-only", "buggy", "script"), ("toy-only", "fixed", "script")]
    assert got["adapters"] == got["auto"][:2]
    assert got["scripts"] == [("toy-script", "buggy", "script"), ("toy-script", "fixed", "script"),
                              ("toy-only", "buggy", "script"), ("toy-only", "fixed", "script")]
    assert len(got["all"]) == 6
    assert plan(cases, programs="scripts")[0].label == "toy-script/buggy (script)"


def test_script_items_run_at_small_scale_only(tmp_path):
    data = with_()
    data["variants"]["buggy"] = [{"scale": "production", "verdict": "bug", "classes": ["double_count"]},
                                 {"verdict": "no_bug", "classes": ["correct"]}]
    c = load_case(make(tmp_path, data))
    assert [(i.variant.name, i.scale) for i in plan([c], programs="scripts")] == [("buggy", "small"),
                                                                                  ("fixed", "small")]


@pytest.mark.parametrize("data, files, field, text", [
    (with_(script={"args": ["--x"]}), None, "script", "'entry' is a required property"),
    (with_(script={"entry": "train.py", "args": "--iters 3"}), None, "script.args", "is not of type 'array'"),
    (with_(script={"entry": "train.py", "args": ["--iters", 3]}), None, "script.args.1", "is not of type 'string'"),
    (with_(script={"entry": "train.py", "iteration": 0}), None, "script.iteration", "less than the minimum of 1"),
    (with_(script={"entry": "train.py", "iteration": "2"}), None, "script.iteration", "is not of type 'integer'"),
    (with_(script={"entry": "train.sh"}), None, "script.entry", "does not match"),
    (with_(script={"entry": "../train.py"}), None, "script.entry", "inside the variant folder"),
    (with_(script={"entry": "train.py", "params": ["train.py"]}), None, "script.params.0", "does not match"),
    (with_(script={"entry": "train.py", "params": ["model.py:12"]}), None, "script.params.0",
     "names model.py, which variant folder buggy/ does not hold"),
    (with_(script={"entry": "train.py", "extra": 1}), None, "script", "Additional properties"),
    (with_(script={"entry": "train.py", "reference": "twin.py"}), None, "script.reference",
     "'twin.py' is not a file beside case.yaml"),
    (with_(script={"entry": "train.py", "reference": "buggy/train.py"}), None, "script.reference",
     "'buggy/train.py' must be the name of a .py file beside case.yaml"),
    (with_(), {"buggy": ["train.py"], "fixed": ["other.py"]}, "variants.fixed",
     "no folder fixed/ with a problem.py or the script entry train.py"),
    (with_(), {"buggy": ["train.py"], "fixed": ["problem.py"]}, "script.entry",
     "variant folder fixed/ has no file train.py"),
    (with_(), {"buggy": ["train.py"], "fixed": ["train.py"], "other": ["train.py"]}, "variants",
     "folder other/ holds the script entry train.py but has no entry under variants"),
    (with_(tags={"domain": "d", "form": "adapter"}), None, "tags.form", "is 'adapter' but the case has a script:"),
    (with_(tags={"domain": "d", "form": "both"}), None, "tags.form", "hold no problem.py"),
    (with_(tags={"domain": "d", "form": "script"}), {"buggy": ["train.py", "problem.py"], "fixed": ["train.py"]},
     "tags.form", "buggy/ hold a problem.py (tag it 'both')"),
    (with_(tags={"domain": "d", "form": "shell"}), None, "tags.form", "is not one of"),
    (with_(script=None, tags={"domain": "d", "form": "script"}), {"buggy": ["problem.py"], "fixed": ["problem.py"]},
     "script", "no script: block"),
])
def test_script_block_errors_name_file_and_field(tmp_path, data, files, field, text):
    d = make(tmp_path, data, files)
    with pytest.raises(CaseFormatError) as exc:
        load_case(d)
    if field == "script.reference":  # one problem: the variants, which hold the entry, still load
        assert len(exc.value.problems if hasattr(exc.value, "problems") else [exc.value]) == 1, str(exc.value)
    assert exc.value.field == field, str(exc.value)
    assert exc.value.path == d / "case.yaml"
    assert text in str(exc.value)
    assert f"field '{field}'" in str(exc.value)


def test_script_folder_without_case_yaml_is_reported(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "loose" / "main").mkdir(parents=True)
    (corpus / "loose" / "main" / "train.py").write_text(TRAIN)
    cases, errors = load_corpus(corpus)
    assert cases == [] and len(errors) == 1
    assert "holds variant folders but no case.yaml" in str(errors[0])


def test_bundled_converted_cases_hold_both_programs():
    """Every bundled case tagged ``both`` or ``script`` loads, and its
    variants hold what the tag says."""
    from defects4warp.corpus.case import default_corpus

    cases, errors = load_corpus(default_corpus())
    assert errors == []
    for c in cases:
        for v in c.variants:
            assert (v.path / c.script.entry).is_file() if c.form != "adapter" else v.script is None
            assert v.adapter == (c.form != "script"), (c.id, v.name)


def test_the_oracles_reference_stays_out_of_what_an_engine_is_given(tmp_path):
    """``script.reference`` (a file beside case.yaml) is the oracle's: loaded as an absolute path,
    left out of the ScriptSpec fields an engine gets."""
    d = make(tmp_path, with_(script={"entry": "train.py", "reference": "reference.py"}))
    (d / "reference.py").write_text("def reference_gradient(params):\n    return params\n")
    c = load_case(d)
    assert c.script.reference == (d / "reference.py").resolve()
    assert c.script.to_json() == {"entry": "train.py", "args": [], "iteration": 1, "params": None}
    assert not hasattr(c.script.spec(), "reference")


def test_a_reused_validation_is_reported_under_the_names_of_this_run(tmp_path):
    """The result store keys an oracle check by the variant's content: a copy of a case under another id
    (and another variant folder name) reuses the stored check, reported under the copy's names, never
    dropped (it was once filtered out as another case's, leaving 0 checks and exit status 0)."""
    import shutil

    from defects4warp.corpus.case import default_corpus
    from defects4warp.run.store import ResultStore
    from defects4warp.validate import validate_cases

    src = default_corpus() / "seismic-trigger-channel-weights"
    a = tmp_path / "a" / src.name
    shutil.copytree(src, a)
    b = tmp_path / "b" / "trigger-copy"
    shutil.copytree(src, b)
    (b / "program").rename(b / "prog")
    y = yaml.safe_load((b / "case.yaml").read_text())
    y["id"] = "trigger-copy"
    y["variants"] = {"prog": y["variants"]["program"]}
    (b / "case.yaml").write_text(yaml.safe_dump(y, sort_keys=False))
    store = ResultStore(tmp_path / "store")
    stats = {}
    (first,) = validate_cases([load_case(a)], timeout_s=300, store=store, warp="1.19.0", stats=stats)
    (again,) = validate_cases([load_case(b)], timeout_s=300, store=store, warp="1.19.0", stats=stats)
    assert [(v.case, v.variant, v.status) for v in first.variants] == [(src.name, "program", "passed")]
    assert [(v.case, v.variant, v.status) for v in again.variants] == [("trigger-copy", "prog", "passed")]
    assert again.variants[0].relative_error == first.variants[0].relative_error
