"""Generated pages: the committed docs equal what the committed JSON renders
to (no measurement), and a page edited by hand is caught."""

import json
import shutil

from click.testing import CliRunner

from defects4warp import pages
from defects4warp.cli import main


def test_committed_pages_match_committed_json():
    assert pages.check_pages() == []


def test_hand_edit_is_caught_and_rewritten(tmp_path):
    (tmp_path / "docs" / "data").mkdir(parents=True)
    for p in pages.validation_files() + [pages.ROOT / pages.AUDIT_MATRIX, pages.ROOT / pages.MIN_WARP_JSON,
                                         pages.ROOT / pages.BOUNDARIES_JSON]:
        shutil.copy(p, tmp_path / "docs" / "data" / p.name)
    for p in pages.PAGES:
        shutil.copy(pages.ROOT / p.path, tmp_path / p.path)
    assert pages.check_pages(tmp_path) == []
    vm = tmp_path / "docs" / "version-matrix.md"
    vm.write_text(vm.read_text().replace("| fountain-jet-aiming | buggy |", "| fountain-jet-aiming | buggy2 |"))
    assert pages.check_pages(tmp_path) == ["docs/version-matrix.md"]
    assert pages.write_pages(tmp_path) == ["docs/version-matrix.md"]
    assert pages.check_pages(tmp_path) == []
    # a new per-release validation file joins the matrix as a column, in release order
    doc = json.loads((tmp_path / "docs" / "data" / "oracle-validation-1.12.1-1.19.0.json").read_text())
    one = {"device": "cpu", "machine": doc["machine"], "measured_on": "2026-12-02", "wall_s": 60.0,
           "releases": {"1.5.1": {"wall_s": 60.0, "checks": doc["releases"]["1.12.1"]["checks"][:1]}}}
    (tmp_path / "docs" / "data" / "validation-1.5.1.json").write_text(json.dumps(one))
    assert pages.validated_releases(tmp_path) == {"1.0.2", "1.5.1", "1.12.1", "1.19.0"}
    assert pages.missing_releases(["1.5.1", "1.9.1"], tmp_path) == ["1.9.1"]
    text = pages.render_version_matrix(tmp_path)
    assert "| case | variant | tagged | 1.0.2 | 1.5.1 | 1.12.1 | 1.19.0 |" in text
    assert "Measured on 2026-12-02" in text


def test_pages_check_verb():
    res = CliRunner().invoke(main, ["pages", "--check", "--warp", "1.12.1,1.19.0"])
    assert res.exit_code == 0, res.output
    assert "docs/version-matrix.md: matches" in res.output
    assert "docs/results.md: not checked" in res.output


def test_old_releases_page_from_its_json(tmp_path):
    data = tmp_path / "docs" / "data"
    data.mkdir(parents=True)
    (data / "min-warp.json").write_text(json.dumps({"releases": ["1.0.2", "1.5.1", "1.12.1"], "variants": {
        "c/fixed": {"min_warp": "1.5.1", "last_failure": "WarpCodegenError: Error while parsing | x",
                    "checks": {"1.12.1": {"ok": True}, "1.0.2": {"ok": False}, "1.5.1": {"ok": True}}}}}))
    (data / "release-boundaries.json").write_text(json.dumps({"upto": "1.12.1", "variants": {
        "d/fixed@small": {"labels_hold_from": "1.4.2", "last_contradiction": "1.3.3",
                          "checks": {"1.3.3": {"status": "failed", "oracle": "wrong", "error": 1.0}}}}}))
    text = pages.render_old_releases(tmp_path)
    assert "| c/fixed | 1.5.1 | WarpCodegenError: Error while parsing \\| x | 1.0.2 fails, 1.5.1 ok, 1.12.1 ok |" in text
    assert "| d/fixed@small | 1.4.2 | 1.3.3 | wrong, relative error 1 |" in text
