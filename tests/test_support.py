"""min_warp measurement: a build check on the installed release, and the
bisection over releases (with a fake check)."""

import sys
from pathlib import Path

from defects4warp.corpus import support

PROGRAMS = Path(__file__).parent / "programs"


def test_build_check_on_the_installed_release():
    res = support.build_check(PROGRAMS / "cubic", sys.executable)
    assert res["ok"] is True and res["error"] is None and res["seconds"] > 0


def test_build_check_reports_the_missing_api(tmp_path):
    (tmp_path / "problem.py").write_text("import warp as wp\nwp.tile_from_the_future\n"
                                         "def make_problem(device, scale='small'):\n    pass\n")
    res = support.build_check(tmp_path, sys.executable)
    assert res["ok"] is False
    assert res["error"] == "AttributeError: module 'warp' has no attribute 'tile_from_the_future'"


def test_bisection_finds_the_first_release_that_builds(monkeypatch):
    releases = ["1.0.2", "1.1.0", "1.2.2", "1.3.3", "1.4.2", "1.5.1", "1.6.2", "1.7.2", "1.8.1", "1.9.1",
                "1.10.1", "1.11.1", "1.12.1"]
    seen = []

    def fake(path, python, scale, timeout_s, script=None):
        seen.append(python)
        ok = tuple(map(int, python.split("."))) >= (1, 6, 2)
        return {"ok": ok, "error": None if ok else f"AttributeError: no API on {python}", "seconds": 1.0}

    monkeypatch.setattr(support, "build_check", fake)
    res = support.find_min_warp("x/buggy", releases[::-1], lambda r: r,
                                known={"1.0.2": {"ok": False, "error": "known", "seconds": 0.0}})
    assert res["min_warp"] == "1.6.2"
    assert res["last_failure"] == "AttributeError: no API on 1.5.1"
    assert "1.0.2" not in seen and len(seen) <= 5  # bisection, not a sweep
    res = support.find_min_warp("x/buggy", ["1.8.1", "1.9.1"], lambda r: r)
    assert res["min_warp"] == "1.8.1" and res["last_failure"] is None


SCRIPT = {"entry": "train.py", "args": ["--iters", "2"], "iteration": 1, "params": None}


def test_build_check_runs_a_script_variant_through_the_capture(tmp_path):
    """A script variant (no problem.py) builds when its script runs to a captured backward and the captured
    problem's objective and gradient run; a kernel the release cannot build fails with the error named."""
    import shutil

    res = support.build_check(PROGRAMS / "script_assign", sys.executable, script=SCRIPT)
    assert res["ok"] is True and res["error"] is None
    shutil.copy(PROGRAMS / "script_assign" / "train.py", tmp_path / "train.py")
    text = (tmp_path / "train.py").read_text()
    (tmp_path / "train.py").write_text(text.replace("import warp as wp\n", "import warp as wp\nwp.tile_from_the_future\n", 1))
    res = support.build_check(tmp_path, sys.executable, script=SCRIPT)
    assert res["ok"] is False and "tile_from_the_future" in res["error"]
