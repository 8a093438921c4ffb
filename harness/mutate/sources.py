"""Parents of the generated tier: correct programs to inject bugs into.

Two sources:

* every variant of the bundled corpus (both splits) whose expectation on the
  installed Warp release at small scale is ``no_bug`` with the single class
  ``correct`` (:func:`corpus_parents`);
* the adapters in ``mutants/parents/<name>/problem.py``: small Problem-protocol
  programs rewritten from the differentiable programs of Warp's own tests
  (``warp/tests/test_grad.py``, ``test_grad_customs.py``, ``test_tape.py``),
  each checked correct against central finite differences
  (:func:`adapter_parents`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..case import default_corpus, load_corpus
from ..paths import bundled

#: Folder of the adapters of Warp's tests (``<repo>/mutants/parents``).
ADAPTERS = bundled("mutants") / "parents"


@dataclass(frozen=True)
class Parent:
    """A correct program a mutant is derived from.

    Attributes
    ----------
    id : str
        ``<case>/<variant>`` for corpus variants, ``adapters/<name>`` for adapters.
    path : pathlib.Path
        The variant folder (holds ``problem.py``).
    split : str
        The case's split (``dev``/``test``); ``adapter`` for adapters.
    domain : str
        The case's domain tag; ``warp-tests`` for adapters.
    """

    id: str
    path: Path
    split: str
    domain: str

    def sources(self) -> dict:
        """``{relative path: text}`` of the ``.py`` files of the folder (no caches)."""
        return {p.relative_to(self.path).as_posix(): p.read_text(encoding="utf-8")
                for p in sorted(self.path.rglob("*.py")) if "__pycache__" not in p.parts}

    @property
    def slug(self) -> str:
        return self.id.replace("/", "-").replace("_", "-").lower()


def corpus_parents(corpus=None, *, warp_version: str = "1.19.0", scale: str = "small") -> list:
    """Correct variants of a corpus (default: the bundled one).

    Parameters
    ----------
    corpus : str or Path, optional
        Corpus folder; default :func:`defects4warp.case.default_corpus`.
    warp_version : str, default "1.19.0"
        Release whose expectation must be ``no_bug`` / ``[correct]``.
    scale : str, default "small"

    Returns
    -------
    list[Parent]
        Sorted by id. Cases needing extra modules (``requires``) are skipped.
    """
    cases, _ = load_corpus(corpus or default_corpus())
    out = []
    for c in cases:
        if c.requires:
            continue
        for v in c.variants:
            e = v.expectation_for(warp_version, scale)
            if e is not None and e.verdict == "no_bug" and tuple(e.classes) == ("correct",):
                out.append(Parent(f"{c.id}/{v.name}", v.path, c.split, c.domain))
    return sorted(out, key=lambda p: p.id)


def adapter_parents(folder=None) -> list:
    """The adapters of Warp's tests under ``folder`` (default :data:`ADAPTERS`)."""
    folder = Path(folder or ADAPTERS)
    if not folder.is_dir():
        return []
    return [Parent(f"adapters/{d.name}", d, "adapter", "warp-tests")
            for d in sorted(folder.iterdir()) if (d / "problem.py").is_file()]


def all_parents(corpus=None, *, warp_version: str = "1.19.0") -> list:
    """Corpus parents followed by adapter parents."""
    return corpus_parents(corpus, warp_version=warp_version) + adapter_parents()


def find_parent(parent_id: str, corpus=None, *, warp_version: str = "1.19.0") -> Parent:
    """The parent named ``parent_id`` (``case/variant`` or ``adapters/name``).

    Raises
    ------
    KeyError
        When no such correct parent exists.
    """
    if parent_id.startswith("adapters/"):
        d = ADAPTERS / parent_id.split("/", 1)[1]
        if (d / "problem.py").is_file():
            return Parent(parent_id, d, "adapter", "warp-tests")
    else:
        case, _, variant = parent_id.partition("/")
        root = Path(corpus or default_corpus())
        if (root / case / variant / "problem.py").is_file():
            cases, _ = load_corpus(root, case)
            if cases:
                return Parent(parent_id, root / case / variant, cases[0].split, cases[0].domain)
    raise KeyError(f"no parent {parent_id!r}")
