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

A corpus variant that holds a script (the case's ``script:`` block) is a
parent as its script when it has no ``problem.py`` or when asked
(``programs="scripts"``): its id is then ``<case>/<variant>#script`` for a
converted variant (plain ``<case>/<variant>`` for a script-only one), its
:attr:`Parent.script` holds the ``ScriptSpec`` fields, the operators edit the
entry script and its siblings (never ``problem.py``), and the oracle replays
the mutated script from the capture's replay record.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..case import default_corpus, load_corpus
from ...paths import bundled

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
    script : dict or None
        The ``ScriptSpec`` fields (entry, args, iteration, params) when the
        parent is a user's script; None for a ``problem.py`` parent.
    """

    id: str
    path: Path
    split: str
    domain: str
    script: dict | None = None

    def sources(self) -> dict:
        """``{relative path: text}`` of the ``.py`` files of the folder (no
        caches; a script parent's top-level ``problem.py`` is not the user's and is left out)."""
        return {p.relative_to(self.path).as_posix(): p.read_text(encoding="utf-8")
                for p in sorted(self.path.rglob("*.py")) if "__pycache__" not in p.parts
                and not (self.script is not None and p.relative_to(self.path).as_posix() == "problem.py")}

    @property
    def slug(self) -> str:
        return self.id.replace("/", "-").replace("_", "-").lower()


def _variant_parents(case, v, programs: str) -> list:
    out = []
    for prog in v.programs(programs):
        if prog == "adapter":
            out.append(Parent(f"{case.id}/{v.name}", v.path, case.split, case.domain))
        else:
            pid = f"{case.id}/{v.name}" + ("#script" if v.adapter else "")
            out.append(Parent(pid, v.path, case.split, case.domain, v.script.to_json()))
    return out


def corpus_parents(corpus=None, *, warp_version: str = "1.19.0", scale: str = "small",
                   programs: str = "auto") -> list:
    """Correct variants of a corpus (default: the bundled one).

    Parameters
    ----------
    corpus : str or Path, optional
        Corpus folder; default :func:`defects4warp.corpus.case.default_corpus`.
    warp_version : str, default "1.19.0"
        Release whose expectation must be ``no_bug`` / ``[correct]``.
    scale : str, default "small"
    programs : str, default "auto"
        Which program of each variant is a parent (:data:`defects4warp.corpus.case.PROGRAMS`):
        ``auto`` the adapter where there is one, else the script.

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
                out += _variant_parents(c, v, programs)
    return sorted(out, key=lambda p: p.id)


def adapter_parents(folder=None) -> list:
    """The adapters of Warp's tests under ``folder`` (default :data:`ADAPTERS`)."""
    folder = Path(folder or ADAPTERS)
    if not folder.is_dir():
        return []
    return [Parent(f"adapters/{d.name}", d, "adapter", "warp-tests")
            for d in sorted(folder.iterdir()) if (d / "problem.py").is_file()]


def all_parents(corpus=None, *, warp_version: str = "1.19.0", programs: str = "auto") -> list:
    """Corpus parents followed by adapter parents (those only when ``programs`` allows adapters)."""
    extra = adapter_parents() if programs != "scripts" else []
    return corpus_parents(corpus, warp_version=warp_version, programs=programs) + extra


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
        variant, _, prog = variant.partition("#")
        root = Path(corpus or default_corpus())
        cases, _ = load_corpus(root, case) if (root / case).is_dir() else ([], [])
        for c in cases:
            for v in c.variants:
                if c.id != case or v.name != variant:
                    continue
                want = "script" if prog == "script" or not v.adapter else "adapter"
                for p in _variant_parents(c, v, "all"):
                    if p.id == parent_id and (p.script is not None) == (want == "script"):
                        return p
    raise KeyError(f"no parent {parent_id!r}")
