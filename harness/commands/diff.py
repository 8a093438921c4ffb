"""``defects4warp diff CASE [VARIANT]``: the fix as data, a minimal patch.

Prints the unified diff (``difflib``, 3 lines of context) of every file that
differs between ``buggy/`` and the variant (default ``fixed``), with paths
relative to the case folder, as ``git apply`` reads it.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import click

from ..corpus.case import CaseFormatError, default_corpus, load_case


def patch(case_dir: Path, variant: str = "fixed", base: str = "buggy") -> str:
    """Unified diff from ``case_dir/base`` to ``case_dir/variant``.

    Raises
    ------
    KeyError
        If either variant is not declared by the case.
    """
    case = load_case(case_dir)
    a, b = case.variant(base).path, case.variant(variant).path
    names = sorted({p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
                   | {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file() and "__pycache__" not in p.parts})
    out = []
    for n in names:
        fa, fb = a / n, b / n
        la = fa.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True) if fa.is_file() else []
        lb = fb.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True) if fb.is_file() else []
        if la != lb:
            out += difflib.unified_diff(la, lb, fromfile=f"a/{base}/{n}" if fa.is_file() else "/dev/null",
                                        tofile=f"b/{variant}/{n}" if fb.is_file() else "/dev/null")
    return "".join(x if x.endswith("\n") else x + "\n\\ No newline at end of file\n" for x in out)


@click.command()
@click.argument("case_id")
@click.argument("variant", required=False, default="fixed")
@click.option("--corpus", type=click.Path(exists=True, file_okay=False), default=None,
              help="Folder of cases (default: the bundled corpus/).")
@click.option("--base", default="buggy", show_default=True, help="The variant the patch starts from.")
def cmd(case_id, variant, corpus, base):
    """Print the minimal patch between buggy/ and a fixed variant of CASE_ID."""
    root = Path(corpus) if corpus else default_corpus()
    case_dir = root / case_id
    if not (case_dir / "case.yaml").is_file():
        click.echo(f"{case_dir}: no such case (no case.yaml)", err=True)
        sys.exit(2)
    try:
        text = patch(case_dir, variant, base)
    except CaseFormatError as exc:
        click.echo(str(exc), err=True)
        sys.exit(1)
    except KeyError as exc:
        click.echo(f"{case_dir / 'case.yaml'}: field 'variants': {exc.args[0]}", err=True)
        sys.exit(2)
    click.echo(text, nl=False)
