"""A corpus of three tiny cases built from tests/programs, for tests that run
whole commands (resume after SIGKILL, concurrent runs, executors)."""

import shutil
from pathlib import Path

PROGRAMS = Path(__file__).parent / "programs"

#: case id -> (program folder, expectation entries of its one variant)
TINY = {
    "tiny-cubic": ("cubic", "- verdict: no_bug\n      classes: [correct]"),
    "tiny-factor-two": ("factor_two", "- verdict: bug\n      classes: [double_count]"),
    "tiny-growth": ("growth", "- verdict: bug\n      classes: [missing_tape_zero]"),
}

YAML = """id: {id}
title: A tiny test case built from tests/programs/{program}
summary: >
  A three-element fit used by the harness's own tests.
explanation: >
  See tests/programs/{program}/problem.py.
provenance: original
tags:
  domain: harness-tests
variants:
  main:
    {exp}
"""


def make_tiny_corpus(root, ids=None) -> Path:
    """Write the cases ``ids`` (default all of :data:`TINY`) under ``root``; return ``root``."""
    root = Path(root)
    for cid in ids or TINY:
        program, exp = TINY[cid]
        d = root / cid
        shutil.copytree(PROGRAMS / program, d / "main", ignore=shutil.ignore_patterns("__pycache__"))
        (d / "case.yaml").write_text(YAML.format(id=cid, program=program, exp=exp))
    return root
