"""rules.scan parses a variant's source once per process, wherever the folder is: re-scoring many stored
measurements interprets each run on a neutral copy of its variant, so a cache keyed by the folder's path
never hit (the scan was 85% of a re-score's time)."""

import shutil

from defects4warp import rules
from defects4warp.corpus.case import default_corpus


def test_a_copy_of_a_scanned_folder_is_not_parsed_again(tmp_path, monkeypatch):
    src = default_corpus() / "canal-pool-gate-openings" / "buggy"
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(src, a)
    shutil.copytree(src, b)
    rules._SCAN_CACHE.clear()
    parsed = []
    real = rules.Project.from_folder
    monkeypatch.setattr(rules.Project, "from_folder", classmethod(lambda cls, f: parsed.append(f) or real(f)))
    first = rules.scan(a)
    assert rules.scan(b) == first and [f.file for f in first] == sorted(f.file for f in first)
    assert parsed == [a]
    (b / "canal.py").write_text((b / "canal.py").read_text() + "\n# edited\n")
    rules.scan(b)  # other bytes: parsed again
    assert parsed == [a, b]
    assert {f.rule for f in first} >= {"nonsmooth_op"}
