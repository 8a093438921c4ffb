"""run, validate and export on script variants, on a tiny corpus of
plain training scripts built in tmp_path (tests/tiny_corpus.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from defects4warp.corpus.case import load_corpus
from defects4warp.run.runner import plan
from tiny_corpus import make_tiny_corpus, make_tiny_script_corpus

ROOT = Path(__file__).resolve().parent.parent


def _cli(*args, timeout=900):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "defects4warp", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def test_export_ships_only_the_users_files(tmp_path):
    from defects4warp.report.export import export_skill_evals

    corpus = make_tiny_script_corpus(tmp_path / "corpus")
    cases, errors = load_corpus(corpus)
    assert errors == []
    doc = export_skill_evals(cases, tmp_path / "out", "1.19.0", programs="scripts")
    assert len(doc["evals"]) == 3
    for ev in doc["evals"]:
        assert ev["program"] == "script"
        names = {Path(f).name for f in ev["files"]}
        assert names == {"train.py"}, ev["files"]
        assert "problem.py" not in ev["prompt"] and "make_problem" not in ev["prompt"]
    by_case = {ev["case"]: ev for ev in doc["evals"]}
    assign = by_case["tiny-script-assign"]
    assert "`python train.py --iters 3`" in assign["prompt"]
    assert assign["run"] == {"entry": "train.py", "args": ["--iters", "3"], "iteration": 1,
                             "command": "python train.py --iters 3"}
    assert assign["expected"]["verdict"] == "no_bug"
    out = tmp_path / "out"
    assert not list(out.rglob("case.yaml")) and not list(out.rglob("problem.py"))
    shipped = (out / assign["files"][0]).read_text()
    assert shipped == (corpus / "tiny-script-assign" / "main" / "train.py").read_text()


def test_export_of_a_converted_case_drops_the_adapter_for_the_script_task(tmp_path):
    from defects4warp.report.export import export_skill_evals

    corpus = make_tiny_corpus(tmp_path / "corpus", ["tiny-cubic"])
    d = corpus / "tiny-cubic"
    (d / "main" / "train.py").write_text("import problem\n\nif __name__ == \"__main__\":\n    pass\n")
    y = (d / "case.yaml").read_text().replace("  domain: harness-tests\n", "  domain: harness-tests\n  form: both\n")
    (d / "case.yaml").write_text(y.replace("variants:", "script:\n  entry: train.py\nvariants:"))
    cases, errors = load_corpus(corpus)
    assert errors == [] and cases[0].form == "both"
    doc = export_skill_evals(cases, tmp_path / "out", "1.19.0", programs="all")
    progs = {ev["program"]: ev for ev in doc["evals"]}
    assert set(progs) == {"adapter", "script"}
    assert progs["adapter"]["id"] != progs["script"]["id"]
    assert sorted(Path(f).name for f in progs["adapter"]["files"]) == ["problem.py", "train.py"]
    assert [Path(f).name for f in progs["script"]["files"]] == ["train.py"]
    assert "make_problem" in progs["adapter"]["prompt"] and "`python train.py`" in progs["script"]["prompt"]


def test_run_gives_script_items_to_engines_that_take_them(tmp_path):
    """A constant engine takes script=; the record says program script and is
    scored against the script variant's expectation. An engine whose
    diagnose() has no script argument gets an error diagnosis that says so."""
    from defects4warp.engines import get_engine
    from defects4warp.run.runner import run as run_items

    corpus = make_tiny_script_corpus(tmp_path / "corpus")
    cases, _ = load_corpus(corpus)
    items = plan(cases, programs="scripts")
    doc = run_items(items, get_engine("always-bug"), warp_version="1.19.0")
    recs = {(r["case"], r["variant"]): r for r in doc["results"]}
    assert all(r["program"] == "script" for r in recs.values())
    assert recs[("tiny-script-inplace", "buggy")]["correct"]["verdict"] is True
    assert recs[("tiny-script-assign", "main")]["correct"]["verdict"] is False
    assert doc["summary"]["verdict_accuracy"] == pytest.approx(1 / 3)

    class Old:
        name, version = "old", "0"

        def diagnose(self, path, device="cpu", scale="small"):
            raise AssertionError("must not be called with a script item")

    doc = run_items(items[:1], Old(), warp_version="1.19.0")
    d = doc["results"][0]["diagnosis"]
    assert d["verdict"] == "error" and "does not accept script variants" in d["error"]


def test_engine_sees_the_users_files_and_the_spec(tmp_path):
    """The engine is given a neutral folder with the user's files only (no
    problem.py, no case.yaml) and the ScriptSpec of the case."""
    from defects4warp.capture import ScriptSpec
    from defects4warp.run.runner import diagnose_item

    corpus = make_tiny_corpus(tmp_path / "corpus", ["tiny-cubic"])
    d = corpus / "tiny-cubic"
    (d / "main" / "train.py").write_text("if __name__ == \"__main__\":\n    pass\n")
    y = (d / "case.yaml").read_text().replace("variants:", "script:\n  entry: train.py\n  args: [\"-n\", \"2\"]\n"
                                              "  iteration: 2\nvariants:")
    (d / "case.yaml").write_text(y)
    cases, errors = load_corpus(corpus)
    assert errors == [] and cases[0].form == "both"
    seen = {}

    class Spy:
        name, version = "spy", "0"

        def diagnose(self, path, device="cpu", scale="small", script=None):
            seen["files"] = sorted(p.name for p in Path(path).iterdir())
            seen["script"] = script
            seen["path"] = path
            return {"verdict": "no_bug", "classes": [{"id": "correct", "score": 1.0}], "signature": None,
                    "evidence": [], "cost": {"wall_s": 0.0, "objective_evals": 0, "gradient_evals": 0,
                                             "device": device}}

    [item] = plan(cases, programs="scripts")
    rec = diagnose_item(Spy(), item, "cpu", "1.19.0")
    assert seen["files"] == ["train.py"]
    assert seen["script"] == ScriptSpec("train.py", ["-n", "2"], 2)
    assert "tiny-cubic" not in seen["path"] and "main" not in Path(seen["path"]).name
    assert rec["program"] == "script" and rec["correct"]["verdict"] is True
    [item] = plan(cases, programs="adapters")
    diagnose_item(Spy(), item, "cpu", "1.19.0")
    assert seen["files"] == ["problem.py", "train.py"] and seen["script"] is None


@pytest.mark.slow
def test_validate_scripts_with_the_oracle(tmp_path):
    """The capture reads each script into a replay record, the oracle replays it and checks it against its
    label: the in-place update is wrong (its pair with the fixed script confirmed), the
    fixed script and the plain fit agree; each oracle measurement reproduced its record exactly. Measured on Warp 1.19.0: buggy
    relative error 0.83 with a pair ratio 1.68; both others agree to < 1e-4."""
    corpus = make_tiny_script_corpus(tmp_path / "corpus")
    out = tmp_path / "v.json"
    res = _cli("validate", "--corpus", str(corpus), "--programs", "scripts", "--results", str(tmp_path / "r"),
               "--json", str(out))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    [rel] = json.loads(out.read_text())["releases"].values()
    checks = {(c["case"], c["variant"]): c for c in rel["checks"]}
    assert rel["counts"] == {"passed": 3, "failed": 0, "unresolved": 0, "skipped": 0, "unsupported": 0}
    buggy = checks[("tiny-script-inplace", "buggy")]
    assert buggy["program"] == "script" and buggy["oracle"]["verdict"] == "wrong"
    assert buggy["pair"]["confirmed"] and buggy["pair"]["same_point"]
    assert 0.3 < buggy["relative_error"] < 3.0
    assert [p["name"] for p in buggy["oracle"]["capture"]["params"]] == ["k"]
    assert buggy["oracle"]["capture"]["entry"] == "train.py"
    for c in checks.values():
        rep = c["oracle"]["replay"]["reproduced"]
        assert rep["objective"][0] == rep["objective"][1] and set(rep["gradient_max_abs_diff"].values()) == {0.0}
    for key in (("tiny-script-inplace", "fixed"), ("tiny-script-assign", "main")):
        assert checks[key]["oracle"]["verdict"] == "agrees" and checks[key]["relative_error"] < 1e-3
    assert "(script)" in res.stdout


def test_mutation_operators_edit_the_users_script(tmp_path):
    """A script variant is a mutation parent as its script: the operators edit
    train.py (and never a problem.py), the mutant folder holds the user's
    files only, and its generated case.yaml carries the script: block."""
    from defects4warp.corpus.case import load_case
    from defects4warp.corpus.mutate.admit import candidates, write_program
    from defects4warp.corpus.mutate.sources import corpus_parents, find_parent
    from defects4warp.corpus.mutate.tier import case_yaml

    corpus = make_tiny_script_corpus(tmp_path / "corpus")
    ps = corpus_parents(corpus, programs="scripts")
    assert [p.id for p in ps] == ["tiny-script-assign/main", "tiny-script-inplace/fixed"]
    assert ps[0].script == {"entry": "train.py", "args": ["--iters", "3"], "iteration": 1, "params": None}
    assert find_parent("tiny-script-assign/main", corpus) == ps[0]
    cands, _ = candidates(ps[:1])
    ops = {c.mutation.operator: c for c in cands}
    assert {"double_backward", "drop_grad_zeroing", "drop_requires_grad"} <= set(ops)
    cand = ops["double_backward"]
    assert set(cand.mutation.sources) == {"train.py"}
    assert cand.mutation.sources["train.py"].count("tape.backward(loss)") == 2
    dest = write_program(cand.parent, cand.mutation, tmp_path / "m" / "buggy")
    assert sorted(p.name for p in dest.iterdir()) == ["train.py"]
    shutil_copy = __import__("shutil").copytree
    shutil_copy(cand.parent.path, tmp_path / "m" / "fixed")
    doc = case_yaml({"id": "m", "class": "double_count", "operator": "double_backward", "parent": cand.parent.id,
                     "site": cand.mutation.site, "releases": ["1.19.0"]}, cand)
    assert doc["script"] == {"entry": "train.py", "args": ["--iters", "3"], "iteration": 1}
    assert doc["tags"]["form"] == "script"
    import yaml

    (tmp_path / "m" / "case.yaml").write_text(yaml.safe_dump(doc))
    c = load_case(tmp_path / "m")
    assert c.form == "script" and [v.form for v in c.variants] == ["script", "script"]

    # a converted variant: its script parent leaves problem.py out of the sources
    conv = make_tiny_corpus(tmp_path / "c2", ["tiny-cubic"])
    d = conv / "tiny-cubic"
    (d / "main" / "train.py").write_text((corpus / "tiny-script-assign" / "main" / "train.py").read_text())
    y = (d / "case.yaml").read_text().replace("variants:", "script:\n  entry: train.py\nvariants:")
    (d / "case.yaml").write_text(y)
    both = corpus_parents(conv, programs="all")
    assert [(p.id, p.script is not None) for p in both] == [("tiny-cubic/main", False), ("tiny-cubic/main#script", True)]
    assert set(both[1].sources()) == {"train.py"} and "problem.py" in both[0].sources()
    assert find_parent("tiny-cubic/main#script", conv) == both[1]


@pytest.mark.slow
def test_admission_of_a_script_mutant(tmp_path):
    """The oracle admits a mutant of a plain script, captured and measured
    against its parent: moving a launch out of the tape (tape_scope) zeroes
    the gradient (measured: signature zero on 4 of 4 items, ratio 0); a
    doubled backward on one tape doubles it (factor 2: the capture's gradient
    is the .grad where the script first uses it, after the second backward)."""
    from defects4warp.envs import installed_warp_version
    from defects4warp.corpus.mutate.admit import admit_one, candidates, measure_parents
    from defects4warp.corpus.mutate.sources import corpus_parents

    corpus = make_tiny_script_corpus(tmp_path / "corpus")
    parents = {p.id: p for p in corpus_parents(corpus, programs="scripts")}
    rel = installed_warp_version()
    docs = measure_parents(list(parents.values()), {rel: None}, jobs=1)
    assert all(docs[(pid, rel)][0]["verdict"] == "agrees" for pid in parents)
    [cand] = candidates([parents["tiny-script-inplace/fixed"]], operators=["statement_out_of_tape"])[0]
    rec = admit_one(cand, docs, {rel: None})
    assert rec["admitted"], rec
    assert rec["oracle"][rel]["signature"]["kind"] == "zero"
    assert rec["oracle"][rel]["ratio_median"] == 0.0
    [cand] = candidates([parents["tiny-script-assign/main"]], operators=["double_backward"])[0]
    rec = admit_one(cand, docs, {rel: None})
    assert rec["admitted"], rec
    assert rec["oracle"][rel]["signature"]["kind"] == "factor"
    assert rec["oracle"][rel]["ratio_median"] == pytest.approx(2.0, rel=1e-3)


def test_matrix_and_audit_keep_script_rows_apart():
    """A converted variant's adapter and script rows are separate rows of the
    matrix and of an audit (labelled ``variant (script)``)."""
    from defects4warp.run.matrix import audit, matrix_markdown

    def rec(program, verdict):
        return {"case": "c", "variant": "buggy", "scale": "small", "program": program,
                "expected": {"verdict": "bug", "classes": ["double_count"]},
                "diagnosis": {"verdict": verdict, "classes": [{"id": "double_count", "score": 1.0}] if verdict == "bug"
                              else [], "cost": {"wall_s": 1.0}, "evidence": []},
                "correct": {"verdict": verdict == "bug", "class": verdict == "bug"}, "seconds": 1.0}

    def check(program):
        return {"case": "c", "variant": "buggy", "scale": "small", "program": program, "status": "passed",
                "expected": {"verdict": "bug", "classes": ["double_count"]}, "oracle": {"verdict": "wrong"},
                "relative_error": 1.0, "ok": True}

    def release(v_script):
        return {"warp_version": "x", "wall_s": 1.0, "validation": [check("adapter"), check("script")],
                "run": {"summary": {"engine": "e", "device": "cpu", "verdict_accuracy": 1.0, "class_accuracy": 1.0,
                                    "detection_rate": 1.0, "false_positive_rate": 0.0},
                        "results": [rec("adapter", "bug"), rec("script", v_script)]}}

    doc = {"releases": {"1.18.0": release("bug"), "1.19.0": release("no_bug")}}
    rep = audit(doc, "1.18.0", "1.19.0")
    assert [(f["variant"], f["from"], f["to"]) for f in rep["verdict_flips"]] == [("buggy (script)", "bug double_count",
                                                                                  "no_bug")]
    text = matrix_markdown(doc)
    assert "| c | buggy |" in text and "| c | buggy (script) |" in text


def test_capture_table_from_conversions_and_a_run(tmp_path):
    """capture-table renders one row per script variant: captured or why not,
    params by site, seconds per capture and re-run from the capture summary,
    seconds per diagnosis and the verdict from the run's script records."""
    from defects4warp.report.capture_table import add_diagnoses, add_validation, document, from_conversions, markdown

    corpus = make_tiny_script_corpus(tmp_path / "corpus")
    cases, _ = load_corpus(corpus)
    summ = {"params": [{"name": "k", "site": "train.py:17", "dtype": "float32", "shape": [4]}],
            "objective": {"kind": "loss", "description": "x"}, "capture_s": 0.5, "rerun_s": 0.125,
            "stochastic": False}
    conv = {"tiny-script-inplace": {"buggy": {"capture": summ}, "fixed": {"capture": None,
                                                                          "error": "script: CaptureError: no backward"}}}
    recs = from_conversions(cases, conv)
    assert [(r["case"], r["variant"], r["captured"]) for r in recs] == [
        ("tiny-script-inplace", "buggy", True), ("tiny-script-inplace", "fixed", False)]
    run_doc = {"summary": {"engine": "reference"}, "results": [
        {"case": "tiny-script-inplace", "variant": "buggy", "scale": "small", "program": "script", "seconds": 12.5,
         "expected": {"verdict": "bug", "classes": ["overwrite"]},
         "diagnosis": {"verdict": "bug", "classes": [{"id": "overwrite", "score": 0.4}],
                       "capture": {"iteration": 1, "first_backward": 2, "backwards_per_iteration": 2,
                                   "iterations": {"loop_iterations": 5, "diagnosed": 2, "checked": [
                                       {"iteration": 1, "status": "agrees"}, {"iteration": 2, "status": "disagrees"}]}}},
         "correct": {"verdict": True, "class": True}},
        {"case": "tiny-script-inplace", "variant": "buggy", "scale": "small", "program": "adapter", "seconds": 99.0,
         "diagnosis": {"verdict": "no_bug", "classes": []}, "correct": None}]}
    add_diagnoses(recs, run_doc)
    add_validation(recs, {"releases": {"1.19.0": {"checks": [
        {"case": "tiny-script-inplace", "variant": "buggy", "scale": "small", "program": "script",
         "status": "passed", "oracle": {"verdict": "wrong"}, "message": "wrong as expected"}]}}})
    assert recs[0]["oracle"] == {"status": "passed", "verdict": "wrong", "message": "wrong as expected"}
    assert recs[0]["diagnosis_s"] == 12.5 and recs[0]["diagnosis"]["class"] == "overwrite"
    assert recs[1]["diagnosis_s"] is None
    doc = document(recs, ["conv.json", "run.json"])
    assert doc["summary"]["captured"] == 1 and doc["summary"]["variants"] == 2
    assert doc["summary"]["median_rerun_s"] == 0.125 and doc["summary"]["verdict_correct"] == 1
    text = markdown(doc)
    assert "| tiny-script-inplace / buggy | `python train.py` | yes | `train.py:17` float32 (4,) | loss | " \
           "2 of 5, 2 backwards; checked 1a 2d | 0.50 | 0.125 | 12.5 | bug overwrite | passed (wrong) |" in text
    assert doc["summary"]["diagnosed_later_iteration"] == 1 and doc["summary"]["several_backwards"] == 1
    assert "| tiny-script-inplace / fixed | `python train.py` | no: script: CaptureError: no backward |" in text
    assert "1 of 2 script variants captured" in text
    assert "the oracle confirms the case's label on 1 of 1 captured scripts" in text


@pytest.mark.slow
def test_run_scripts_with_the_reference_engine(tmp_path):
    """``run --programs scripts`` scores the script variants alone with the
    reference engine (measured on Warp 1.19.0: all three right, the in-place
    update found as overwrite, about 9 s per script on 2 busy cores)."""
    corpus = make_tiny_script_corpus(tmp_path / "corpus")
    out = tmp_path / "run.json"
    res = _cli("run", "--corpus", str(corpus), "--programs", "scripts", "--json", str(out), "--no-store",
               "--results", str(tmp_path / "r"), "--group-by", "program")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    doc = json.loads(out.read_text())
    recs = {(r["case"], r["variant"]): r for r in doc["results"]}
    assert {r["program"] for r in recs.values()} == {"script"}
    assert recs[("tiny-script-inplace", "buggy")]["diagnosis"]["verdict"] == "bug"
    assert recs[("tiny-script-inplace", "buggy")]["diagnosis"]["classes"][0]["id"] == "overwrite"
    assert recs[("tiny-script-inplace", "fixed")]["diagnosis"]["verdict"] == "no_bug"
    assert recs[("tiny-script-assign", "main")]["diagnosis"]["verdict"] == "no_bug"
    assert doc["summary"]["verdict_accuracy"] == 1.0 and doc["summary"]["programs"] == "scripts"
    assert list(doc["summary"]["groups"]) == ["script"]
    assert "(script)" in res.stdout


@pytest.mark.slow
def test_oracle_judges_a_refused_script_on_warps_own_error():
    """A script whose kernels this release refuses to build (1.19.0 refuses
    ``dst[0].x *= s`` with backward enabled) is ``refused`` for the oracle,
    as its adapter is, not an error of the capture: the capture's record says
    it failed, and the oracle, running the script itself, meets Warp's error."""
    from defects4warp.blind import neutral_copy
    from defects4warp.capture.record import record_script
    from defects4warp.envs import installed_warp_version
    from defects4warp.oracle import measure_variant

    from packaging.version import Version

    if Version(installed_warp_version()) < Version("1.18.0"):
        pytest.skip("the refusal starts with Warp 1.18.0")
    case = ROOT / "corpus" / "scanner-axis-scale-calibration" / "buggy"
    with neutral_copy(case, drop=("problem.py",)) as p:
        rec = record_script(p, {"entry": "train.py", "args": ["--points", "24", "--iters", "5"]})
        d = measure_variant(p, replay=rec)
    assert "WarpCodegenError" in rec["error"]["cause"]
    assert d["verdict"] == "refused", d.get("message")
    assert d["failure"]["stage"] == "script" and "WarpCodegenError" in d["message"]
