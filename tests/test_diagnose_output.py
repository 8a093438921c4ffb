"""What `defects4warp diagnose` prints for the evidence: a finding counted against correctness is
marked `!!`, one reported but not counted (a source finding in code that did not run, on another
release, or observed by the runtime trace instead) `--`, a clean one `ok`."""

from pathlib import Path

from click.testing import CliRunner

from defects4warp.cli import main

PROGRAMS = Path(__file__).resolve().parent / "programs"
ROOT = Path(__file__).resolve().parents[1]


def test_uncounted_findings_are_not_marked_like_counted_ones(monkeypatch, tmp_path):
    import defects4warp.engines.base as base
    from defects4warp.engines.assess import Assessment

    a = Assessment()  # the entries exactly as harness/engines/assess/source.py's assess() writes them
    a.add("source", False, "train.py:12: .grad read before backward() (not in code that ran during gradient())",
          {"rule": "grad_read_before_backward", "classes": ["stale_gradient_read"], "counted": False})
    a.add("source", False, "train.py:30: x *= 2 on an array", {"rule": "inplace_array_op",
                                                               "classes": ["inplace_math"], "counted": True})
    a.add("fd", True, "finite differences (elements): agrees on 4 checked", None)
    d = {"verdict": "bug", "classes": [{"id": "inplace_math", "score": 0.9}], "signature": "exact_factor",
         "evidence": a.evidence}
    monkeypatch.setattr(base, "diagnose_target", lambda *args, **kw: d)
    r = CliRunner().invoke(main, ["diagnose", str(PROGRAMS / "ref_right"), "--json", str(tmp_path / "d.json")])
    assert r.exit_code == 0, r.output
    lines = [ln.strip() for ln in r.output.splitlines() if "[source]" in ln or "[fd]" in ln]
    assert lines[0].startswith("!!") and "x *= 2" in lines[0]
    assert lines[1].startswith("--") and "not in code that ran" in lines[1]
    assert lines[2].startswith("ok")


def test_an_unpinned_stochastic_program_is_told_nothing_was_pinned(monkeypatch, tmp_path):
    import defects4warp.engines.base as base
    from defects4warp.engines.reference import interpret

    # a measurement document as the worker writes it for an unseeded program without set_seed
    doc = {"warp_version": "1.19.0", "protocol": {"optional": {}, "params": {"w": {"shape": [3]}}},
           "determinism": {"objective": [1.09, 5.38], "objective_relative_change": 0.36, "stochastic": True,
                           "seed_pinned": False, "pinned_repeatable": None},
           "nan_scan": {"objective_finite": True},
           "fd": {"rtol": 1e-4, "calls": [{"elements": {"signature": "agrees", "n": 3, "n_mismatch": 0,
                                                      "relative_error": 0.0}}]}}
    d = interpret(doc)
    assert d["verdict"] == "inconclusive"
    monkeypatch.setattr(base, "diagnose_target", lambda *args, **kw: d)
    r = CliRunner().invoke(main, ["diagnose", str(PROGRAMS / "ref_right"), "--json", str(tmp_path / "d.json")])
    assert "no seed could be pinned (nothing was pinned)" in r.output
    assert "with the seed pinned" not in r.output.split("classes, best first")[0]


def test_a_bundled_variant_is_diagnosed_in_a_neutral_copy(tmp_path):
    """`diagnose CASE/VARIANT` runs a corpus variant in a neutral copy (files its script writes, such
    as harbour's ballast.txt, would otherwise land in the corpus and change its digest); a user's
    folder is diagnosed where it is (the script reads and writes next to itself)."""
    from defects4warp.capture.spec import ScriptSpec
    from defects4warp.commands.diagnose import _bundled_copy

    variant = (ROOT / "corpus" / "harbour-buoy-ballast-drift" / "buggy").resolve()
    entry = sorted(p.name for p in variant.glob("*.py"))[0]
    spec = ScriptSpec(entry=str(variant / entry), args=["--iters", "2"])
    with _bundled_copy(variant, spec) as (where, got):
        assert where != variant and variant not in where.parents
        assert sorted(p.name for p in where.glob("*.py")) == sorted(p.name for p in variant.glob("*.py"))
        assert got.entry == entry and got.args == ["--iters", "2"]
        (where / "ballast.txt").write_text("written by the script\n")
    assert not (variant / "ballast.txt").exists()
    assert not where.exists()
    with _bundled_copy(tmp_path, None) as (where, got):
        assert where == tmp_path.resolve() and got is None


def test_a_site_is_printed_as_written_not_as_an_emoji(capsys):
    # the capture table of Warp's example_bounce.py showed its param site example_bounce.py:100:2 as
    # "example_bounce.py💯2": rich turned the ":100:" between line and occurrence into an emoji
    from rich.table import Table

    from defects4warp.commands._common import console

    t = Table()
    t.add_column("allocated at")
    t.add_row("example_bounce.py:100:2")
    console.print(t)
    console.print("at example_bounce.py:100:2")
    out = capsys.readouterr().out
    assert out.count("example_bounce.py:100:2") == 2 and "\U0001f4af" not in out


def _overwrite_evidence():
    """A trace finding of a write-after-read (its entry as harness/engines/assess/trace.py's assessor makes it,
    classes from the evidence table), the buffer swap behind it (not counted: the trace observes it) and an agreeing
    fd."""
    from defects4warp.engines.assess import Assessment
    from defects4warp.engines.assess.trace import assess

    detail = ("state read by step (model.py:12) on tape T1 is written by a later recorded launch of step "
              "before backward")
    trace = assess({"trace": {"findings": [{"id": "write_after_read", "detail": detail,
                                            "data": {"kernel": "step", "tape": "T1", "count": 3}}]}})
    assert "overwrite" in trace.evidence[0]["data"]["classes"]
    a = Assessment()
    a.add("source", False, "train.py:40: 'self.a, self.b = self.b, self.a' swaps buffers inside a loop in simulate "
          "(taping behaviour: the runtime trace observes it instead)",
          {"rule": "buffer_swap", "classes": ["overwrite"], "counted": False})
    a.add("source", False, "train.py:7: .grad read before backward() (not in code that ran during gradient())",
          {"rule": "grad_read_before_backward", "classes": ["stale_gradient_read"], "counted": False})
    a.add("fd", True, "call 1 vs finite differences (elements): agrees on 5 resolved items", None)
    return a.evidence + trace.evidence


def test_a_no_bug_verdict_says_why_its_counted_findings_did_not_change_it(monkeypatch, tmp_path):
    import defects4warp.engines.base as base

    d = {"verdict": "no_bug", "classes": [{"id": "correct", "score": 1.0}], "signature": "agrees",
         "evidence": _overwrite_evidence()}
    monkeypatch.setattr(base, "diagnose_target", lambda *args, **kw: d)
    r = CliRunner().invoke(main, ["diagnose", str(PROGRAMS / "ref_right"), "--json", str(tmp_path / "d.json")])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    # was: "!! counted against correctness" over a no_bug verdict, and not a word on why it stood
    assert "(!! would count against correctness, but the verdict no_bug does not rest on it: see below;" in text
    assert ("why the verdict is no_bug despite 1 finding(s) marked !!: the reference engine decides the verdict "
            "from the measurement alone (autodiff against finite differences: the [fd] and [sweep] lines, and "
            "autodiff agrees)") in text
    lines = [ln.strip() for ln in r.output.splitlines()]
    i = next(k for k, ln in enumerate(lines) if ln.startswith("!!"))
    # the counted finding names the kernel's definition, and the buffer swap is printed under it, not among the notes
    assert lines[i] == ("!!  [trace] trace: state read by step (kernel defined at model.py:12) on tape T1 is written "
                        "by a later recorded launch of step before backward")
    assert lines[i + 1] == ("in your code: train.py:40: 'self.a, self.b = self.b, self.a' swaps buffers inside a loop "
                            "in simulate (a source pattern of overwrite that the trace observed: counted through "
                            "this finding, not again)")
    assert lines[i + 2].startswith("--  [source] train.py:7: .grad read before backward()")
    assert sum("swaps buffers" in ln for ln in lines) == 1


def test_a_bug_verdict_keeps_the_legend_and_adds_no_excuse():
    from defects4warp.commands.diagnose import evidence_lines

    d = {"verdict": "bug", "evidence": _overwrite_evidence()}
    legend, lines, why = evidence_lines(d)
    assert legend == "(!! counted against correctness, -- reported but not counted, ok clean)" and why is None
    assert [ln.strip()[:12] for ln in lines] == ["!!  [trace] ", "in your code", "--  [source]", "ok  [fd] cal"]
    _, _, why = evidence_lines(dict(d, verdict="no_bug"), "cmd:my-tool")
    assert why == "why the verdict is no_bug despite 1 finding(s) marked !!: the engine cmd:my-tool reports them but did not count them toward a bug"
    _, _, why = evidence_lines({"verdict": "error", "evidence": [
        {"probe": "engine", "clean": False, "finding": "Traceback ...", "data": None}]})
    assert why is None  # an error's traceback is no finding the verdict ignored


def test_not_a_param_lines_one_per_allocation_site_with_a_count():
    from defects4warp.commands.diagnose import not_a_param_lines

    why = "its .grad is not used after the backward"
    cands = [{"site": "train.py:40" + (f":{n}" if n > 1 else ""), "why_not": why} for n in range(1, 51)]
    cands += [{"site": "train.py:12", "why_not": "the loss does not depend on it"},
              {"site": "train.py:30:2", "why_not": why}]
    assert not_a_param_lines(cands) == [
        f"  not a param: train.py:40 x50 (arrays allocated there in a loop) ({why})",
        "  not a param: train.py:12 (the loss does not depend on it)",
        f"  not a param: train.py:30 (train.py:30:2) ({why})"]


def test_the_printed_capture_says_the_iteration_its_backwards_and_the_checks(capsys):
    from defects4warp.capture import ScriptSpec
    from defects4warp.commands.diagnose import print_capture

    cap = {"iteration": 3, "first_backward": 5, "gradient_after_backward": 6, "params": [], "candidates": [],
           "objective": {"description": "the array passed to backward(loss)", "value": 1.5},
           "iterations": {"loop_iterations": 30, "diagnosed": 3, "checked": [
               {"iteration": 1, "status": "agrees", "rel": 1e-4}, {"iteration": 2, "status": "agrees", "rel": 0.01},
               {"iteration": 3, "status": "disagrees", "rel": 0.064},
               {"iteration": 8, "status": "unresolved", "rel": 0.0051}, {"iteration": 16, "status": "unresolved"}]},
           "assumptions": ["iteration 3 calls backward 2 times"]}
    print_capture(cap, ScriptSpec(entry="train.py"), [])
    out = " ".join(capsys.readouterr().out.split())
    assert "(iteration 3: backward 5 to 6)" in out
    assert ("iterations checked (5 of the script's 30; relative: |central difference - gradient.v| / the larger "
            "of the two, along random directions v, the largest of the directions read): 1 agrees 0.0001; "
            "2 agrees 0.01; 3 disagrees 0.064; 8 unresolved 0.0051 (its central differences at the step and at half "
            "of it differ by more than 1%: neither read); 16 unresolved (a loss or gradient value that is not finite); "
            "diagnosed: iteration 3") in out


def test_the_first_iteration_assumption_is_restated_when_another_iteration_is_diagnosed(capsys, tmp_path):
    """resolve_target assumes iteration 1; when the look along the loop diagnoses iteration 2 the printed
    assumptions do not also say the problem is the first iteration."""
    from defects4warp.capture.targets import resolve_target
    from defects4warp.commands.diagnose import FIRST_ITERATION_ASSUMED, _assumed_lines

    (tmp_path / "train.py").write_text("print(1)\n")
    _folder, _spec, assumed = resolve_target(str(tmp_path / "train.py"), (), None, None)
    first = [a for a in assumed if a.startswith(FIRST_ITERATION_ASSUMED)]
    assert len(first) == 1
    assert _assumed_lines(assumed, 1, 1) == assumed
    assert _assumed_lines(assumed, None, 1) == assumed
    moved = _assumed_lines(assumed, 2, 1)
    assert not any(a.startswith(FIRST_ITERATION_ASSUMED) for a in moved)
    assert "the script's optimisation iteration 1 was modelled first and checked against later ones of its own loop " \
           "(--iteration K for another)" in moved
    assert len(moved) == len(assumed)


def test_the_objective_line_says_what_its_value_sums():
    """Several backwards of the iteration and a cached earlier backward are named beside the first array."""
    from defects4warp.commands.diagnose import _objective_terms

    assert _objective_terms({"objective_backwards": [3], "objective": {}}) == ""
    assert _objective_terms({"objective_backwards": [1, 2], "objective": {}}) == " (the sum of the losses of backwards 1, 2)"
    assert _objective_terms({"objective_backwards": [3], "objective": {"external_backwards": [1]}}) == (
        " (the sum of the loss of this iteration's backward plus the loss of backward 1 of an earlier iteration "
        "(its cached gradient is in the update))")
    both = _objective_terms({"objective_backwards": [4, 5], "objective": {"external_backwards": [1]}})
    assert both.startswith(" (the sum of the losses of backwards 4, 5 plus the loss of backward 1")


def test_a_case_script_block_is_checked_before_the_script_runs(tmp_path):
    """``diagnose CASE/VARIANT`` runs the case's ``script:`` block: an ``args`` written as one string (run once
    character by character) and an entry the variant folder lacks (silently replaced) are errors naming
    case.yaml's field, before anything runs."""
    import shutil

    import yaml

    src = Path(__file__).resolve().parents[1] / "corpus" / "amplifier-chain-stage-gains"
    case = tmp_path / src.name
    shutil.copytree(src, case)
    data = yaml.safe_load((case / "case.yaml").read_text())
    data["script"]["args"] = "--iters 3"
    (case / "case.yaml").write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(main, ["diagnose", str(case / "buggy")])
    assert r.exit_code == 2
    assert f"{case / 'case.yaml'}: field 'script.args': '--iters 3' is not of type 'array'" in " ".join(r.output.split())
    data["script"].update(args=["--iters", "3"], entry="missing.py")
    (case / "case.yaml").write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(main, ["diagnose", str(case / "buggy")])
    assert r.exit_code == 2
    assert "field 'script.entry': 'missing.py' is not a file of the variant folder buggy/" in " ".join(r.output.split())


def test_an_unmeasured_program_marks_why_as_er_not_as_evidence_and_capture_sites_stay_sites():
    """A script that raised before its backward gives a diagnosis with verdict ``error`` whose ``load`` entry
    says why: it is no evidence about the gradient (``er``, not ``!!``); a refused build stays ``!!``. A capture
    finding names a param by its allocation site, which is not printed as a kernel's definition."""
    from defects4warp.commands.diagnose import evidence_lines

    load = {"probe": "load", "clean": False, "finding": "CaptureError: train.py raised KeyError at train.py:13", "data": None}
    legend, lines, why = evidence_lines({"verdict": "error", "evidence": [load]})
    assert lines == ["  er  [load] CaptureError: train.py raised KeyError at train.py:13"] and why is None
    assert legend.startswith("(er why the program could not be measured: no evidence about its gradient; !! counted")
    _legend, lines, _why = evidence_lines({"verdict": "refused", "evidence": [load]})
    assert lines[0].startswith("  !!  [load]")
    cap = {"probe": "trace", "clean": False, "data": {"classes": ["missing_tape_zero"]},
           "finding": "trace: (capture) the .grad of param k (train.py:27) is used after backward 2"}
    ker = {"probe": "trace", "clean": False, "data": {"classes": ["overwrite"]},
           "finding": "trace: launch of step (train.py:9) writes x after it was read"}
    _legend, lines, _why = evidence_lines({"verdict": "bug", "evidence": [cap, ker]})
    assert "param k (train.py:27) is used" in lines[0] and "step (kernel defined at train.py:9)" in lines[1]
