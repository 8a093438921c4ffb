"""The table of generated pages (:data:`PAGES`), what is not generated and why, and checking and writing
the pages."""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...jsonio import normal_mode
from .builtins_page import render_builtins
from .engines_page import render_engines
from .release_matrix import render_release_matrix
from .results import render_results
from .sources import BASELINE_RELEASE, BOUNDARIES_JSON, MIN_WARP_JSON, ROOT, VALIDATION_GLOBS
from .upgrade_audit import render_upgrade_audit
from .versions import render_old_releases, render_version_matrix


#: Generated pages (or parts) not rendered here, and why.
NOT_GENERATED = {
    "docs/results.md (sections after the generated block)":
        "the generated tier (mutants) is written from `defects4warp maint mutate` output that is not committed (the "
        "baseline engines are compared in docs/engines.md, generated)",
    "docs/engines.md (v4 fit, evidence and side-by-side tables)":
        "they come from `defects4warp maint fit-weights` and scripts/side_by_side.py runs whose inputs are not committed (their "
        "outputs docs/data/fit-v4.json and fit-v4-evid.json are); the rule table and the comparison of the "
        "engines are generated",
}


@dataclass(frozen=True)
class Page:
    """A generated page: its path (relative to the root), its renderer, and a description of its sources."""

    path: str
    render: object
    sources: str


#: The pages ``defects4warp maint pages`` writes and checks.
PAGES = (
    Page("docs/version-matrix.md", render_version_matrix, " + ".join(VALIDATION_GLOBS)),
    Page("docs/release-matrix.md", render_release_matrix, "docs/data/engine-*.json + the validation JSON"),
    Page("docs/upgrade-audit.md", render_upgrade_audit,
         "the validation JSON + docs/data/engine-*.json + harness/data/builtins"),
    Page("docs/results.md", render_results, "the newest docs/data/engine-*.json (generated block only)"),
    Page("docs/engines.md", render_engines,
         f"the rule registry + docs/data/engine-{BASELINE_RELEASE}.json + docs/data/baselines/*.json "
         "(generated blocks only)"),
    Page("docs/builtins.md", render_builtins, "harness/data/builtins/*-cpu.json (generated part only)"),
    Page("docs/old-releases.md", render_old_releases, f"{MIN_WARP_JSON} + {BOUNDARIES_JSON}"),
)


def check_pages(root: Path = ROOT, *, diffs: dict | None = None, max_lines: int = 20) -> list:
    """Names of the pages whose committed text differs from what their JSON renders to (empty: all current).

    Parameters
    ----------
    root : Path
        Folder holding docs/ and docs/data/ (default: this checkout).
    diffs : dict, optional
        When given, filled with ``{page path: [lines]}`` for every differing
        page: the start of a unified diff (:func:`difflib.unified_diff`,
        ``committed/PAGE`` -> ``generated/PAGE``, 3 lines of context) of at
        most ``max_lines`` lines, then ``"... N more lines"`` when it is
        longer; a missing page gets one line saying so.
    max_lines : int
        Diff lines kept per page (default 20: enough to see the first
        differing rows of a table without flooding a terminal).

    Raises
    ------
    PageSourceError
        When a source file is missing or malformed (names the file).
    """
    stale = []
    for p in PAGES:
        path = root / p.path
        committed = path.read_text() if path.is_file() else None
        text = p.render(root)
        if committed == text:
            continue
        stale.append(p.path)
        if diffs is None:
            continue
        if committed is None:
            diffs[p.path] = [f"(no committed {p.path}: `defects4warp maint pages` writes it)"]
            continue
        lines = list(difflib.unified_diff(committed.splitlines(), text.splitlines(), f"committed/{p.path}",
                                          f"generated/{p.path}", lineterm=""))
        more = len(lines) - max_lines
        diffs[p.path] = lines[:max_lines] + ([f"... {more} more lines"] if more > 0 else [])
    return stale


def write_pages(root: Path = ROOT) -> list:
    """Rewrite every page of :data:`PAGES` (atomically); returns the ones whose text changed."""
    changed = []
    for p in PAGES:
        path = root / p.path
        text = p.render(root)
        if path.is_file() and path.read_text() == text:
            continue
        fd, tmp = tempfile.mkstemp(prefix=".part-", suffix=".md", dir=path.parent)
        normal_mode(fd)  # the umask's mode (0644 under 022), not mkstemp's 0600
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
        changed.append(p.path)
    return changed
