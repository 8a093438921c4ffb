"""Blinding: what an engine may see of a variant.

An engine gets the path of a neutral copy of the variant folder (no case id,
no variant name in the path) and nothing else. :func:`neutral_copy` makes that
copy; :func:`hint_findings` scans variant sources for words that would hint at
the defect or its fix (used by tests/test_blinding.py and ``validate``).
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import tempfile
import tokenize
from pathlib import Path

#: Words that must not appear in variant sources (identifiers split on
#: underscores and camel case, comments, strings). Class ids are added below.
HINT_WORDS = frozenset(
    """
    bug bugs buggy bugged fix fixed fixes fixing fixme wrong broken corrupt corrupted
    planted oops hack hacky workaround mistake incorrect forgot forgotten missing
    stale overwrite overwrites overwritten overwriting clobber clobbered gotcha beware
    todo xxx leak leaky defect defective faulty erroneous
    """.split()
)

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")


def _words(text: str) -> list:
    """Words of a token: split on non-letters and camel case, plus each
    letter run whole (``wrongStep`` -> wrong, step, wrongstep), deduplicated."""
    out = []
    for p in re.split(r"[^A-Za-z]+", text):
        for w in [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", p)] + [p.lower()]:
            if w and w not in out:
                out.append(w)
    return out


def hint_findings(folder: str | Path) -> list:
    """``(file, line, word)`` for every hint word in the ``.py`` files of ``folder``.

    Looks at comments, strings and names (tokenised, not regex over code).
    """
    found = []
    from .paths import program_files

    for py in program_files(folder):
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(py.read_text(encoding="utf-8")).readline))
        except (tokenize.TokenError, SyntaxError, UnicodeDecodeError) as exc:
            found.append((str(py), 0, f"<unreadable: {exc}>"))
            continue
        for tok in tokens:
            if tok.type in (tokenize.COMMENT, tokenize.STRING, tokenize.NAME):
                for w in _words(tok.string):
                    if w in HINT_WORDS:
                        found.append((str(py), tok.start[0], w))
    return found


@contextlib.contextmanager
def neutral_copy(variant_dir: str | Path, drop: tuple = ()):
    """Copy a variant folder to ``<tmp>/d4w-XXXX/program`` and yield that path.

    The copy is removed on exit. Caches and hidden files are not copied, nor
    the top-level files named in ``drop`` (``("problem.py",)`` when a
    converted variant runs as its script, so only the user's files are seen).
    """
    tmp = tempfile.mkdtemp(prefix="d4w-")
    dst = Path(tmp) / "program"
    try:
        shutil.copytree(variant_dir, dst, ignore=_IGNORE)
        for name in drop:
            if (dst / name).is_file():
                (dst / name).unlink()
        yield dst
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
