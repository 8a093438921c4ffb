"""The release probe on synthetic measurements and sources (no Warp run)."""

from defects4warp.probes import release


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
    from defects4warp.engines.evidence import evidence_classes

    a = release.assess_differential(diff, copies=2)
    assert [e.id for e in a.cited] == ["release_first_change:1.17.0"]
    assert evidence_classes("release_first_change:1.17.0") == ("copy_adjoint", "warp_adjoint_bug")
    assert "first release where it changes: 1.17.0" in a.evidence[0]["finding"]
    # no copy in the traced call: the copy-adjoint entry of 1.17.0 cannot explain it
    assert [e.id for e in release.assess_differential(diff, copies=0).cited] == ["release_first_change:1.17.0:no_copies"]
    assert evidence_classes("release_first_change:1.17.0:no_copies") == ("warp_adjoint_bug",)
    # 1.15.0's entry is about copy adjoints only: the table has no no_copies row for it
    assert [e.id for e in release.assess_differential(dict(diff, first_change="1.15.0"), copies=0).cited] == [
        "release_first_change:1.15.0"]
    assert [e.id for e in release.assess_differential(dict(diff, first_change=None)).cited] == ["release_changed"]
    same = dict(diff, compared={"1.19.0": dict(diff["compared"]["1.19.0"], gradient_changed=False)})
    assert release.assess_differential(same).cited == [] and release.assess_differential(same).evidence[0]["clean"]


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
    a = release.builtin_findings(tmp_path, ["advect"], "1.13.0", lookup=_fake_lookup)
    assert [e["data"]["evidence"] for e in a.evidence] == ["builtin_adjoint_defect"]
    assert "kernel code field uses wp.curlnoise" in a.evidence[0]["finding"]
    assert "curlnoise(uint32,vec3f,uint32,float32,float32) zero" in a.evidence[0]["finding"]
    assert release.builtin_findings(tmp_path, ["advect"], "1.14.0", lookup=_fake_lookup).evidence == []
    assert release.builtin_findings(tmp_path, [], "1.13.0", lookup=_fake_lookup).evidence == []



def test_differential_from_an_old_release_bisects_only_engine_releases(monkeypatch):
    """Under test on 1.5.1 (older than ENGINE_RELEASES), the differential still
    compares with the newest release and bisects only 1.12.1 and later."""
    from types import SimpleNamespace

    from defects4warp import envs, isolation, runner

    measured = []

    def fake_worker(path, device, scale, options, timeout_s, python, script=None):
        import sys

        rel = "1.19.0" if python == sys.executable else python.split("/")[-1]
        measured.append(rel)
        fixed = tuple(map(int, rel.split("."))) >= (1, 14, 0)
        return SimpleNamespace(doc=doc([1.0, 2.0], [1.0, 2.0] if fixed else [2.0, 4.0],
                                       sig="agrees" if fixed else "exact_factor"), failure=None)

    monkeypatch.setattr(envs, "ensure_env", lambda r, log=None: f"/envs/{r}")
    monkeypatch.setattr(isolation, "run_worker", fake_worker)
    monkeypatch.setattr(runner, "installed_warp_version", lambda: "1.19.0")
    out = release.differential("x", "cpu", "small", "1.5.1", base_doc=doc([1.0, 2.0], [2.0, 4.0]))
    assert out["other"] == "1.19.0" and out["first_change"] == "1.14.0"
    assert set(measured) <= set(envs.ENGINE_RELEASES)
