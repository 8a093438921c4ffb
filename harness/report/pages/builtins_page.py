"""docs/builtins.md: its generated part, from the committed builtins conformance data."""

from __future__ import annotations

from pathlib import Path

from ...builtins import load, measured_releases
from ..builtins_page import END, START, corpus_builtins, page_markdown, splice
from .prose import _existing, _splice, _wrapped
from .sources import ROOT


@_wrapped
def render_builtins(root: Path = ROOT) -> str:
    """docs/builtins.md: its generated part from the committed builtins conformance data
    (``harness/data/builtins/*-cpu.json``, :func:`defects4warp.report.builtins_page.page_markdown`)."""
    existing = _existing(root, "docs/builtins.md")
    _splice(existing, START, END, "", "docs/builtins.md")  # the page and its markers must be there
    docs = {r: load.__wrapped__(r, "cpu") for r in measured_releases("cpu")}
    # the same page as `defects4warp maint builtins --write-package-data` writes (with the corpus cases table)
    return splice(existing, page_markdown(docs, cases=corpus_builtins()))
