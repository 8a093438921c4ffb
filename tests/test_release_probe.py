"""The release probe on synthetic measurements and sources (no Warp run): the differential
(harness/engines/release.py) and its assessments (harness/engines/assess/release.py, builtins.py)."""

from defects4warp.engines import release
from defects4warp.engines.assess.builtins import access_patterns, agreeing_kernels, builtin_findings, is_warp_function
from defects4warp.engines.assess.release import assess_differential


def doc(fd, ad, unc=0.0, sig="subtly_wrong"):
    return {"fd": {"rtol": 1e-4, "items": [{"fd": f, "unc": unc} for f in fd],
                   "calls": [{"joint": {"signature": sig, "autodiff": list(ad)}}]}}


def test_changed_needs_the_same_objective_and_another_gradient():
    a = doc([1.0, 2.0], [0.0, 0.0])
    b = doc([1.0, 2.0], [1.0, 2.0], sig="agrees")
    c = release.changed(a, b)
    assert c["objective_same"] and c["gradient_changed"] and c["b_agrees"]
    assert not release.changed(a, doc([1.0, 2.0], [0.0, 0.0]))["gradient_changed"]
    assert not release.changed(a, doc([1.5, 2.0], [1.0, 2.0]))["objective_same"]
    assert release.changed(a, doc([1.0], [1.0])) is None


def test_differential_names_the_first_release_and_its_classes():
    diff = {"current": "1.12.1", "other": "1.19.0", "direction": "newer", "first_change": "1.17.0",
            "compared": {"1.19.0": {"objective_same": True, "gradient_changed": True, "b_agrees": True,
                                    "relative_change": 1.0}}}
    from defects4warp.evidence_table import evidence_classes

    a = assess_differential(diff, copies=2)
    assert [e.id for e in a.cited] == ["release_first_change:1.17.0"]
    assert evidence_classes("release_first_change:1.17.0") == ("copy_adjoint", "warp_adjoint_bug")
    assert "first release where it changes: 1.17.0" in a.evidence[0]["finding"]
    # no copy in the traced call: the copy-adjoint entry of 1.17.0 cannot explain it
    assert [e.id for e in assess_differential(diff, copies=0).cited] == ["release_first_change:1.17.0:no_copies"]
    assert evidence_classes("release_first_change:1.17.0:no_copies") == ("warp_adjoint_bug",)
    # 1.15.0's entry is about copy adjoints and local struct field assignments: without a copy in the
    # traced call only the latter (Warp's own adjoint) can explain the change
    assert [e.id for e in assess_differential(dict(diff, first_change="1.15.0"), copies=0).cited] == [
        "release_first_change:1.15.0:no_copies"]
    assert evidence_classes("release_first_change:1.15.0:no_copies") == ("warp_adjoint_bug",)
    assert [e.id for e in assess_differential(dict(diff, first_change="1.15.0"), copies=1).cited] == [
        "release_first_change:1.15.0"]
    assert [e.id for e in assess_differential(dict(diff, first_change=None)).cited] == ["release_changed"]
    same = dict(diff, compared={"1.19.0": dict(diff["compared"]["1.19.0"], gradient_changed=False)})
    assert assess_differential(same).cited == [] and assess_differential(same).evidence[0]["clean"]


def _fake_lookup(release_, device, names):
    cells = {"1.13.0": [{"id": "curlnoise(uint32,vec3f,uint32,float32,float32)", "builtin": "curlnoise",
                         "state": "zero", "rel_err": 1.0, "differentiable": None}]}
    return [c for c in cells.get(release_, []) if c["builtin"] in names]


def test_builtin_measured_defective_in_a_launched_kernel(tmp_path):
    (tmp_path / "problem.py").write_text(
        "import warp as wp\n\n"
        "@wp.func\ndef field(p: wp.vec3):\n    return wp.curlnoise(wp.uint32(1), p)\n\n"
        "@wp.kernel\ndef advect(x: wp.array(dtype=wp.vec3)):\n    i = wp.tid()\n    x[i] = x[i] + field(x[i])\n\n"
        "@wp.kernel\ndef unused(x: wp.array(dtype=wp.vec3)):\n    i = wp.tid()\n    x[i] = wp.curlnoise(wp.uint32(1), x[i])\n")
    a = builtin_findings(tmp_path, ["advect"], "1.13.0", lookup=_fake_lookup)
    assert [e["data"]["evidence"] for e in a.evidence] == ["builtin_adjoint_defect"]
    assert "kernel code field uses wp.curlnoise" in a.evidence[0]["finding"]
    assert "curlnoise(uint32,vec3f,uint32,float32,float32) zero" in a.evidence[0]["finding"]
    assert builtin_findings(tmp_path, ["advect"], "1.14.0", lookup=_fake_lookup).evidence == []
    assert builtin_findings(tmp_path, [], "1.13.0", lookup=_fake_lookup).evidence == []



def test_differential_from_an_old_release_bisects_every_supported_release(monkeypatch):
    """Under test on 1.5.1 (older than ENGINE_RELEASES), the differential compares with the
    newest release and bisects every supported release in between, old ones included."""
    from types import SimpleNamespace

    from defects4warp import envs, isolation

    measured = []

    def fake_worker(path, device, scale, options, timeout_s, python, script=None):
        import sys

        rel = "1.19.0" if python == sys.executable else python.split("/")[-1]
        measured.append(rel)
        fixed = tuple(map(int, rel.split("."))) >= (1, 7, 2)
        return SimpleNamespace(doc=doc([1.0, 2.0], [1.0, 2.0] if fixed else [2.0, 4.0],
                                       sig="agrees" if fixed else "exact_factor"), failure=None)

    monkeypatch.setattr(envs, "ensure_env", lambda r, log=None: f"/envs/{r}")
    monkeypatch.setattr(isolation, "run_worker", fake_worker)
    monkeypatch.setattr(envs, "installed_warp_version", lambda: "1.19.0")
    out = release.differential("x", "cpu", "small", "1.5.1", base_doc=doc([1.0, 2.0], [2.0, 4.0]))
    assert out["other"] == "1.19.0" and out["first_change"] == "1.7.2" and out["bracket"] == ["1.6.2", "1.7.2"]
    assert {"1.6.2", "1.7.2"} <= set(measured) <= set(envs.RELEASES)
    assert set(measured) - set(envs.ENGINE_RELEASES)  # old releases were measured too
    # a release list without the old ones leaves the bracket open
    measured.clear()
    out = release.differential("x", "cpu", "small", "1.5.1", base_doc=doc([1.0, 2.0], [2.0, 4.0]),
                               releases=envs.ENGINE_RELEASES)
    assert out["first_change"] is None and out["bracket"] == ["1.5.1", "1.12.1"]
    assert set(measured) <= set(envs.ENGINE_RELEASES)


def _calls(d, norms):
    """``d`` with a determinism record of gradient() calls of these norms."""
    identical = all(n == norms[0] for n in norms)
    return dict(d, determinism={"gradient_norms": list(norms), "calls_identical": identical})


def test_differential_measures_as_many_calls_as_differed_and_compares_them(monkeypatch):
    """A missing tape.zero() on a release whose array stores keep the output adjoint grows
    1, 3, 6 where 1.13.0 and later grow 1, 2, 3: call 1 agrees, later calls do not, and the
    differential says so instead of "the gradient does not depend on the release"."""
    import sys
    from types import SimpleNamespace

    from defects4warp import envs, isolation

    seen = []

    def fake_worker(path, device, scale, options, timeout_s, python, script=None):
        seen.append(options["knobs"]["determinism"]["calls"])
        n = options["knobs"]["determinism"]["calls"]
        return SimpleNamespace(doc=_calls(doc([1.0, 2.0], [2.0, 4.0]), [5.0, 10.0, 15.0][:n]), failure=None)

    monkeypatch.setattr(envs, "ensure_env", lambda r, log=None: sys.executable)
    monkeypatch.setattr(isolation, "run_worker", fake_worker)
    monkeypatch.setattr(envs, "installed_warp_version", lambda: "1.19.0")
    base = _calls(doc([1.0, 2.0], [2.0, 4.0]), [5.0, 15.0, 30.0])
    out = release.differential("x", "cpu", "small", "1.9.1", base_doc=base)
    assert seen == [3] and out["other"] == "1.19.0" and out["first_change"] is None
    assert out["repeated"] == {"calls": 3, "current": [1.0, 3.0, 6.0], "other": [1.0, 2.0, 3.0], "same": False}
    a = assess_differential(out)
    (e,) = a.evidence
    assert not e["clean"] and a.cited == []
    assert ("autodiff of gradient() call 1 is the same on Warp 1.9.1 and 1.19.0, but repeated calls are not: "
            "gradient norms relative to call 1 are 1, 3, 6 on 1.9.1 and 1, 2, 3 on 1.19.0") in e["finding"]
    assert "does not depend on the release" not in e["finding"]
    # the same growth on both releases: the same over the three calls
    base2 = _calls(doc([1.0, 2.0], [2.0, 4.0]), [5.0, 10.0, 15.0])
    out2 = release.differential("x", "cpu", "small", "1.9.1", base_doc=base2)
    (e2,) = assess_differential(out2).evidence
    assert e2["clean"] and "the same on Warp 1.9.1 and 1.19.0 over 3 gradient() calls" in e2["finding"]
    # identical calls on the release under test: one call on the other, and the claim is about call 1
    seen.clear()
    out3 = release.differential("x", "cpu", "small", "1.9.1", base_doc=_calls(doc([1.0, 2.0], [2.0, 4.0]), [5.0] * 3))
    assert seen == [1] and out3["repeated"] is None
    (e3,) = assess_differential(out3).evidence
    assert e3["clean"] and e3["finding"] == ("autodiff of gradient() call 1 is the same on Warp 1.9.1 and 1.19.0 "
                                             "(repeated calls are identical on 1.9.1, so only call 1 was compared)")


def test_repeated_calls_tolerance_and_unusable_records():
    a = _calls(doc([1.0], [1.0]), [2.0, 4.0, 6.0])
    assert release.repeated_calls(a, _calls(doc([1.0], [1.0]), [1.0, 2.0 * (1 + 5e-5), 3.0]))["same"]
    assert not release.repeated_calls(a, _calls(doc([1.0], [1.0]), [1.0, 2.0 * (1 + 5e-4), 3.0]))["same"]
    assert release.repeated_calls(a, _calls(doc([1.0], [1.0]), [1.0, 2.0])) is None  # other made 2 calls
    assert release.repeated_calls(a, _calls(doc([1.0], [1.0]), ["nan", "nan", "nan"])) is None
    assert release.repeated_calls(_calls(doc([1.0], [1.0]), [2.0, 2.0]), a) is None  # identical under test
    assert release.differential_options(a)["knobs"]["determinism"] == {"calls": 3}
    assert release.differential_options(_calls(doc([1.0], [1.0]), [2.0, 2.0]))["knobs"]["determinism"] == {"calls": 1}
    assert release.DIFFERENTIAL_PROBES["knobs"]["determinism"] == {"calls": 1}  # not mutated


def _diff_other_wrong(first):
    return {"current": "1.0.2", "other": "1.19.0", "direction": "newer", "first_change": first,
            "bracket": ["1.0.2", "1.12.1"] if first is None else ["1.18.0", first],
            "compared": {"1.19.0": {"objective_same": True, "gradient_changed": True, "b_agrees": False,
                                    "relative_change": 0.7}}}


def test_a_gradient_wrong_on_both_releases_is_no_evidence_of_a_warp_fix():
    """A taping bug whose (wrong) gradient changes with the release, and is still wrong on the
    other release, does not credit warp_adjoint_bug; an entry whose classes are all taping
    classes (1.13.0: written arrays' adjoints consumed) is still cited."""
    from defects4warp.evidence_table import evidence_classes, load_table

    a = assess_differential(_diff_other_wrong(None), copies=0)
    (e,) = a.evidence
    assert a.cited == [] and not e["clean"]
    assert "changes between 1.0.2 and 1.12.1 (not every release in between could be measured)" in e["finding"]
    assert "disagrees with finite differences on 1.19.0 too" in e["finding"]
    # the row it would have cited credits Warp alone
    assert evidence_classes("release_changed") == ("warp_adjoint_bug",)
    for first in ("1.14.0", "1.16.0", "1.17.0", "1.18.0", "1.19.0"):
        assert "warp_adjoint_bug" in load_table().weights(f"release_first_change:{first}")
        assert assess_differential(_diff_other_wrong(first), copies=2).cited == []
    assert [x.id for x in assess_differential(_diff_other_wrong("1.13.0"), copies=2).cited] == [
        "release_first_change:1.13.0"]
    # the same change with the other release agreeing with FD is the Warp-defect evidence
    ok = _diff_other_wrong(None)
    ok["compared"]["1.19.0"]["b_agrees"] = True
    assert [x.id for x in assess_differential(ok).cited] == ["release_changed"]


def _fake_releases(monkeypatch, grad_of):
    """run_worker measuring ``grad_of(release)`` (autodiff of two FD items of values 1, 2)."""
    import sys
    from types import SimpleNamespace

    from defects4warp import envs, isolation

    measured = []

    def fake_worker(path, device, scale, options, timeout_s, python, script=None):
        rel = "1.19.0" if python == sys.executable else python.split("/")[-1]
        measured.append(rel)
        g = grad_of(rel)
        return SimpleNamespace(doc=doc([1.0, 2.0], g, sig="agrees" if g == [1.0, 2.0] else "subtly_wrong"),
                               failure=None)

    monkeypatch.setattr(envs, "ensure_env", lambda r, log=None: f"/envs/{r}")
    monkeypatch.setattr(isolation, "run_worker", fake_worker)
    monkeypatch.setattr(envs, "installed_warp_version", lambda: "1.19.0")
    return measured


def test_bisection_finds_the_release_that_agrees_not_an_earlier_wrong_change(monkeypatch):
    """1.0.2 computes 0, 1.12.1-1.18.0 another wrong gradient, 1.19.0 the right one: the release
    that fixed it is 1.19.0 (its changelog entry names the classes), not 1.12.1, which only
    changed one wrong gradient into another (the previous bisection answered 1.12.1, and the
    engine read the unlisted release as Warp's own defect)."""
    from packaging.version import Version

    def grad(rel):
        v = Version(rel)
        return [0.0, 0.0] if v < Version("1.12.1") else [1.0, 2.0] if v >= Version("1.19.0") else [0.5, 2.5]

    _fake_releases(monkeypatch, grad)
    out = release.differential("x", "cpu", "small", "1.0.2", base_doc=doc([1.0, 2.0], [0.0, 0.0], sig="zero"))
    assert out["first_change"] == "1.19.0" and out["bracket"] == ["1.18.0", "1.19.0"]
    assert out["bisected_against"] == "1.19.0"
    assert [e.id for e in assess_differential(out, copies=0).cited] == ["release_first_change:1.19.0"]


def test_a_change_among_old_releases_is_pinned(monkeypatch):
    """Right from 1.12.1 on, wrong on 1.0.2: the bisection measures the old releases too and
    names 1.12.1 (1.11.1 is still wrong); 1.12.1 has no changelog entry of a taping change, and
    the other release agrees with FD: evidence of Warp's own defect (release_changed)."""
    from packaging.version import Version

    measured = _fake_releases(monkeypatch, lambda rel: [1.0, 2.0] if Version(rel) >= Version("1.12.1") else [0.0, 0.0])
    out = release.differential("x", "cpu", "small", "1.0.2", base_doc=doc([1.0, 2.0], [0.0, 0.0], sig="zero"))
    assert out["first_change"] == "1.12.1" and out["bracket"] == ["1.11.1", "1.12.1"]
    assert "1.0.2" not in measured and "1.11.1" in measured
    a = assess_differential(out)
    assert [e.id for e in a.cited] == ["release_changed"]
    assert "first release where it changes: 1.12.1" in a.evidence[0]["finding"]
    assert release._adjacent("1.11.1", "1.12.1") and not release._adjacent("1.0.2", "1.12.1")


def test_a_gradient_wrong_on_both_ends_and_right_in_between_is_no_evidence_of_a_warp_defect(monkeypatch):
    """The shape of harbour-buoy-ballast-drift/buggy (a local vector component assigned twice):
    wrong below 1.4.2, right on 1.4.2-1.6.2, wrong again from 1.7.2. Under test on 1.3.3 the newest
    release is wrong too: a release in between computing it right does not make the error Warp's
    (the release that hides a program's bug for a while is not a fix), so nothing is cited; the
    relative change of a zero gradient is bounded (it read 6e+301)."""
    from packaging.version import Version

    def grad(rel):
        v = Version(rel)
        return [0.0, 0.0] if v < Version("1.4.2") else [1.0, 2.0] if v < Version("1.7.2") else [4.0, 1.0]

    _fake_releases(monkeypatch, grad)
    out = release.differential("x", "cpu", "small", "1.3.3", base_doc=doc([1.0, 2.0], [0.0, 0.0], sig="zero"))
    assert out["bisected_against"] == "1.3.3" and out["first_change"] == "1.4.2"
    assert out["compared"]["1.19.0"]["relative_change"] == 1.0
    a = assess_differential(out)
    assert a.cited == [] and "disagrees with finite differences on 1.19.0 too" in a.evidence[0]["finding"]
    # under test on 1.7.2 (component reassignment): 1.19.0 computes the same gradient, no release evidence
    out = release.differential("x", "cpu", "small", "1.7.2", base_doc=doc([1.0, 2.0], [4.0, 1.0]))
    assert not out["compared"]["1.19.0"]["gradient_changed"] and assess_differential(out).cited == []
    # a taping bug wrong on every release, whose wrong gradient changes at 1.13.0: only 1.13.0's entry
    _fake_releases(monkeypatch, lambda rel: [0.5, 1.0] if Version(rel) < Version("1.13.0") else [2.0, 4.0])
    out = release.differential("x", "cpu", "small", "1.9.1", base_doc=doc([1.0, 2.0], [0.5, 1.0]))
    assert out["first_change"] == "1.13.0"
    assert [e.id for e in assess_differential(out, copies=0).cited] == ["release_first_change:1.13.0:no_copies"]


def test_an_open_bracket_shares_the_evidence_among_its_releases():
    """A failed measurement leaves the bracket (1.16.0, 1.18.0) open: 1.17.0 and 1.18.0 each get half,
    instead of the whole change being read as Warp's own defect."""
    diff = {"current": "1.12.1", "other": "1.19.0", "direction": "newer", "first_change": None,
            "bracket": ["1.16.0", "1.18.0"],
            "compared": {"1.19.0": {"objective_same": True, "gradient_changed": True, "b_agrees": True,
                                    "relative_change": 0.5}}}
    a = assess_differential(diff, copies=0)
    assert [(e.id, e.strength) for e in a.cited] == [("release_first_change:1.17.0:no_copies", 0.5),
                                                      ("release_first_change:1.18.0", 0.5)]
    assert "not every release in between could be measured" in a.evidence[0]["finding"]
    # an open bracket among releases without a changelog entry: release_changed in full
    old = dict(diff, bracket=["1.2.2", "1.5.1"])
    assert [(e.id, e.strength) for e in assess_differential(old).cited] == [("release_changed", 1.0)]
    # wrong on both: only the taping entries keep their share
    both = dict(diff, bracket=["1.12.1", "1.14.0"],
                compared={"1.19.0": dict(diff["compared"]["1.19.0"], b_agrees=False)})
    assert [(e.id, e.strength) for e in assess_differential(both, copies=0).cited] == [
        ("release_first_change:1.13.0:no_copies", 0.5)]


def test_access_patterns_tell_local_components_from_array_stores_and_struct_fields():
    """What the conformance suite's access cells are looked up by: a component of a kernel-local
    vector or matrix (measured zero on 1.0.2-1.3.3) is not an array element store (a parameter)
    or a struct field."""
    import ast

    src = ("def k(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3), s: S):\n"
           "    i = wp.tid()\n    c = wp.mat22()\n    c[0, 0] = c[0, 0] + x[i]\n    c[0, 1] += x[i]\n"
           "    v = wp.vec3()\n    v[1] = x[i]\n    v.z = x[i]\n    v.x += 1.0\n    y[i] = v\n"
           "    x[i] += 1.0\n    y[i].x = 2.0\n    s.a = 1.0\n    q = S()\n    q.mass = 2.0\n")
    node = ast.parse(src).body[0]
    assert access_patterns(node) == {"[component_write]", "[local_attribute_write]", "[local_component_add]",
                                             "[local_component_write]", "[local_matrix_add]", "[local_matrix_write]",
                                             "[element_write_add]"}
    only_arrays = ast.parse("def k(x: wp.array(dtype=float)):\n    i = wp.tid()\n    x[i] = 1.0\n    x[i] = x[i] * 2.0\n")
    assert access_patterns(only_arrays.body[0]) == set()
    # an in-place add on an element of a user-defined vector type, a local copied from a local, a
    # conditional expression with a plain array load as a branch; a built-in element type is not custom
    src3 = ("def k(x: wp.array(dtype=vec9), y: wp.array(dtype=wp.vec3d), f: bool):\n    i = wp.tid()\n"
            "    x[i] += x[i]\n    y[i] -= y[i]\n    u = 1.0\n    w = u\n    z = x\n    y[i] = y[i] if f else y[i] * 2.0\n")
    assert access_patterns(ast.parse(src3).body[0]) == {"[element_write_add]", "[vec9_element_add_twice]",
                                                                "[local_alias]", "[ternary_load]"}
    # a name bound to an array parameter is a view of it; a vector parameter is passed by value (a local);
    # -= is an add
    src2 = ("def f(out: wp.array(dtype=float), v: wp.vec3, m: wp.mat22):\n    a = out\n    b = a\n"
            "    b[0] = 1.0\n    v[0] = 2.0\n    m[0, 1] -= 1.0\n    return v\n")
    assert access_patterns(ast.parse(src2).body[0]) == {"[local_component_write]", "[local_matrix_add]"}
    # host code is not kernel code: only decorated functions are looked up
    host, kern = ast.parse("def host(t):\n    t[0] = 1.0\n\n@wp.kernel\ndef k(y: wp.array(dtype=float)):\n    pass\n"
                           "\n@wp.func_grad(f)\ndef g(x: float):\n    pass\n").body[0:2]
    assert not is_warp_function(host) and is_warp_function(kern)


def test_a_local_component_write_cites_the_release_where_it_has_no_adjoint(tmp_path):
    """The committed conformance data: a kernel accumulating a local mat22 component by component
    is direct evidence of Warp's own defect on 1.3.3 (every local component write has a zero adjoint
    there), and none on 1.4.2, where the cells agree."""
    (tmp_path / "problem.py").write_text(
        "import warp as wp\n\n@wp.kernel\ndef cov(w: wp.array(dtype=float), out: wp.array(dtype=wp.mat22)):\n"
        "    p = wp.tid()\n    c = wp.mat22()\n    for k in range(4):\n        c[0, 0] += w[p]\n    out[p] = c\n")
    a = builtin_findings(tmp_path, ["cov"], "1.3.3")
    (e,) = a.evidence
    assert e["data"]["builtin"] == "[local_matrix_add]" and e["data"]["evidence"] == "builtin_adjoint_defect"
    assert "[local_matrix_add](mat22f) zero" in e["finding"]
    assert builtin_findings(tmp_path, ["cov"], "1.4.2").evidence == []
    # the kernel agrees with finite differences in isolation: the defect does not move its adjoint
    (e,) = builtin_findings(tmp_path, ["cov"], "1.3.3", agreeing=["cov"]).evidence
    assert e["data"]["counted"] is False and "so it is not counted" in e["finding"]


def test_agreeing_kernels_match_both_names_and_never_excuse_a_failing_namesake():
    recs = [{"kernel": "make__locals__inner", "ok": True}, {"kernel": "integrate", "ok": True},
            {"kernel": "step", "ok": False}, {"kernel": "other__step", "ok": True},
            {"kernel": "spring", "skipped": "budget"}]
    assert agreeing_kernels(recs) == {"make__locals__inner", "inner", "integrate", "other__step"}


def test_a_module_level_option_counts_where_its_module_kernels_ran(tmp_path):
    """wp.set_module_options at module level runs when the program imports the module, before the
    traced gradient() call, so line coverage never sees it: it counts when the same file defines a
    launched kernel whose adjoint it reaches, not under `if __name__ == "__main__":`, not in a file
    of functions alone or whose kernels did not run, not for a kernel with its own
    enable_backward=True (unless, before 1.18, that kernel calls a function: the option then still
    reaches the function, canoe-sprint-stroke-profile's mechanism), and a `wp.config` assignment
    only above the file's first definition."""
    from defects4warp.engines.assess import source

    (tmp_path / "boat.py").write_text(
        "import warp as wp\nimport hull\n\nwp.set_module_options({'enable_backward': False})\n\n"
        "@wp.kernel(enable_backward=True)\ndef advance(x: wp.array(dtype=float)):\n    i = wp.tid()\n"
        "    x[i] = hull.drag(x[i])\n")
    (tmp_path / "hull.py").write_text("import warp as wp\n\n@wp.func\ndef drag(v: float):\n    return v * v\n")
    (tmp_path / "plain.py").write_text(
        "import warp as wp\n\nwp.set_module_options({'enable_backward': False})\n\n"
        "@wp.kernel\ndef relax(x: wp.array(dtype=float)):\n    i = wp.tid()\n\n"
        "wp.config.enable_backward = False\n")
    (tmp_path / "tools.py").write_text(
        "import warp as wp\n\nwp.set_module_options({'enable_backward': False})\n\n"
        "@wp.kernel\ndef unused(x: wp.array(dtype=float)):\n    i = wp.tid()\n\n"
        "if __name__ == '__main__':\n    wp.set_module_options({'enable_backward': False})\n")
    (tmp_path / "lib.py").write_text("import warp as wp\n\nwp.set_module_options({'enable_backward': False})\n\n"
                                     "@wp.func\ndef sq(v: float):\n    return v * v\n")
    (tmp_path / "problem.py").write_text("import boat\nimport plain\nimport tools\nimport lib\n")

    def ran(version, kernels=("advance", "relax")):
        doc = {"warp_version": version, "trace": {"coverage": {"files": {"problem.py": [1, 2]}}, "kernels": list(kernels)}}
        findings, ran_, available = source.scan(tmp_path, doc)
        assert available and {(f["file"], f["line"]) for f in findings if f["rule"] == "backward_disabled"} >= {
            ("boat.py", 4), ("plain.py", 3), ("plain.py", 9), ("tools.py", 3), ("tools.py", 10), ("lib.py", 3)}
        return {(f["file"], f["line"]) for f in ran_ if f["rule"] == "backward_disabled"}

    assert ran("1.17.0") == {("boat.py", 4), ("plain.py", 3)}
    assert ran("1.18.0") == {("plain.py", 3)}  # the kernel's own option reaches hull.drag from 1.18
    assert ran("1.17.0", kernels=("advance",)) == {("boat.py", 4)}
    # a captured script's coverage already holds its import-time lines
    doc = {"warp_version": "1.17.0", "capture": {"files": ["boat.py"]},
           "trace": {"coverage": {"files": {"boat.py": [1]}}, "kernels": ["advance"]}}
    assert not [f for f in source.scan(tmp_path, doc)[1] if f["rule"] == "backward_disabled"]
