"""Every generated page of docs/, rendered from the committed JSON it is made of.

One table, :data:`PAGES`, says for each generated page which files under
``docs/data/`` it is rendered from and by which function. ``defects4warp
pages`` rewrites the pages from those files (nothing is measured), ``--check``
only compares (CI: the committed pages are what the committed JSON renders
to), and ``--measure`` first validates, on the releases of
:data:`harness.envs.RELEASES` that no committed validation covers yet, the
whole corpus with the independent oracle (reusing the result store, so an
interrupted run resumes), writing ``docs/data/validation-<release>.json``.

Pages whose source JSON is not committed (``docs/results.md``, whose run JSON
was never committed and which holds hand-written sections; the tables of
``docs/engines.md``) are listed in :data:`NOT_GENERATED` with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

#: Repository root (pages and data are relative to it).
ROOT = Path(__file__).resolve().parent.parent

#: Validation JSON files the version matrix merges (per-release files written by ``pages --measure``
#: or ``validate --warp X --json docs/data/validation-X.json``, and the two-release file of 2026-12-01).
VALIDATION_GLOBS = ("docs/data/oracle-validation-*.json", "docs/data/validation-*.json")

#: Matrix JSON of the upgrade audit page (``defects4warp matrix --warp 1.16.0,1.19.0 --json``).
AUDIT_MATRIX = "docs/data/matrix-1.16.0-1.19.0.json"

#: Generated pages not rendered here, and why.
NOT_GENERATED = {
    "docs/results.md": "made by `defects4warp report` from a run JSON that is not committed; it also holds "
                       "hand-written sections (splits, baselines, the generated tier)",
    "docs/release-matrix.md": "made by `defects4warp matrix` from a matrix JSON that is not committed "
                              "(the v2 engine on the 62-case corpus)",
    "docs/engines.md": "its tables are measured by the commands it quotes; the page is mostly prose",
}


class PageSourceError(RuntimeError):
    """A source file of a page is missing or is not the JSON it should be (names the file)."""


def _read(path: Path, key: str) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise PageSourceError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(doc, dict) or key not in doc:
        raise PageSourceError(f"{path}: no '{key}' key")
    return doc


def validation_files(root: Path = ROOT) -> list:
    """The committed validation JSON files, sorted by name."""
    out = []
    for g in VALIDATION_GLOBS:
        out += sorted(root.glob(g))
    return out


def validated_releases(root: Path = ROOT) -> set:
    """Releases some committed validation JSON covers."""
    return {r for p in validation_files(root) for r in _read(p, "releases")["releases"]}


def render_version_matrix(root: Path = ROOT) -> str:
    """docs/version-matrix.md from every committed validation JSON (merged)."""
    from .report import merge_validations, version_matrix_markdown

    files = validation_files(root)
    if not files:
        raise PageSourceError(f"no validation JSON matches {', '.join(VALIDATION_GLOBS)} under {root}")
    return version_matrix_markdown(merge_validations([_read(p, "releases") for p in files]))


def render_upgrade_audit(root: Path = ROOT) -> str:
    """docs/upgrade-audit.md: the audit from the oldest to the newest release of :data:`AUDIT_MATRIX`."""
    from .matrix import audit, audit_markdown

    doc = _read(root / AUDIT_MATRIX, "releases")

    def key(r):
        try:
            return Version(r)
        except InvalidVersion:
            raise PageSourceError(f"{root / AUDIT_MATRIX}: release '{r}' is not a release number") from None

    rels = sorted(doc["releases"], key=key)
    return audit_markdown(audit(doc, rels[0], rels[-1]))


@dataclass(frozen=True)
class Page:
    """A generated page: its path (relative to the root), its renderer, and a description of its sources."""

    path: str
    render: object
    sources: str


#: The pages ``defects4warp pages`` writes and checks.
PAGES = (
    Page("docs/version-matrix.md", render_version_matrix, " + ".join(VALIDATION_GLOBS)),
    Page("docs/upgrade-audit.md", render_upgrade_audit, AUDIT_MATRIX),
)


def check_pages(root: Path = ROOT) -> list:
    """Names of the pages whose committed text differs from what their JSON renders to (empty: all current)."""
    stale = []
    for p in PAGES:
        path = root / p.path
        if not path.is_file() or path.read_text() != p.render(root):
            stale.append(p.path)
    return stale


def write_pages(root: Path = ROOT) -> list:
    """Rewrite every page of :data:`PAGES` (atomically); returns the ones whose text changed."""
    import os
    import tempfile

    changed = []
    for p in PAGES:
        path = root / p.path
        text = p.render(root)
        if path.is_file() and path.read_text() == text:
            continue
        fd, tmp = tempfile.mkstemp(prefix=".part-", suffix=".md", dir=path.parent)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
        changed.append(p.path)
    return changed


def missing_releases(releases=None, root: Path = ROOT) -> list:
    """The releases of ``releases`` (default :data:`harness.envs.RELEASES`) no committed validation covers."""
    from .envs import RELEASES

    have = validated_releases(root)
    return [r for r in (releases or RELEASES) if r not in have]


def measure_missing(cases: list, releases=None, root: Path = ROOT, *, device: str = "cpu", jobs: int = 1,
                    timeout_s: float = 300.0, store=None, executor=None, on_check=None, log=None) -> list:
    """Validate ``cases`` on each release :func:`missing_releases` names, oldest
    first, writing ``docs/data/validation-<release>.json`` after each (checks
    in ``store`` are reused). Returns the releases measured."""
    from .machine import describe
    from .validate import validate_releases

    import datetime

    done = []
    for rel in sorted(missing_releases(releases, root), key=Version):
        if log:
            log(f"validating the corpus on Warp {rel}")
        validate_releases(cases, [rel], device=device, jobs=jobs, timeout_s=timeout_s, store=store,
                          executor=executor, on_check=on_check,
                          json_path=str(root / "docs" / "data" / f"validation-{rel}.json"),
                          meta={"machine": describe(), "measured_on": datetime.date.today().isoformat()})
        done.append(rel)
    return done
