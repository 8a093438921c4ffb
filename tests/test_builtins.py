"""The builtins conformance suite: enumeration, the FD comparison, cell states, the page and the lookup."""

import json

import numpy as np
import pytest

from defects4warp import builtins
from defects4warp.report import builtins_page as page


def test_enumeration_covers_more_than_300_overloads_on_the_installed_release():
    from defects4warp.builtins import check, suite

    specs = suite.enumerate_specs()
    ids = [s["id"] for s in specs]
    assert len(ids) == len(set(ids)) > 300
    by = {s["id"]: s for s in specs}
    # float32 and float64 overloads, several vector lengths, the templates and the tile ops
    assert {"sin(float32)", "sin(float64)", "length(vec2d)", "length(vec3f)", "length(vec4d)"} <= set(ids)
    assert by["tile_reduce(add)(tile8f)"]["differentiable"] is False
    assert by["tile_sum(tile8f)"]["differentiable"] is True
    assert "[component_add](vec3f)" in ids and "closest_point_edge_edge(vec3f,vec3f,vec3f,vec3f,float32)" in ids


def _case(tmp_path, body_grad, dtype="float64"):
    """A custom function sin(x) with the adjoint ``body_grad`` (source) and its Case."""
    from defects4warp.builtins import check, suite

    src = f"""import warp as wp

@wp.func
def fsin(x: wp.{dtype}):
    return wp.sin(x)

@wp.func_grad(fsin)
def adj_fsin(x: wp.{dtype}, adj_ret: wp.{dtype}):
    wp.adjoint[x] += {body_grad.replace("D(", f"wp.{dtype}(")}

@wp.kernel
def k0(a0: wp.array(dtype=wp.{dtype}), y: wp.array(dtype=wp.{dtype})):
    i = wp.tid()
    y[i] = fsin(a0[i])
"""
    mod = suite.load_module(src, str(tmp_path), f"d4w_test_fsin_{abs(hash(body_grad)) % 10**8}_{dtype}")
    spec = {"id": "fsin(x)", "builtin": "fsin", "args": [["x", dtype]], "ret": dtype, "dtype": dtype,
            "template": "call", "family": "scalar", "differentiable": True}
    return check.Case(spec, mod.k0, np.random.default_rng(1), 3, "cpu")


@pytest.mark.slow
def test_comparison_agrees_on_a_right_adjoint_and_calls_wrong_and_zero_ones(tmp_path):
    from defects4warp.builtins import check, suite

    right = check.compare(_case(tmp_path, "wp.cos(x) * adj_ret"))
    assert right["state"] == "agrees" and right["rel_err"] < 1e-8, right
    wrong = check.compare(_case(tmp_path, "D(1.1) * wp.cos(x) * adj_ret"))  # 10% too large
    assert wrong["state"] == "wrong" and 0.05 < wrong["rel_err"] < 0.2, wrong
    assert wrong["points"] and len(wrong["points"][0]["ad"]) == 1
    zero = check.compare(_case(tmp_path, "D(0.0) * adj_ret"))
    assert zero["state"] == "zero" and zero["rel_err"] == pytest.approx(1.0)
    # float32: a right adjoint stays within the noise model, 10% off does not
    assert check.compare(_case(tmp_path, "wp.cos(x) * adj_ret", "float32"))["state"] == "agrees"
    assert check.compare(_case(tmp_path, "D(1.1) * wp.cos(x) * adj_ret", "float32"))["state"] == "wrong"


@pytest.mark.slow
def test_measure_a_builtin_and_a_refused_access_pattern():
    from defects4warp.builtins import check, suite

    specs = {s["id"]: s for s in suite.enumerate_specs()}
    cells = check.measure([specs["sqrt(float64)"], specs["[component_mul](vec3d)"]], points=2)
    assert cells["sqrt(float64)"]["state"] == "agrees" and cells["sqrt(float64)"]["rel_err"] < 1e-8
    # 1.18.0 refuses composite-slot *= with backward enabled (P19): bisected to this overload alone
    assert cells["[component_mul](vec3d)"]["state"] == "build_error"
    assert "augmented assignment" in cells["[component_mul](vec3d)"]["message"]


DOCS = {
    "1.12.1": {"warp": "1.12.1", "device": "cpu", "registry": {"names": 300, "overloads": 3000, "differentiable": None},
               "cells": {"sign(vec3f)": {"builtin": "sign", "state": "wrong", "rel_err": 2.0, "dtype": "float32"},
                         "sin(float32)": {"builtin": "sin", "state": "agrees", "rel_err": 1e-6},
                         "tile_reduce(add)(tile8f)": {"builtin": "tile_reduce", "state": "zero", "rel_err": 1.0,
                                                      "differentiable": None}}},
    "1.19.0": {"warp": "1.19.0", "device": "cpu", "registry": {"names": 355, "overloads": 3464, "differentiable": 2003},
               "cells": {"sign(vec3f)": {"builtin": "sign", "state": "agrees", "rel_err": 0.0},
                         "sin(float32)": {"builtin": "sin", "state": "agrees", "rel_err": 1e-6},
                         "new(float32)": {"builtin": "new", "state": "agrees"},
                         "tile_reduce(add)(tile8f)": {"builtin": "tile_reduce", "state": "zero", "rel_err": 1.0,
                                                      "differentiable": False}}},
}


def test_changes_and_page_from_a_small_json(tmp_path):
    ch = page.changes(DOCS, "1.12.1", "1.19.0")
    assert [(c["id"], c["from"], c["to"]) for c in ch] == [("sign(vec3f)", "wrong", "agrees")]
    md = page.page_markdown(DOCS)
    assert "| 1.12.1 | 3 | 3 | 1 | 1 | 1 | 0 | 0 | 300 / 3000 / no flag |" in md
    assert "| `sign(vec3f)` | wrong 2 | ok |" in md
    assert "| `tile_reduce(add)(tile8f)` | zero | zero (nd) |" in md
    assert "**1.12.1 -> 1.19.0**: 1 overload(s)" in md and "`new(float32)`" not in md
    kept = page.splice("# Title\n\nhand text\n\n" + md + "\nafter\n", page.page_markdown({"1.19.0": DOCS["1.19.0"]}))
    assert kept.startswith("# Title\n\nhand text") and kept.rstrip().endswith("after") and "1.12.1 |" not in kept


@pytest.fixture
def data(tmp_path, monkeypatch):
    for r, d in DOCS.items():
        (tmp_path / f"{r}-cpu.json").write_text(json.dumps(d))
    monkeypatch.setattr(builtins, "data_dir", lambda: tmp_path)
    builtins.load.cache_clear()
    yield tmp_path
    builtins.load.cache_clear()


def test_lookup_returns_the_defective_overloads_of_the_release(data):
    got = builtins.lookup("1.12.1", "cpu", ["sign", "sin", "tile_reduce"])
    assert [(c["id"], c["state"], c["rel_err"]) for c in got] == [("sign(vec3f)", "wrong", 2.0),
                                                                   ("tile_reduce(add)(tile8f)", "zero", 1.0)]
    assert [c["id"] for c in builtins.lookup("1.19.0", "cuda:0", ["sign", "tile_reduce"])] == \
        ["tile_reduce(add)(tile8f)"]  # no CUDA data: falls back to CPU
    assert builtins.lookup("1.5.1", "cpu", ["sign"]) == []  # not measured, nothing measured below it
    # between two measured releases: what is defective on both sides
    got = builtins.lookup("1.15.0", "cpu", ["sign", "tile_reduce"])
    assert [(c["id"], c["bracket"]) for c in got] == [("tile_reduce(add)(tile8f)", ["1.12.1", "1.19.0"])]
    assert builtins.measured_releases() == ["1.12.1", "1.19.0"]


def test_release_probe_reads_the_measured_data(data, tmp_path):
    from defects4warp.engines.assess import builtins as builtins_assess

    (tmp_path / "problem.py").write_text(
        "import warp as wp\n\n"
        "@wp.func\ndef field(p: wp.vec3):\n    return wp.sign(p)\n\n"
        "@wp.kernel\ndef advect(x: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3)):\n"
        "    i = wp.tid()\n    y[i] = field(x[i])\n    y[i].x += x[i].y\n")
    a = builtins_assess.builtin_findings(tmp_path, ["advect"], "1.12.1")
    assert [e["data"]["evidence"] for e in a.evidence] == ["builtin_adjoint_defect"]
    f = a.evidence[0]["finding"]
    assert "kernel code field uses wp.sign" in f and "sign(vec3f) wrong (relative error 2)" in f
    assert builtins_assess.builtin_findings(tmp_path, ["advect"], "1.19.0").evidence == []
    assert builtins_assess.builtin_findings(tmp_path, [], "1.12.1").evidence == []


def test_audit_section_lists_the_changed_builtins(data):
    got, md = page.audit_section("1.12.1", "1.19.0")
    assert got["measured"] and [c["id"] for c in got["changes"]] == ["sign(vec3f)"]
    assert "| `sign(vec3f)` | wrong 2 | ok |" in md
    got, md = page.audit_section("1.12.1", "1.5.1")
    assert not got["measured"] and "Not measured by the builtins conformance suite: 1.5.1" in md


def test_component_multiply_is_evidence_for_inplace_math(tmp_path):
    from defects4warp.engines.assess import builtins as builtins_assess

    (tmp_path / "problem.py").write_text(
        "import warp as wp\n\n@wp.kernel\ndef scale(p: wp.array(dtype=wp.vec3), s: wp.array(dtype=float)):\n"
        "    i = wp.tid()\n    p[i].x *= s[i]\n")

    def fake(rel, device, names):
        return [{"id": "[component_mul](vec3f)", "builtin": "[component_mul]", "state": "zero", "rel_err": 1.0}
                for n in names if n == "[component_mul]"]

    from defects4warp.evidence_table import evidence_classes

    a = builtins_assess.builtin_findings(tmp_path, ["scale"], "1.12.1", lookup=fake)
    assert [e["data"]["evidence"] for e in a.evidence] == ["builtin_component_mul_defect"]
    assert evidence_classes("builtin_component_mul_defect") == ("inplace_math",)
    assert "the access pattern [component_mul]" in a.evidence[0]["finding"]


@pytest.mark.slow
def test_measure_release_end_to_end_and_resumes_from_the_store(tmp_path):
    import sys

    from defects4warp.builtins import conformance
    from defects4warp.run.store import ResultStore

    store = ResultStore(tmp_path / "store")
    pick = {"frac(float64)", "sqrt(float64)"}
    doc = conformance.measure_release("1.19.0", sys.executable, store=store, only=lambda s: s["id"] in pick)
    assert set(doc["cells"]) == pick and doc["reused_batches"] == 0
    assert doc["cells"]["sqrt(float64)"]["state"] == "agrees"
    frac = doc["cells"]["frac(float64)"]
    assert frac["state"] == "zero" and frac["differentiable"] is False and frac["rel_err"] == pytest.approx(1.0)
    again = conformance.measure_release("1.19.0", sys.executable, store=store, only=lambda s: s["id"] in pick)
    assert again["reused_batches"] == 1 and again["cells"] == doc["cells"]
    small = conformance.compact(doc)
    assert "points" in small["cells"]["frac(float64)"] and "points" not in small["cells"]["sqrt(float64)"]


def test_an_agreement_resting_only_on_zero_fd_with_skipped_kinks_is_inconclusive():
    from defects4warp.builtins import conformance

    cell = {"state": "agrees", "coords": 8, "skipped": 2, "noise": 0.0, "rel_err": 0.0, "builtin": "tile_max"}
    assert conformance.finalize(cell)["state"] == "inconclusive"
    ok = {"state": "agrees", "coords": 8, "skipped": 2, "noise": 1e-5, "rel_err": 2e-5}
    assert conformance.finalize(ok)["state"] == "agrees"
    assert conformance.finalize(dict(cell, skipped=0))["state"] == "agrees"  # e.g. floor: FD 0, AD 0


def test_tile_inputs_keep_every_pair_of_elements_apart_so_max_and_min_are_measurable():
    from defects4warp.builtins import check, suite

    gaps = []
    for seed in range(200):
        v = suite.tile_values(np.random.default_rng([0, seed])).ravel()
        assert v.shape == (suite.TILE_N,) and np.all(np.abs(v) <= 1.5)
        d = np.diff(np.sort(v))
        gaps.append(d.min())
    # at least TILE_GAP between any two elements: the top two never sit within a float32 FD step
    assert min(gaps) >= suite.TILE_GAP
    assert suite.TILE_GAP > 2 * check.STEPS["float32"] * 1.5


@pytest.mark.slow
def test_tile_max_and_min_are_measured_zero_on_the_installed_release():
    from defects4warp.builtins import check, suite

    specs = {s["id"]: s for s in suite.enumerate_specs()}
    cells = check.measure([specs["tile_max(tile8f)"], specs["tile_min(tile8f)"], specs["tile_sum(tile8f)"]])
    assert cells["tile_sum(tile8f)"]["state"] == "agrees"
    for oid in ("tile_max(tile8f)", "tile_min(tile8f)"):
        # no warning, no error: the adjoint of the selected element is 0 where FD is the seed
        assert cells[oid]["state"] == "zero" and cells[oid]["skipped"] == 0, cells[oid]
        assert cells[oid]["rel_err"] == pytest.approx(1.0)


def test_merge_data_replaces_the_measured_cells_and_keeps_the_others(data):
    part = {"warp": "1.19.0", "device": "cpu", "registry": {"names": 1, "overloads": 1, "differentiable": 1},
            "cells": {"sign(vec3f)": {"builtin": "sign", "state": "wrong", "rel_err": 3.0}}}
    merged = builtins.merge_data(part)
    assert merged["registry"] == DOCS["1.19.0"]["registry"]
    assert merged["cells"]["sign(vec3f)"]["state"] == "wrong"
    assert set(merged["cells"]) == set(DOCS["1.19.0"]["cells"])
    with pytest.raises(FileNotFoundError, match="1.5.1-cpu.json"):
        builtins.merge_data(dict(part, warp="1.5.1"))


def test_defective_builtins_table_names_the_releases_and_the_tagged_cases():
    docs = dict(DOCS)
    docs["1.0.2"] = {"warp": "1.0.2", "device": "cpu", "registry": {},
                     "cells": {"sign(vec3f)": {"builtin": "sign", "state": "wrong", "rel_err": 2.0}}}
    rows = {b["builtin"]: b for b in page.defective_builtins(docs)}
    assert set(rows) == {"sign", "tile_reduce"}
    assert rows["sign"]["releases"] == ["1.0.2", "1.12.1"] and rows["sign"]["not_differentiable"] == []
    assert rows["tile_reduce"]["declared"] == ["1.12.1"] and rows["tile_reduce"]["not_differentiable"] == ["1.19.0"]
    lines = page.cases_table(docs, {"tile_reduce": ["channel-energy-calibration"]})
    assert "| `sign` | wrong: 1.0.2-1.12.1 | - | none |" in lines
    assert "| `tile_reduce` | zero: 1.12.1-1.19.0 | 1.19.0 | `channel-energy-calibration` |" in lines
    md = page.page_markdown(docs, cases={})
    assert "### Defective builtins and their corpus cases" in md and "### Defective builtins" not in page.page_markdown(docs)


def test_every_tagged_builtin_of_the_bundled_corpus_is_one_the_data_measures_defective():
    tagged = page.corpus_builtins()
    assert {"tile_min", "tile_reduce", "div", "curlnoise"} <= set(tagged)
    defective = set()
    for r in builtins.measured_releases():
        defective |= {c["builtin"] for c in builtins.load(r)["cells"].values() if c["state"] in ("wrong", "zero")}
    assert set(tagged) <= defective, set(tagged) - defective


def test_builtins_command_writes_no_data_without_the_data_flag(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from defects4warp.builtins import conformance
    from defects4warp.cli import main
    from defects4warp import envs

    written = []
    monkeypatch.setattr(envs, "python_for", lambda rel, log=None: ("python", rel))
    monkeypatch.setattr(conformance, "measure_release", lambda ver, py, **kw: {
        "warp": ver, "device": "cpu", "registry": {}, "seconds": 0.0, "reused_batches": 0, "batches": 1,
        "cells": {"tile_max(tile8f)": {"builtin": "tile_max", "family": "tile", "dtype": "float32",
                                       "differentiable": False, "state": "zero", "rel_err": 1.0}}
        if kw["only"] is None or kw["only"]({"builtin": "tile_max", "id": "tile_max(tile8f)"}) else {}})
    monkeypatch.setattr(builtins, "write_data", lambda doc, device="cpu": written.append(doc) or "x.json")
    monkeypatch.setattr(page, "write_page", lambda path=None: written.append("page") or "page.md")
    res = CliRunner().invoke(main, ["maint", "builtins", "--warp", "1.19.0", "--only", "tile_max",
                                    "--results", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    assert written == []
    res = CliRunner().invoke(main, ["maint", "builtins", "--warp", "1.19.0", "--only", "frac",
                                    "--results", str(tmp_path / "r")])
    assert res.exit_code == 0 and "matches no overload" in res.output


SLICE_CELLS = [f"[{p}]({d})" for p in ("slice_row_read", "slice_plane_read", "slice_line_read")
               for d in ("float32", "float64")]
TILE_WRITE_CELLS = ["[tile_element_write](float32)", "[tile_element_write](float64)",
                    "[tile_vector_component_write](vec3f)", "[tile_vector_component_write](vec3d)",
                    "[tile_matrix_element_write](mat22f)", "[tile_matrix_element_write](mat22d)"]


def test_slice_and_tile_write_templates_generate_the_access_they_name():
    from defects4warp.builtins import check, suite

    by = {s["id"]: s for s in suite.enumerate_specs()}
    assert set(SLICE_CELLS + TILE_WRITE_CELLS) <= set(by)
    # the slice is taken inside the kernel from an input of the pattern's dimension, then read by element
    src = "\n".join(suite.kernel_source(0, by["[slice_line_read](float64)"]))
    assert "a0: wp.array(dtype=wp.float64, ndim=3)" in src and "    s = a0[i, 1]" in src
    assert "s[0] * s[0] + wp.float64(3.0) * s[1]" in src
    src = "\n".join(suite.kernel_source(0, by["[slice_plane_read](float32)"]))
    assert "ndim=3" in src and "    s = a0[i]" in src and "s[0, 1] * s[1, 0]" in src
    assert "ndim=2" in "\n".join(suite.kernel_source(0, by["[slice_row_read](float32)"]))
    # the tile write replaces one scalar of the first element of a loaded tile, which is then stored
    src = suite.kernel_source(3, by["[tile_matrix_element_write](mat22d)"])
    assert src[-3:] == [f"    t = wp.tile_load(a0, shape={suite.TILE_N})", "    t[0][0, 1] = wp.float64(3.0) * a1[0]",
                        "    wp.tile_store(y, t)"]
    assert "    t[0][1] = wp.float32(3.0) * a1[0]" in suite.kernel_source(0, by["[tile_vector_component_write](vec3f)"])
    assert "    t[0] = wp.float32(3.0) * a1[0]" in suite.kernel_source(0, by["[tile_element_write](float32)"])


def test_slice_and_tile_write_cases_shape_their_inputs_per_point():
    from defects4warp.builtins import check, suite

    by = {s["id"]: s for s in suite.enumerate_specs()}
    rng = np.random.default_rng(0)
    c = check.Case(by["[slice_plane_read](float64)"], None, rng, 3, "cpu")
    (_, _, vals), = c.args
    assert vals.shape == (3, 4) and c.y0 is None  # every element of the 2x2 plane is a coordinate
    arr, = c._wp_arrays([vals], False)
    assert arr.shape == (3, 2, 2) and np.array_equal(arr.numpy().reshape(3, 4), vals)
    # one launch of TILE_N threads: a point per tile element, the matrix and the scalar as two inputs
    c = check.Case(by["[tile_matrix_element_write](mat22f)"], None, rng, 3, "cpu")
    assert c.points == suite.TILE_N and [v.shape for (_, _, v) in c.args] == [(suite.TILE_N, 4), (suite.TILE_N, 1)]
    assert c.W.shape == (suite.TILE_N, 4)


def test_committed_slice_and_tile_write_cells_flag_each_release_before_its_fix_and_none_after():
    # changelog 1.2.0-50 (in-kernel slices) and tile-scalar-write-adjoint (shipped in 1.17.0)
    assert {c: builtins.load("1.1.0")["cells"][c]["state"] for c in SLICE_CELLS} == dict.fromkeys(SLICE_CELLS, "zero")
    assert {c: builtins.load("1.2.2")["cells"][c]["state"] for c in SLICE_CELLS} == dict.fromkeys(SLICE_CELLS, "agrees")
    before = builtins.load("1.16.0")["cells"]
    assert {c: before[c]["state"] for c in TILE_WRITE_CELLS} == dict.fromkeys(TILE_WRITE_CELLS, "wrong")
    assert {c: builtins.load("1.17.0")["cells"][c]["state"] for c in TILE_WRITE_CELLS} == \
        dict.fromkeys(TILE_WRITE_CELLS, "agrees")
    # the defect: the replaced entry (m[0][0, 1], flattened index 1) keeps its weight as adjoint, FD is 0;
    # x[0] (the last coordinate) is right
    pt = before["[tile_matrix_element_write](mat22d)"]["points"][0]
    assert pt["fd"][1] == 0.0 and abs(pt["ad"][1]) > 0.5 and pt["ad"][4] == pytest.approx(pt["fd"][4], rel=1e-6)
    # no finding where Warp is right: every flagged release precedes the fix
    from packaging.version import Version

    for cells, fixed in ((SLICE_CELLS, "1.2.0"), (TILE_WRITE_CELLS, "1.17.0")):
        for r in builtins.measured_releases():
            doc = builtins.load(r)["cells"]
            flagged = [c for c in cells if doc.get(c, {}).get("state") in builtins.DEFECT_STATES]
            assert not flagged or Version(r) < Version(fixed), (r, flagged)
            if Version(r) >= Version(fixed):
                assert all(doc[c]["state"] == "agrees" for c in cells), r


@pytest.mark.slow
def test_slice_and_tile_write_templates_agree_on_the_installed_release():
    from defects4warp.builtins import check, suite

    by = {s["id"]: s for s in suite.enumerate_specs()}
    cells = check.measure([by[c] for c in SLICE_CELLS + TILE_WRITE_CELLS[::2]])
    assert {c: v["state"] for c, v in cells.items()} == dict.fromkeys(SLICE_CELLS + TILE_WRITE_CELLS[::2], "agrees")
