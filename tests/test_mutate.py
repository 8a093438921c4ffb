"""Mutation operators (defects4warp.corpus.mutate): one test per operator on a tiny program,
the not-applicable path, stable ids, the static admission checks, and (slow) admission
of a small sample against the independent oracle and its materialisation."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from defects4warp.blind import hint_findings
from defects4warp.corpus.case import load_case
from defects4warp.corpus.mutate import OPERATORS, get_operator
from defects4warp.corpus.mutate.admit import (Candidate, admit, candidates, diff_stats, mutant_id, static_checks,
                                              summarize)
from defects4warp.corpus.mutate.sources import Parent, adapter_parents, all_parents
from defects4warp.corpus.mutate.tier import build_manifest, materialize, write_manifest
from defects4warp.taxonomy import CLASSES

PROGRAMS = Path(__file__).parent / "programs"


def _src(name):
    return {"problem.py": (PROGRAMS / name / "problem.py").read_text()}


def _apply(op, prog):
    return get_operator(op).apply(_src(prog))


def _changed(m, parent):
    """(removed lines, added lines), stripped."""
    import difflib

    rem, add = [], []
    for ln in difflib.unified_diff(parent["problem.py"].splitlines(), m.sources["problem.py"].splitlines(), lineterm="", n=0):
        if ln.startswith("-") and not ln.startswith("---"):
            rem.append(ln[1:].strip())
        elif ln.startswith("+") and not ln.startswith("+++"):
            add.append(ln[1:].strip())
    return rem, add


def test_registry_has_at_least_12_operators_with_bug_classes():
    assert len(OPERATORS) >= 12
    for name, op in OPERATORS.items():
        assert op.name == name
        assert CLASSES[op.produces].is_bug, name
    assert len({op.produces for op in OPERATORS.values()}) >= 12


def test_drop_requires_grad_skips_parameters():
    ms = _apply("drop_requires_grad", "mutate_tape")
    assert [m.site for m in ms] == ["problem.py:27:17", "problem.py:28:20"]
    rem, add = _changed(ms[0], _src("mutate_tape"))
    assert rem == ["self.y = wp.zeros(2, dtype=float, device=device, requires_grad=True)"]
    assert add == ["self.y = wp.zeros(2, dtype=float, device=device)"]


def test_drop_grad_zeroing():
    ms = _apply("drop_grad_zeroing", "mutate_basic")
    assert len(ms) == 1 and _changed(ms[0], _src("mutate_basic")) == (["self.tape.zero()"], [])
    ms = _apply("drop_grad_zeroing", "mutate_tape")
    assert _changed(ms[0], _src("mutate_tape")) == (["self.k.grad.zero_()"], [])


def test_drop_tape_reset():
    ms = _apply("drop_tape_reset", "mutate_basic")
    assert _changed(ms[0], _src("mutate_basic")) == (["self.tape.reset()"], [])


def test_inplace_augassign_both_forms():
    m = _apply("inplace_augassign", "mutate_basic")[0]
    assert _changed(m, _src("mutate_basic")) == (["y[i] = x[i] * s"], ["y[i] = x[i]", "y[i] *= s"])
    m = _apply("inplace_augassign", "mutate_kernels")[0]
    assert _changed(m, _src("mutate_kernels")) == (["out[i] = out[i] * r"], ["out[i] *= r"])


def test_ping_pong_state_rewrites_the_final_index_too():
    m = _apply("ping_pong_state", "mutate_basic")[0]
    text = m.sources["problem.py"]
    assert "inputs=[xs[t % 2], self.k], outputs=[xs[(t + 1) % 2]]" in text
    assert "inputs=[xs[self.steps % 2], wp.float64(2.0)]" in text
    assert "wp.copy(xs[0], self.x0)" in text


def test_host_write_before_backward_moves_the_write():
    ms = _apply("host_write_before_backward", "mutate_tape")
    assert len(ms) == 2
    lines = [ln.strip() for ln in ms[0].sources["problem.py"].splitlines()]
    assert lines.index("self.k.grad.zero_()") == lines.index("tape.backward(self.loss)") - 1


def test_launch_into_tape():
    m = _apply("launch_into_tape", "mutate_tape")[0]
    lines = m.sources["problem.py"].splitlines()
    i = next(k for k, ln in enumerate(lines) if "wp.launch(shift" in ln)
    assert lines[i].startswith(" " * 12) and "with tape:" in lines[i - 3]


def test_retain_grad_only_on_arrays_written_twice():
    ms = _apply("retain_grad", "mutate_tape")
    assert len(ms) == 1 and "requires_grad=True, retain_grad=True)" in _changed(ms[0], _src("mutate_tape"))[1][0]
    assert "self.y" in _changed(ms[0], _src("mutate_tape"))[1][0]
    assert not _apply("retain_grad", "mutate_basic")


def test_drop_epsilon_and_unguard_where():
    m = _apply("drop_epsilon", "mutate_kernels")
    assert len(m) == 1 and _changed(m[0], _src("mutate_kernels"))[1] == ["r = wp.sqrt(wp.dot(u, u))"]
    m = _apply("unguard_where", "mutate_kernels")
    assert len(m) == 1 and _changed(m[0], _src("mutate_kernels"))[1] == ["g = wp.where(r > wp.float64(0.5), a[i] / r, r)"]


def test_loop_bound_to_argument_edits_kernel_and_launch():
    m = _apply("loop_bound_to_argument", "mutate_kernels")[0]
    text = m.sources["problem.py"]
    assert "out: wp.array(dtype=wp.float64), n_k: int):" in text
    assert "for k in range(n_k):" in text and "outputs=[out, 3])" in text
    ast.parse(text)


def test_component_reassign_inserts_same_value():
    m = _apply("component_reassign", "mutate_kernels")[0]
    rem, add = _changed(m, _src("mutate_kernels"))
    assert rem == [] and add == ["u[0] = a[i]"]


def test_drop_func_grad_factor_one_mutant_per_factor():
    ms = _apply("drop_func_grad_factor", "mutate_kernels")
    assert [_changed(m, _src("mutate_kernels"))[1][0] for m in ms] == [
        "wp.adjoint[x] += x * adj_ret", "wp.adjoint[x] += wp.float64(2.0) * adj_ret"]


def test_disable_backward_one_per_kernel():
    ms = _apply("disable_backward", "mutate_basic")
    assert len(ms) == 3
    assert all(_changed(m, _src("mutate_basic")) == (["@wp.kernel"], ["@wp.kernel(enable_backward=False)"]) for m in ms)


def test_statement_out_of_tape_first_and_last():
    ms = _apply("statement_out_of_tape", "mutate_tape")
    assert [m.note for m in ms] == ["first statement before the tape", "last statement after the tape"]
    for m in ms:
        ast.parse(m.sources["problem.py"])


def test_double_backward_and_grad_numpy_view():
    m = _apply("double_backward", "mutate_basic")[0]
    assert _changed(m, _src("mutate_basic")) == ([], ["self.tape.backward(loss)"])
    m = _apply("grad_numpy_view", "mutate_basic")[0]
    assert _changed(m, _src("mutate_basic"))[1] == ['g = {"k": self.k.grad.numpy()}']


def test_operators_that_do_not_apply_say_why():
    for name, op in OPERATORS.items():
        ms = op.apply(_src("mutate_plain"))
        assert ms == [] and ms.reason, name
    assert get_operator("drop_tape_reset").apply(_src("mutate_tape")).reason == "no tape.reset() statement"


def test_every_mutant_parses_and_only_touches_its_edit():
    for prog in ("mutate_basic", "mutate_kernels", "mutate_tape"):
        src = _src(prog)
        for op in OPERATORS.values():
            for m in op.apply(src):
                ast.parse(m.sources["problem.py"])
                d = diff_stats(src, m)
                assert 0 < d["removed"] + d["added"] <= 12, (prog, m.site)


def test_mutant_ids_are_stable_and_valid():
    a = mutant_id("hanging-chain-rest-lengths/fixed", "ping_pong_state", "problem.py:76:8/states")
    assert a == mutant_id("hanging-chain-rest-lengths/fixed", "ping_pong_state", "problem.py:76:8/states")
    assert a.startswith("hanging-chain-rest-lengths-fixed-ping-pong-state-")
    assert a != mutant_id("hanging-chain-rest-lengths/fixed", "ping_pong_state", "problem.py:76:8/xs")


def test_parents_cover_corpus_and_adapters():
    ps = all_parents()
    assert len([p for p in ps if p.split == "adapter"]) >= 10
    assert len({p.id for p in ps}) == len(ps) >= 80
    assert {p.split for p in ps} >= {"dev", "test", "adapter"}
    for p in adapter_parents():
        assert not hint_findings(p.path), p.id


def test_static_checks_pass_and_catch_a_hint():
    parent = Parent("tests/mutate_basic", PROGRAMS / "mutate_basic", "dev", "test")
    m = _apply("double_backward", "mutate_basic")[0]
    assert static_checks(Candidate(parent, m)) == ""
    bad = type(m)(m.operator, m.produces, m.site, {"problem.py": m.sources["problem.py"] + "\nbuggy = 1\n"})
    assert static_checks(Candidate(parent, bad)).startswith("diff:")


def test_candidates_cap_sites_deterministically():
    ps = [p for p in adapter_parents() if p.id == "adapters/wt-scalar-chain"]
    a, counts = candidates(ps, operators=["disable_backward"], max_sites=1)
    b, _ = candidates(ps, operators=["disable_backward"], max_sites=1)
    assert counts["disable_backward"]["sites"] == 2 and len(a) == 1 and a[0].mutation.site == b[0].mutation.site


@pytest.mark.slow
def test_admission_sample_against_the_oracle(tmp_path):
    """Three mutants of one adapter parent: two admitted with the signature their
    class implies, one (a retain_grad on an array written once would be harmless)
    replaced by drop_tape_reset on a parent that re-creates its tape: rejected."""
    ps = {p.id: p for p in adapter_parents()}
    cands, counts = candidates([ps["adapters/wt-scalar-chain"]], operators=["drop_grad_zeroing", "double_backward"])
    extra, _ = candidates([ps["adapters/wt-loop-nested-if"]], operators=["grad_numpy_view"])
    cands += extra
    import time

    recs = admit(cands, {"1.19.0": None}, jobs=2, timeout_s=120, cache_dir=tmp_path / "cache")
    t0 = time.time()
    again = admit(cands, {"1.19.0": None}, jobs=2, timeout_s=120, cache_dir=tmp_path / "cache")
    assert time.time() - t0 < 5.0  # every oracle run comes from the cache
    assert [(r["admitted"], r["oracle"]) for r in again] == [(r["admitted"], r["oracle"]) for r in recs]
    by = {r["operator"]: r for r in recs}
    assert by["drop_grad_zeroing"]["admitted"], by["drop_grad_zeroing"]
    assert by["drop_grad_zeroing"]["oracle"]["1.19.0"]["signature"]["kind"] == "growth"
    assert by["drop_grad_zeroing"]["oracle"]["1.19.0"]["signature"]["ratios"] == pytest.approx([2.0, 3.0], rel=1e-6)
    assert by["double_backward"]["admitted"]
    assert by["double_backward"]["oracle"]["1.19.0"]["ratio_median"] == pytest.approx(2.0, rel=1e-6)
    assert by["grad_numpy_view"]["admitted"]
    assert by["grad_numpy_view"]["oracle"]["1.19.0"]["signature"]["kind"] == "zero"
    summary = summarize(recs, counts)
    assert summary["double_backward"] == {**summary["double_backward"], "tried": 1, "built": 1, "admitted": 1}

    doc = build_manifest(recs, summary, releases=["1.19.0"], jobs=2, seconds=1.0, max_sites=1)
    man = write_manifest(doc, tmp_path / "manifest.yaml")
    out = materialize(tmp_path / "tier", man)
    assert len(out) == 3
    for d in out:
        case = load_case(d)
        assert case.variant("buggy").expectation_for("1.19.0", "small").classes[0] in (
            "missing_tape_zero", "double_count", "stale_gradient_read")
        assert case.variant("fixed").expectation_for("1.19.0", "small").verdict == "no_bug"
        assert not hint_findings(d / "buggy")
        assert "Mutant of adapters/" in yaml.safe_load((d / "case.yaml").read_text())["explanation"]
    again = materialize(tmp_path / "tier2", man)
    for a, b in zip(out, again):
        assert (a / "buggy" / "problem.py").read_text() == (b / "buggy" / "problem.py").read_text()


def test_rejected_when_the_oracle_sees_no_change(tmp_path):
    """A mutant whose gradient is right is not admitted (no Warp run: the parent is
    reported unresolved, so admission stops at the parent stage)."""
    parent = Parent("tests/mutate_basic", PROGRAMS / "mutate_basic", "dev", "test")
    m = _apply("double_backward", "mutate_basic")[0]
    from defects4warp.corpus.mutate.admit import admit_one

    rec = admit_one(Candidate(parent, m), {("tests/mutate_basic", "1.19.0"): ({"verdict": "unresolved"}, None)}, {"1.19.0": None})
    assert not rec["admitted"] and rec["stage"] == "parent" and "unresolved" in rec["reason"]


def test_mutation_scores_from_a_run(tmp_path):
    import json

    from defects4warp.corpus.mutate.score import markdown_table, mutation_scores

    man = {"mutants": [{"id": "a-x", "operator": "double_backward"}, {"id": "b-y", "operator": "double_backward"},
                       {"id": "c-z", "operator": "disable_backward"}]}
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(man))
    res = [
        {"case": "a-x", "variant": "buggy", "correct": {"verdict": True, "class": True}},
        {"case": "a-x", "variant": "fixed", "correct": {"verdict": True, "class": True}},
        {"case": "b-y", "variant": "buggy", "correct": {"verdict": True, "class": False}},
        {"case": "b-y", "variant": "fixed", "correct": {"verdict": False, "class": False}},
        {"case": "c-z", "variant": "buggy", "correct": {"verdict": False, "class": False}},
        {"case": "other", "variant": "buggy", "correct": {"verdict": True, "class": True}},
    ]
    (tmp_path / "run.json").write_text(json.dumps({"summary": {"engine": "e"}, "results": res}))
    s = mutation_scores(tmp_path / "run.json", tmp_path / "m.yaml")
    assert s["operators"]["double_backward"] == {"mutants": 2, "detected": 1.0, "score": 0.5, "twin_ok": 0.5}
    assert s["operators"]["disable_backward"]["score"] == 0.0 and s["operators"]["disable_backward"]["twin_ok"] is None
    assert s["all"]["mutants"] == 3 and s["all"]["score"] == pytest.approx(1 / 3)
    assert "| `double_backward` | 2 | 0.50 / 1.00 / 0.50 |" in markdown_table([s])


def test_cli_list_and_apply(tmp_path):
    from click.testing import CliRunner

    from defects4warp.cli import main

    r = CliRunner().invoke(main, ["maint", "mutate", "list"])
    assert r.exit_code == 0 and "grad_numpy_view" in r.output and "stale_gradient_read" in r.output
    r = CliRunner().invoke(main, ["maint", "mutate", "generate", str(PROGRAMS / "mutate_basic"), "--operator", "disable_backward",
                                  "--operator", "retain_grad", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "retain_grad: does not apply: no Warp allocation with requires_grad=True" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["disable_backward-0", "disable_backward-1", "disable_backward-2"]
    assert "enable_backward=False" in (tmp_path / "disable_backward-1" / "problem.py").read_text()


def test_merge_manifests_later_runs_win(tmp_path):
    from defects4warp.corpus.mutate.tier import merge_manifests, read_manifest

    ps = {p.id: p for p in adapter_parents()}
    cands, counts = candidates([ps["adapters/wt-scalar-chain"]], operators=["double_backward", "drop_grad_zeroing"])

    def rec(c, ok):
        return {"id": c.id, "parent": c.parent.id, "operator": c.mutation.operator, "class": c.mutation.produces,
                "site": c.mutation.site, "admitted": ok, "stage": "admitted" if ok else "oracle", "reason": "",
                "releases": ["1.19.0"] if ok else []}

    first = [rec(cands[0], False), rec(cands[1], True)]
    second = [rec(cands[0], True)]
    for name, rs in (("a", first), ("b", second)):
        doc = build_manifest(rs, summarize(rs, counts), releases=["1.19.0"], jobs=2, seconds=10.0, max_sites=None,
                             cpu_seconds=4.0)
        write_manifest(doc, tmp_path / f"{name}.yaml")
    m = merge_manifests([tmp_path / "a.yaml", tmp_path / "b.yaml"])
    assert sorted(x["id"] for x in m["mutants"]) == sorted(c.id for c in cands) and m["rejected"] == []
    assert m["admission"]["wall_seconds"] == 20.0 and m["admission"]["cpu_seconds"] == 8.0
    m = merge_manifests([tmp_path / "a.yaml", tmp_path / "b.yaml"], drop={0: ["drop_grad_zeroing"]})
    assert [x["operator"] for x in m["mutants"]] == ["double_backward"]
    assert m["operators"]["drop_grad_zeroing"]["tried"] == 0
    write_manifest(m, tmp_path / "m.yaml")
    assert read_manifest(tmp_path / "m.yaml")["admission"]["merged_from"] == 2


def test_committed_manifest_counts_and_a_materialised_sample(tmp_path):
    """The committed manifest meets the issue's floor, and a sample of it rebuilds
    byte-identically (SHA-256 checked) into loadable, blinded cases."""
    from defects4warp.corpus.mutate.tier import MANIFEST, read_manifest

    doc = read_manifest(MANIFEST)
    assert len(doc["mutants"]) >= 300
    assert len({m["parent"] for m in doc["mutants"]}) >= 25
    assert len({m["operator"] for m in doc["mutants"]}) >= 12
    for m in doc["mutants"]:
        # an operator's class, unless measurement reclassified the mutant (the entry says from what and why)
        produced = m["reclassified"]["from"] if m.get("reclassified") else m["class"]
        op = OPERATORS[m["operator"]]
        assert produced in (op.produces, *op.site_classes) and m["releases"]
    sample = [m for m in doc["mutants"] if m["parent"].startswith("adapters/")][:3]
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(dict(doc, mutants=sample, rejected=[])))
    out = materialize(tmp_path / "tier", tmp_path / "m.yaml")
    assert [d.name for d in out] == [m["id"] for m in sample]
    for d, m in zip(out, sample):
        case = load_case(d)
        assert case.variant("buggy").expectation_for(m["releases"][0], "small").classes == (m["class"],)
        assert not hint_findings(d / "buggy") and not hint_findings(d / "fixed")


def test_cli_subcommands_replace_the_old_flags(tmp_path):
    """Each old mode flag is a usage error naming its subcommand; the
    subcommands summary, score (with --markdown and --json), merge and
    materialize work on a small manifest; --no-cache (once a hidden alias of
    --fresh) is gone; an unknown operator is a usage error naming --operator."""
    import json

    from click.testing import CliRunner

    from defects4warp.cli import main

    r = CliRunner()
    for old, new in [("--list", "mutate list"), ("--admit", "mutate admit"), ("--summary", "mutate summary"),
                     ("--score", "mutate score"), ("--merge", "mutate merge"), ("--materialize", "mutate materialize")]:
        res = r.invoke(main, ["maint", "mutate", old])
        assert res.exit_code == 2 and f"defects4warp maint {new}" in res.output, (old, res.output)
    res = r.invoke(main, ["maint", "mutate", str(PROGRAMS / "mutate_basic")])
    assert res.exit_code == 2 and "mutate generate" in res.output
    res = r.invoke(main, ["maint", "mutate", "generate", str(PROGRAMS / "mutate_basic"), "--operator", "no_such_op"])
    assert res.exit_code == 2 and "'--operator'" in res.output and "no_such_op" in res.output

    ps = {p.id: p for p in adapter_parents()}
    cands, counts = candidates([ps["adapters/wt-scalar-chain"]], operators=["double_backward"])
    recs = [{"id": c.id, "parent": c.parent.id, "operator": c.mutation.operator, "class": c.mutation.produces,
             "site": c.mutation.site, "admitted": True, "stage": "admitted", "reason": "", "releases": ["1.19.0"]}
            for c in cands]
    doc = build_manifest(recs, summarize(recs, counts), releases=["1.19.0"], jobs=1, seconds=1.0, max_sites=None)
    man = write_manifest(doc, tmp_path / "a.yaml")
    res = r.invoke(main, ["maint", "mutate", "merge", str(man), str(man), "--manifest", str(tmp_path / "m.yaml")])
    assert res.exit_code == 0 and f"{len(cands)} admitted" in res.output, res.output
    res = r.invoke(main, ["maint", "mutate", "summary", "--manifest", str(tmp_path / "m.yaml"), "--markdown", str(tmp_path / "s.md")])
    assert res.exit_code == 0 and "| `double_backward` |" in (tmp_path / "s.md").read_text()
    res = r.invoke(main, ["maint", "mutate", "materialize", str(tmp_path / "tier"), "--manifest", str(tmp_path / "m.yaml")])
    assert res.exit_code == 0 and f"wrote {len(cands)} case folders" in res.output
    run = {"summary": {"engine": "e"}, "results": [{"case": c.id, "variant": "buggy",
                                                    "correct": {"verdict": True, "class": True}} for c in cands]}
    (tmp_path / "run.json").write_text(json.dumps(run))
    res = r.invoke(main, ["maint", "mutate", "score", str(tmp_path / "run.json"), "--manifest", str(tmp_path / "m.yaml"),
                          "--json", str(tmp_path / "s.json")])
    assert res.exit_code == 0 and "| `double_backward` |" in res.output
    scores = json.loads((tmp_path / "s.json").read_text())
    assert scores[0]["operators"]["double_backward"]["score"] == 1.0

    # a bad release stops before any work; --no-cache is no option any more (no hidden aliases)
    res = r.invoke(main, ["maint", "mutate", "admit", "--warp", "not-a-release", "--manifest", str(tmp_path / "x.yaml")])
    assert res.exit_code == 2 and "'--warp'" in res.output and "not a warp-lang release" in res.output
    res = r.invoke(main, ["maint", "mutate", "admit", "--no-cache", "--manifest", str(tmp_path / "x.yaml")])
    assert res.exit_code == 2 and "No such option '--no-cache'" in res.output
    res = r.invoke(main, ["maint", "mutate", "admit", "--fresh", "--parents", "no-such-parent", "--manifest", str(tmp_path / "x.yaml")])
    assert res.exit_code == 0 and "0 parents, 0 candidates" in res.output


def test_drop_tape_reset_class_follows_the_tape_lifetime():
    """Deleting ``reset()`` of a tape made in the same function (fresh each call) leaves only
    unzeroed gradients (missing_tape_zero); of a kept tape, the re-recording replays old
    launches too (double_count)."""
    fresh = (
        "import warp as wp\n"
        "def grad(x, run):\n"
        "    tape = wp.Tape()\n"
        "    with tape:\n"
        "        loss = run(x)\n"
        "    tape.backward(loss)\n"
        "    g = x.grad.numpy().copy()\n"
        "    tape.reset()\n"
        "    return g\n"
    )
    kept = fresh.replace("    tape = wp.Tape()\n", "").replace("tape", "self.tape").replace("def grad(x, run)", "def grad(self, x, run)")
    op = OPERATORS["drop_tape_reset"]
    (m_fresh,) = op.apply({"p.py": fresh})
    (m_kept,) = op.apply({"p.py": kept})
    assert m_fresh.produces == "missing_tape_zero" and "tape.reset()" not in m_fresh.sources["p.py"]
    assert m_kept.produces == "double_count" and "self.tape.reset()" not in m_kept.sources["p.py"]
