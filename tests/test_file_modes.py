"""Files and folders the harness writes get the umask's normal mode (0644 files and
0755 folders under umask 022), like any ``open``/``mkdir``, while still being written
atomically: a temporary file from ``mkstemp`` is 0600, which made results unreadable
to the rest of a group (a newcomer's finding)."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASE = "projectile-launch-fit"


@pytest.fixture(params=[0o022, 0o027])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def _mode(p):
    return stat.S_IMODE(os.stat(p).st_mode)


def test_current_umask_reads_the_mask_without_changing_it(umask):
    from defects4warp.jsonio import current_umask

    assert current_umask() == umask
    assert current_umask() == umask


def test_json_store_and_markdown_writers(tmp_path, umask):
    from defects4warp.commands._common import _emit
    from defects4warp.jsonio import write_json_atomic
    from defects4warp.run.store import ResultStore

    write_json_atomic(str(tmp_path / "a.json"), {"x": 1})
    assert _mode(tmp_path / "a.json") == 0o666 & ~umask
    _emit("# t\n", str(tmp_path / "a.md"))
    assert _mode(tmp_path / "a.md") == 0o666 & ~umask
    st = ResultStore(tmp_path / "store")
    st.put({"kind": "diagnosis", "a": 1}, {"v": 2})
    (entry,) = list((tmp_path / "store").rglob("*.json"))
    assert _mode(entry) == 0o666 & ~umask


def test_export_folder_and_evals(tmp_path, umask):
    from defects4warp.corpus.case import default_corpus, load_corpus
    from defects4warp.report.export import export_skill_evals

    cases, _ = load_corpus(default_corpus(), CASE)
    out = tmp_path / "ev"
    export_skill_evals(cases, out, "1.19.0", scale="small")
    assert _mode(out) == 0o777 & ~umask
    assert _mode(out / "evals.json") == 0o666 & ~umask


def test_cli_json_file_under_umask_022(tmp_path):
    out = tmp_path / "l.json"
    r = subprocess.run([sys.executable, "-m", "defects4warp", "list", "--cases", CASE, "--json", str(out)],
                       capture_output=True, text=True, preexec_fn=lambda: os.umask(0o022), timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["cases"][0]["id"] == CASE
    assert _mode(out) == 0o644
