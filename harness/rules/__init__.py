"""Source rules as small registered functions (engine v3).

Each rule is a function ``fn(unit) -> Iterable[(node_or_line, detail, scope)]``
over a parsed :class:`~defects4warp.rules.unit.Unit` (one ``.py`` file of a
variant plus the folder-wide facts of its :class:`~defects4warp.rules.unit.Project`),
registered with :func:`rule`, which declares

* ``classes``: the bug classes (:data:`defects4warp.taxonomy.CLASSES`) a finding supports;
* ``specificity``: the weight in [0, 1] a finding adds to each class
  (default :data:`DEFAULT_SPECIFICITY`);
* ``gate``: a PEP 440 specifier of the Warp releases on which the pattern
  points at its class (Warp changelog 1.13.0, 1.14.0, 1.17.0), or None;
* ``observed``: whether the runtime trace observes the behaviour itself, so
  that its findings replace the rule where the trace ran.

Static and safe: files are parsed with :mod:`ast`, never executed, never
matched with regular expressions (only the C++ text of a ``@wp.func_native``
snippet, a string the AST holds, is split into identifiers). A finding is a *smell* until a measured
signature agrees with it. Only the standard library is imported here (the
rules run in the parent process).

Adding a rule: write the function in one of the rule modules
(``kernel_rules``, ``host_rules``, ``module_rules``, ``access_rules``),
decorate it, and add a firing and a clean snippet to the table of
``tests/test_rules.py`` (a test fails for a rule without one).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..paths import program_files
from .registry import DEFAULT_SPECIFICITY, REGISTRY, Finding, Rule, findings_of, rule
from .unit import Project, Unit

from . import access_rules, kernel_rules, host_rules, module_rules  # noqa: E402,F401  (registration)

__all__ = ["DEFAULT_SPECIFICITY", "REGISTRY", "Finding", "Rule", "rule", "Project", "Unit", "scan",
           "scan_project", "classes_of", "specificities", "gates", "observed_rules", "registry_table"]


def scan_project(project: Project, *, rules=None) -> list:
    """Findings of ``rules`` (names; default every registered rule) over a
    parsed :class:`Project`, one per (rule, file, line), sorted by (file,
    line, rule)."""
    chosen = [REGISTRY[n] for n in rules] if rules is not None else list(REGISTRY.values())
    uniq = {}
    for unit in project.units():
        for r in chosen:
            for f in findings_of(r, unit):
                uniq.setdefault((f.rule, f.file, f.line), f)
    return sorted(uniq.values(), key=lambda f: (f.file, f.line, f.rule))


def scan(folder: str | Path, *, rules=None) -> list:
    """All findings for the ``.py`` files under ``folder`` (sorted by file, line).

    Parameters
    ----------
    folder : str or Path
        A variant folder (``problem.py`` and its sibling modules).
    rules : iterable of str, optional
        Rule names to run (default: every registered rule).

    Returns
    -------
    list of Finding
        One per (rule, file, line). A file that does not parse is skipped;
        the scan goes on with the other files. A folder whose program files
        have not changed is not parsed again in this process
        (:data:`_SCAN_CACHE`).

    Raises
    ------
    KeyError
        For a name in ``rules`` that is not registered.
    """
    key = (None if rules is None else tuple(rules), _fingerprint(folder))
    hit = _SCAN_CACHE.get(key)
    if hit is None:
        hit = tuple(scan_project(Project.from_folder(folder), rules=rules))
        if len(_SCAN_CACHE) >= SCAN_CACHE_SIZE:
            _SCAN_CACHE.pop(next(iter(_SCAN_CACHE)))
        _SCAN_CACHE[key] = hit
    return list(hit)


#: Scans made in this process, ``{(rules, fingerprint): findings}``, oldest first. A scan depends only on the
#: relative paths and bytes of the folder's program files (and the registered rules; findings name files
#: relative to the folder), not on where the folder is, so re-interpreting many stored measurements of one
#: variant (``maint pages --rescore`` over several releases' bundles, each run's folder a neutral copy) parses
#: and walks its source once; findings are frozen dataclasses, and each call gets a new list.
_SCAN_CACHE: dict = {}

#: Folders whose scans :data:`_SCAN_CACHE` keeps (the oldest is dropped first); a corpus has about 450 variants.
SCAN_CACHE_SIZE = 1024


def _fingerprint(folder) -> str:
    """SHA-256 over the relative path and bytes of every program file :meth:`Project.from_folder` parses."""
    folder = Path(folder)
    h = hashlib.sha256()
    for py in program_files(folder):
        h.update(str(py.relative_to(folder)).encode() + b"\0")
        try:
            h.update(py.read_bytes())
        except OSError:
            h.update(b"\1")
        h.update(b"\0")
    return h.hexdigest()


def classes_of() -> dict:
    """rule name -> tuple of classes (the ``RULES`` table)."""
    return {n: r.classes for n, r in REGISTRY.items()}


def specificities() -> dict:
    """rule name -> specificity (every rule, defaults included)."""
    return {n: r.specificity for n, r in REGISTRY.items()}


def gates() -> dict:
    """rule name -> PEP 440 specifier string, for gated rules only."""
    return {n: r.gate for n, r in REGISTRY.items() if r.gate}


def observed_rules() -> frozenset:
    """Names of the rules whose behaviour the runtime trace observes."""
    return frozenset(n for n, r in REGISTRY.items() if r.observed)


def registry_table() -> str:
    """The registry as a Markdown table (name, classes, specificity, gate,
    observed, summary), in registration order; docs/engines.md embeds it."""
    rows = ["| rule | classes | specificity | gate | observed | looks for |", "|---|---|---|---|---|---|"]
    for r in REGISTRY.values():
        gate = f"`{r.gate}`" if r.gate else ""
        rows.append(f"| `{r.name}` | {', '.join(f'`{c}`' for c in r.classes)} | {r.specificity:g} | "
                    f"{gate} | {'yes' if r.observed else ''} | {r.summary.replace('|', '/')} |")
    return "\n".join(rows)


#: the markers around the generated registry table in docs/engines.md
BEGIN, END = "<!-- rules-table -->", "<!-- /rules-table -->"


def write_registry_table(path) -> None:
    """Replace the text between :data:`BEGIN` and :data:`END` in the file ``path``
    with :func:`registry_table` (what ``defects4warp maint rules --write PATH`` does;
    ``maint pages`` rewrites docs/engines.md the same way).

    Raises ValueError when the file holds no such markers (nothing is written)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    pat = re.compile(re.escape(BEGIN) + r"\n(?:.*?\n)?" + re.escape(END), re.S)
    if not pat.search(text):
        raise ValueError(f"{path}: no {BEGIN} ... {END} markers")
    table = registry_table()
    path.write_text(pat.sub(lambda _m: f"{BEGIN}\n{table}\n{END}", text, count=1), encoding="utf-8")
