"""Measurement apart from interpretation: a stored measurement is re-read by the
current interpretation code, stays current while the code that took it is
unchanged, and the committed measurement bundles re-score an engine file with
no Warp run."""

import gzip
import hashlib
import json

import pytest

from defects4warp import provenance
from defects4warp.corpus.case import load_corpus
from defects4warp.report.engine_matrix import (
    EngineFileError, bundle_path, read, read_bundle, rescore_release, write_bundle,
)
from defects4warp.engines import get_engine
from defects4warp.run.runner import plan, run
from defects4warp.run.store import ResultStore

from tiny_corpus import make_tiny_corpus


def test_loaded_modules_are_the_imported_harness_files_with_their_sha256():
    mods = provenance.loaded_modules()
    assert "provenance.py" in mods and "run/store.py" in mods
    raw = (provenance.PACKAGE_ROOT / "provenance.py").read_bytes()
    assert mods["provenance.py"] == hashlib.sha256(raw).hexdigest()[:provenance.DIGEST_CHARS]
    # nothing outside the package (numpy, warp, the tests) is listed
    assert all(not k.startswith("..") and not k.startswith("/") for k in mods)


def test_a_measurement_is_current_exactly_while_its_modules_are_unchanged(tmp_path):
    store = ResultStore(tmp_path)
    fields = {"kind": "measurement", "variant": "v", "measurer": {"worker": {}}, "warp": "1.19.0",
              "device": "cpu", "scale": "small", "script": None}
    current = provenance.digests(("probes/fd.py", "isolation.py"))
    assert set(current) == {"probes/fd.py", "isolation.py"}
    store.put(fields, {"doc": {"x": 1}, "code": current})
    assert store.get(fields)["doc"] == {"x": 1}
    assert (store.hits, store.stale) == (1, 0)
    # one module edited since: stale, a miss, counted
    store.put(fields, {"doc": {"x": 2}, "code": dict(current, **{"probes/fd.py": "0" * 16})})
    assert store.get(fields) is None
    assert (store.hits, store.stale, store.misses) == (1, 1, 1)
    assert provenance.changed_modules(dict(current, **{"probes/fd.py": "0" * 16})) == ["probes/fd.py"]
    # a module that no longer exists, or no code at all, is never current
    assert provenance.changed_modules({"probes/gone.py": "0" * 16}) == ["probes/gone.py"]
    assert provenance.changed_modules({}) == ["(no code recorded)"]


def test_other_kinds_are_not_judged_by_code(tmp_path):
    store = ResultStore(tmp_path)
    fields = {"kind": "validation", "variant": "v"}
    store.put(fields, {"code": {"probes/fd.py": "0" * 16}})
    assert store.get(fields) == {"code": {"probes/fd.py": "0" * 16}} and store.stale == 0


def test_a_bundle_that_is_not_one_is_refused_naming_file_and_line(tmp_path):
    p = tmp_path / "engine-1.19.0.measurements.jsonl.gz"
    p.write_bytes(b"not gzip")
    with pytest.raises(EngineFileError, match="engine-1.19.0.measurements.jsonl.gz: not a gzip"):
        read_bundle(p)
    write_bundle(p, {"release": "1.19.0"}, [{"case": "c", "variant": "v", "scale": "small", "program": "adapter",
                                            "variant_digest": "d", "record": {}}])
    header, entries = read_bundle(p)
    assert header["format"] == "defects4warp-measurements/1" and entries[0]["case"] == "c"
    # equal measurements give equal bytes (no time stamp in the gzip header)
    first = p.read_bytes()
    write_bundle(p, {"release": "1.19.0"}, entries)
    assert p.read_bytes() == first
    lines = gzip.decompress(first).decode().splitlines()
    p.write_bytes(gzip.compress(("\n".join(lines) + '\n{"case": "c"}\n').encode()))
    with pytest.raises(EngineFileError, match=r"line 3: no 'variant' field"):
        read_bundle(p)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """The reference engine on two tiny cases (a correct one and a factor-of-two
    bug) with a result store, once for the module."""
    root = make_tiny_corpus(tmp_path_factory.mktemp("corpus"), ["tiny-cubic", "tiny-factor-two"])
    cases, errors = load_corpus(root)
    assert not errors
    items = plan(cases)
    store = ResultStore(tmp_path_factory.mktemp("store"))
    measurements = {}
    engine = get_engine("reference", timeout_s=120)
    doc = run(items, engine, store=store, measurements=measurements)
    return {"cases": cases, "items": items, "store": store, "doc": doc, "measurements": measurements}


@pytest.mark.slow
def test_an_interpretation_change_rescores_from_the_store_with_no_warp_run(measured, monkeypatch):
    from defects4warp.engines import reference

    first = {r["case"]: r["diagnosis"]["verdict"] for r in measured["doc"]["results"]}
    assert first == {"tiny-cubic": "no_bug", "tiny-factor-two": "bug"}
    assert set(measured["measurements"]) == {0, 1}
    for rec in measured["measurements"].values():
        assert rec["format"] == "defects4warp-measurement/1"
        assert "probes/worker.py" in rec["code"] and "probes/fd.py" in rec["code"]
        # interpretation code is not part of what took the measurement; engines/release.py is: it runs the
        # release differential's measurement (its module moved from probes/ to the engine layer)
        assert not [k for k in rec["code"] if k.startswith(("engines/", "rules/")) and k != "engines/release.py"]

    def no_measuring(*a, **k):
        raise AssertionError("a stored measurement was measured again")

    real = reference.interpret

    def inverted(doc, findings=None, **kw):
        d = real(doc, findings, **kw)
        return dict(d, verdict={"bug": "no_bug", "no_bug": "bug"}.get(d["verdict"], d["verdict"]))

    monkeypatch.setattr(reference.ReferenceEngine, "measure", no_measuring)
    monkeypatch.setattr(reference, "interpret", inverted)
    engine = get_engine("reference", timeout_s=120)
    again = run(measured["items"], engine, store=measured["store"])
    assert again["summary"]["reused"] == 2
    assert {r["case"]: r["diagnosis"]["verdict"] for r in again["results"]} == {"tiny-cubic": "bug",
                                                                               "tiny-factor-two": "no_bug"}
    # scored against the labels by the new reading
    assert again["summary"]["verdict_accuracy"] == 0.0


@pytest.mark.slow
def test_a_changed_measuring_module_remeasures_only_the_records_that_list_it(measured, tmp_path):
    store = ResultStore(tmp_path)
    items, recs = measured["items"], measured["measurements"]
    engine = get_engine("reference", timeout_s=120)
    from defects4warp.run.store import measurement_fields

    for i, it in enumerate(items):
        rec = json.loads(json.dumps(recs[i]))
        if it.case.id == "tiny-cubic":  # this one was taken by a probe module that has changed since
            rec["code"]["probes/fd.py"] = "0" * 16
        store.put(measurement_fields(it.variant.path, engine, measured["doc"]["summary"]["warp_version"], "cpu",
                                     it.scale), rec)
    doc = run(items, engine, store=store)
    assert doc["summary"]["reused"] == 1 and store.stale == 1
    assert {r["case"]: r["diagnosis"]["verdict"] for r in doc["results"]} == {"tiny-cubic": "no_bug",
                                                                            "tiny-factor-two": "bug"}


def test_document_difference_ignores_durations_and_temporary_paths_only():
    from defects4warp.report.engine_matrix import document_difference

    a = {"fd": {"items": [1.0, 2.0]}, "cost": {"wall_s": 1}, "gradient_call_s": [0.2],
         "trace": {"coverage": {"/tmp/d4w-abc123/program/p.py": [3]}}}
    b = {"fd": {"items": [1.0, 2.0 + 1e-12]}, "cost": {"wall_s": 9}, "gradient_call_s": [0.7],
         "trace": {"coverage": {"/tmp/d4w-zz9/program/p.py": [3]}}}
    assert document_difference(a, b) is None
    b["fd"]["items"][1] = 2.001
    assert document_difference(a, b) == "/fd/items[1]: 2.0 != 2.001"
    b["fd"]["items"] = [1.0]
    assert document_difference(a, b) == "/fd/items: 2 items != 1"
    assert document_difference({"v": "bug"}, {"v": "no_bug"}) == "/v: 'bug' != 'no_bug'"


def _bundle_for(measured, tmp_path):
    from defects4warp.report.engine_matrix import corpus_digest, engine_identity
    from defects4warp.report.pages.measuring import _measure_file
    from defects4warp.run.runner import installed_warp_version

    path = tmp_path / "docs" / "data" / f"engine-{installed_warp_version()}.json"
    ident = engine_identity(get_engine("reference"))
    _measure_file(path, installed_warp_version(), measured["cases"], ident, corpus_digest(measured["items"]),
                  engine_name="reference", device="cpu", jobs=1, timeout_s=120, store=measured["store"], fresh=False,
                  executor=None, programs="auto", selection="*", on_result=None, on_start=None,
                  log=lambda m: None)
    return path


def _tamper(path, edit):
    header, entries = read_bundle(bundle_path(path))
    for e in entries:
        edit(e["record"])
    write_bundle(bundle_path(path), {k: v for k, v in header.items() if k != "format"}, entries)


@pytest.mark.slow
def test_a_neutral_change_to_measuring_code_costs_a_sample_not_a_release(measured, tmp_path):
    from defects4warp.report.engine_matrix import neutral_check

    path = _bundle_for(measured, tmp_path)
    # as if both runs had been measured before probes/fd.py was last edited
    _tamper(path, lambda r: r["code"].update({"probes/fd.py": "0" * 16}))
    assert rescore_release(path, measured["cases"])[0] is None
    res = neutral_check(path, measured["cases"], sample=1, timeout_s=120)
    assert res["candidates"] == 2 and len(res["sampled"]) == 1 and res["sampled"][0]["difference"] is None
    assert res["neutral"] and res["restamped"] == 2 and res["changed_modules"] == ["probes/fd.py"]
    doc, needs = rescore_release(path, measured["cases"])
    assert needs == [] and [r["verdict"] for r in doc["runs"]] == ["no_bug", "bug"]


@pytest.mark.slow
def test_a_change_that_moved_a_measurement_is_reported_and_nothing_is_restamped(measured, tmp_path):
    from defects4warp.report.engine_matrix import neutral_check

    path = _bundle_for(measured, tmp_path)

    def edit(r):
        r["code"]["probes/fd.py"] = "0" * 16
        r["doc"]["determinism"]["gradient_norms"][0] *= 1.5

    _tamper(path, edit)
    before = bundle_path(path).read_bytes()
    res = neutral_check(path, measured["cases"], sample=2, timeout_s=120)
    assert not res["neutral"] and res["restamped"] == 0
    assert all(s["difference"].startswith("/determinism/gradient_norms[0]: ") for s in res["sampled"])
    assert bundle_path(path).read_bytes() == before


@pytest.mark.slow
def test_pages_measure_writes_a_bundle_that_rescores_to_the_same_engine_file(measured, tmp_path, monkeypatch):
    from defects4warp.report.pages.measuring import _measure_file
    from defects4warp.report.engine_matrix import corpus_digest, engine_identity
    from defects4warp.run.runner import installed_warp_version

    rel = installed_warp_version()
    path = tmp_path / "docs" / "data" / f"engine-{rel}.json"
    cases, items = measured["cases"], measured["items"]
    ident = engine_identity(get_engine("reference"))
    wrote = _measure_file(path, rel, cases, ident, corpus_digest(items), engine_name="reference", device="cpu",
                          jobs=1, timeout_s=120, store=measured["store"], fresh=False, executor=None,
                          programs="auto", selection="*", on_result=None, on_start=None, log=lambda m: None)
    assert wrote and bundle_path(path).is_file()
    header, entries = read_bundle(bundle_path(path))
    assert header["release"] == rel and len(entries) == 2
    doc = read(path)
    assert doc["reused"] == 2  # the module fixture's measurements, reused from the store

    from defects4warp.engines import reference

    monkeypatch.setattr(reference.ReferenceEngine, "measure", lambda *a, **k: (_ for _ in ()).throw(AssertionError))
    again, needs = rescore_release(path, cases)
    assert needs == [] and again["runs"] == doc["runs"]
    assert again["interpreted"]["wall_s"] >= 0 and again["engine"] == ident

    # a variant edited after its measurement needs a new one, and the file is not rewritten
    f = next(p for p in (items[0].variant.path).glob("*.py"))
    f.write_text(f.read_text() + "\n# edited\n")
    again, needs = rescore_release(path, cases)
    assert again is None and needs == [(f"{items[0].case.id}/{items[0].variant.name}",
                                        "the variant's files changed since")]


def test_rescore_without_a_bundle_names_the_command_that_measures_it(tmp_path):
    from defects4warp.report.engine_matrix import write

    path = tmp_path / "engine-1.9.1.json"
    write(path, {"format": "defects4warp-engine-release/1", "release": "1.9.1", "engine": {}, "device": "cpu",
                 "runs": []})
    with pytest.raises(EngineFileError, match=r"no measurement bundle .* pages --measure --warp 1.9.1"):
        rescore_release(path, [])


def test_non_finite_floats_of_a_measurement_read_back_as_floats(tmp_path):
    """A NaN in the gradient is evidence (the nan_inf signature): the store and the bundle
    keep it a float, where the strict-JSON text of other results would make it a string."""
    import math

    rec = {"doc": {"nan_scan": {"gradient": [float("nan"), float("inf"), -float("inf"), 1.5]}}, "code": {}}
    store = ResultStore(tmp_path)
    fields = {"kind": "measurement", "variant": "v"}
    store.put(fields, dict(rec, code=provenance.digests(("run/store.py",))))
    g = store.get(fields)["doc"]["nan_scan"]["gradient"]
    assert math.isnan(g[0]) and g[1:] == [math.inf, -math.inf, 1.5]
    p = tmp_path / "b.jsonl.gz"
    write_bundle(p, {}, [{"case": "c", "variant": "v", "scale": "small", "program": "adapter",
                          "variant_digest": "d", "record": rec}])
    g = read_bundle(p)[1][0]["record"]["doc"]["nan_scan"]["gradient"]
    assert math.isnan(g[0]) and g[1:] == [math.inf, -math.inf, 1.5]
    assert b"NaN" not in gzip.decompress(p.read_bytes())  # strict JSON on disk


def test_an_error_like_number_is_compared_to_an_absolute_tolerance_only():
    from defects4warp.report.engine_matrix import ERROR_ATOL, document_difference

    # measured on two x86 machines with the same code (the neutral check of 2026-12-04)
    a = {"fd": {"calls": [{"directions": {"relative_error": [6.12785702243937e-09], "value": [6.12785702243937e-09]}}]}}
    b = {"fd": {"calls": [{"directions": {"relative_error": [6.1266993636638484e-09],
                                          "value": [6.12785702243937e-09]}}]}}
    assert document_difference(a, b) is None
    # the same numbers under a key that is not an error still differ relatively
    b["fd"]["calls"][0]["directions"]["value"] = [6.1266993636638484e-09]
    assert document_difference(a, b) == ("/fd/calls[0]/directions/value[0]: 6.12785702243937e-09 != "
                                          "6.1266993636638484e-09")
    # an error that moved by more than the tolerance is a difference
    assert ERROR_ATOL == 1e-10
    assert document_difference({"noise": 1e-9}, {"noise": 1e-9 + 2e-10}) is not None
    assert document_difference({"abs_error": 0.5}, {"abs_error": 0.5 + 5e-11}) is None
    # a finite-difference uncertainty (Warp 1.0.2 on two machines), not a key merely ending in "unc"
    assert document_difference({"items": [{"unc": 1.7458244820809953e-09}]},
                               {"items": [{"unc": 1.8377099811378899e-09}]}) is None
    assert document_difference({"func": 1e-9}, {"func": 1e-9 + 5e-11}) is not None
    # a number under an error-like key higher on its path (the noise probe's relative noise)
    assert document_difference({"noise": {"relative": 6.450780550569251e-16}},
                               {"noise": {"relative": 6.790295316388685e-16}}) is None
    # a bundle measured on another CPU: finite differences 1.1e-9 apart, the documented --rtol 1e-8
    fd = ({"fd": -0.012036362171973201}, {"fd": -0.012036362158286192})
    assert document_difference(*fd) is not None and document_difference(*fd, rtol=1e-8) is None
