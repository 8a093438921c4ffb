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


#: case id -> (script.args, {variant: (program folder, expectation entries)}):
#: script variants (the user's train.py, no problem.py) built from
#: tests/programs/script_* for tests of run/validate/export on scripts.
TINY_SCRIPTS = {
    "tiny-script-inplace": ([], {
        "buggy": ("script_inplace", "- verdict: bug\n      classes: [overwrite]"),
        "fixed": ("script_inplace_fixed", "- verdict: no_bug\n      classes: [correct]"),
    }),
    "tiny-script-assign": (["--iters", "3"], {
        "main": ("script_assign", "- verdict: no_bug\n      classes: [correct]"),
    }),
}

SCRIPT_YAML = """id: {id}
title: A tiny script case built from tests/programs
summary: >
  A four-element fit written as a plain training script, used by the harness's own tests.
explanation: >
  See the training scripts under tests/programs/.
provenance: original
tags:
  domain: harness-tests
  form: script
script:
  entry: train.py
  args: {args}
variants:
{variants}
"""


def make_tiny_script_corpus(root, ids=None) -> Path:
    """Write the script cases ``ids`` (default all of :data:`TINY_SCRIPTS`) under ``root``; return ``root``."""
    import json

    root = Path(root)
    for cid in ids or TINY_SCRIPTS:
        args, variants = TINY_SCRIPTS[cid]
        d = root / cid
        lines = []
        for name, (program, exp) in variants.items():
            shutil.copytree(PROGRAMS / program, d / name, ignore=shutil.ignore_patterns("__pycache__"))
            lines.append(f"  {name}:\n    {exp}")
        (d / "case.yaml").write_text(SCRIPT_YAML.format(id=cid, args=json.dumps(args), variants="\n".join(lines)))
    return root
