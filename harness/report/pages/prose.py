"""Text every generated page shares: long prose wrapped, a generated block spliced between the markers of a
hand-written page, number cells, the command that measures a release, and the error a missing source raises.

Imports the standard library only (scripts that write pages of their own wrap their prose with
:func:`wrap_prose`)."""

from __future__ import annotations

import functools
import re
import textwrap
from pathlib import Path


class PageSourceError(RuntimeError):
    """A source file of a page is missing or is not the JSON it should be (names the file)."""


#: Longest line of prose a generated page keeps as it is (tables, headings, HTML and code are kept
#: whatever their length): a longer one (a list of 20 releases' costs ran to 4,659 characters) is
#: wrapped at :data:`WRAP_WIDTH` so a diff or an editor can show it.
MAX_PROSE_LINE = 400


#: Width of the lines a too-long line of prose is wrapped to.
WRAP_WIDTH = 100


def wrap_prose(text: str, *, max_line: int = MAX_PROSE_LINE, width: int = WRAP_WIDTH) -> str:
    """``text`` (Markdown) with every line of prose longer than ``max_line`` characters wrapped at
    ``width``, at spaces only (a URL or a code span is never cut inside a word); a list item's or a
    quote's continuation lines are indented under its text, so the Markdown renders as before.
    Table rows (``|``), headings, HTML lines (``<``) and fenced code blocks are kept as they are."""
    out, fenced = [], False
    for line in text.split("\n"):
        bare = line.lstrip()
        if bare.startswith("```"):
            fenced = not fenced
        if fenced or bare.startswith("```") or len(line) <= max_line or bare.startswith(("|", "#", "<")):
            out.append(line)
            continue
        lead = re.match(r"\s*(?:(?:[-*+]|\d+\.) |> )?", line).group(0)
        cont = lead if lead.strip() == ">" else " " * len(lead)
        out += textwrap.wrap(line[len(lead):], width=width, initial_indent=lead, subsequent_indent=cont,
                             break_long_words=False, break_on_hyphens=False)
    return "\n".join(out)


def _wrapped(render):
    """A page renderer whose page comes out through :func:`wrap_prose`."""

    @functools.wraps(render)
    def inner(*args, **kwargs) -> str:
        return wrap_prose(render(*args, **kwargs))

    return inner


def measure_command(release: str, what: str = "") -> str:
    """The command that measures ``release`` (quoted in pages where data is missing)."""
    return f"`defects4warp maint pages --measure --warp {release}{what}`"


def _f(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def _kept_block(existing: str | None, start: str, end: str) -> str:
    """The text from ``start`` to ``end`` (markers included) of ``existing``, after a blank line; empty when
    the page or either marker is missing."""
    if not existing or start not in existing or end not in existing.split(start, 1)[1]:
        return ""
    return "\n" + start + existing.split(start, 1)[1].split(end, 1)[0] + end + "\n"


def _splice(existing: str | None, start: str, end: str, block: str, path: str) -> str:
    """``existing`` with the text between ``start`` and ``end`` replaced by ``block`` (markers kept).

    Raises
    ------
    PageSourceError
        When the page or one of its markers is missing (names the page).
    """
    if existing is None:
        raise PageSourceError(f"{path}: missing (it holds hand-written sections around its generated block)")
    if start not in existing or end not in existing.split(start, 1)[1]:
        raise PageSourceError(f"{path}: no {start} ... {end} markers around the generated block")
    pre, rest = existing.split(start, 1)
    post = rest.split(end, 1)[1]
    return f"{pre}{start}\n{block.rstrip()}\n{end}{post}"


def _existing(root: Path, rel: str) -> str | None:
    p = root / rel
    return p.read_text() if p.is_file() else None
