"""A report built from results reused from the result store says so, with the
date they were measured, instead of a 0.0-minute wall time and today's date
(a newcomer's finding on `version-matrix`)."""

import json
import os
import time

from click.testing import CliRunner

from defects4warp.cli import main
from defects4warp.report.markdown import merge_validations, version_matrix_markdown
from defects4warp.run.store import ResultStore, make_key

MACHINE = {"cpu": "X", "cores": 2, "memory_gib": 24, "os": "Linux", "python": "3.11"}


def _check(variant, status="passed"):
    return {"case": "c1", "variant": variant, "scale": "small", "ok": True, "status": status,
            "signature": "zero" if variant == "buggy" else "agrees", "relative_error": 1.0, "message": "m"}


def _doc(release, wall_s, reused, measured=None, today="2026-12-01"):
    r = {"wall_s": wall_s, "reused": reused, "checks": [_check("buggy"), _check("fixed"), _check("other", "skipped")]}
    if measured:
        r["reused_measured"] = measured
    return {"device": "cpu", "machine": MACHINE, "repeat": 1, "measured_on": today, "wall_s": wall_s,
            "releases": {release: r}}


def test_store_records_when_the_results_it_returns_were_measured(tmp_path):
    store = ResultStore(tmp_path)
    one = {"kind": "validation", "warp": "1.9.1", "variant": "v"}
    two = {**one, "variant": "w"}
    store.put(one, {"x": 1})
    store.put(two, {"x": 2})
    for fields, day in ((one, 20), (two, 25)):
        t = time.mktime((2026, 11, day, 12, 0, 0, 0, 0, -1))
        os.utime(store.path(make_key(fields), "validation"), (t, t))
    assert store.measured_dates("validation", "1.9.1") is None  # nothing returned yet
    assert store.get(one) == {"x": 1}
    assert store.measured_dates("validation", "1.9.1") == ("2026-11-20", "2026-11-20")
    assert store.get(two) == {"x": 2}
    assert store.measured_dates("validation", "1.9.1") == ("2026-11-20", "2026-11-25")
    assert store.measured_dates("validation", "1.19.0") is None
    assert store.get({**one, "variant": "missing"}) is None
    assert store.measured_dates("validation", "1.9.1") == ("2026-11-20", "2026-11-25")


def test_a_fully_reused_release_shows_its_measurement_date_not_0_min():
    doc = merge_validations([_doc("1.9.1", 0.4, 2, ["2026-11-20", "2026-11-22"]),
                             _doc("1.19.0", 0.2, 2, ["2026-11-30", "2026-11-30"])])
    md = version_matrix_markdown(doc)
    assert ("- Every check reused from the result store, measured 2026-11-20 to 2026-11-30 (assembled on "
            "2026-12-01); each variant measured 1 time(s) in a fresh process.") in md
    assert ("- Wall time per release: 1.9.1 reused from the result store (measured 2026-11-20 to 2026-11-22), "
            "1.19.0 reused from the result store (measured 2026-11-30); nothing was measured again.") in md
    assert "0.0 min" not in md and "Measured on 2026-12-01" not in md


def test_a_partly_reused_matrix_keeps_measured_wall_times():
    doc = merge_validations([_doc("1.9.1", 0.4, 2), _doc("1.19.0", 90.0, 1)])
    md = version_matrix_markdown(doc)
    assert "- Measured on 2026-12-01; each variant measured 1 time(s) in a fresh process." in md
    assert ("- Wall time per release: 1.9.1 reused from the result store (measured on a date not recorded), "
            "1.19.0 1.5 min; the full matrix took 1.5 min.") in md


def test_documents_without_reuse_counts_render_as_before():
    d = _doc("1.19.0", 120.0, 0)
    del d["releases"]["1.19.0"]["reused"]
    md = version_matrix_markdown(merge_validations([d]))
    assert "- Wall time per release: 1.19.0 2.0 min; the full matrix took 2.0 min." in md


def test_validate_then_version_matrix_from_the_store(tmp_path):
    """Measure one case, age the stored checks, validate again: every check is reused and the
    page gives the stored date."""
    args = ["validate", "--cases", "projectile-launch-fit", "--jobs", "1", "--results", str(tmp_path / "home")]
    r = CliRunner().invoke(main, args + ["--json", str(tmp_path / "a.json")])
    assert r.exit_code == 0, r.output
    first = json.loads((tmp_path / "a.json").read_text())
    rel = next(iter(first["releases"]))
    assert first["releases"][rel]["reused"] == 0 and "reused_measured" not in first["releases"][rel]
    old = time.mktime((2026, 11, 20, 12, 0, 0, 0, 0, -1))
    stored = list((tmp_path / "home" / "store" / "validation").rglob("*.json"))
    assert len(stored) == 2
    for p in stored:
        os.utime(p, (old, old))
    r = CliRunner().invoke(main, args + ["--json", str(tmp_path / "b.json")])
    assert r.exit_code == 0, r.output
    second = json.loads((tmp_path / "b.json").read_text())["releases"][rel]
    assert second["reused"] == 2 and second["reused_measured"] == ["2026-11-20", "2026-11-20"]
    r = CliRunner().invoke(main, ["version-matrix", str(tmp_path / "b.json"), "--markdown", "-"])
    assert r.exit_code == 0, r.output
    assert f"- Wall time per release: {rel} reused from the result store (measured 2026-11-20); " \
           "nothing was measured again." in r.stdout
    assert "0.0 min" not in r.stdout
