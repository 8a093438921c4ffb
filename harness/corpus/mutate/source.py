"""Source text, AST positions and minimal text edits for the mutation operators.

Operators find their sites on the :mod:`ast` of a variant's source and express
the fault as *text edits* on the original source (replace a span, delete a
statement, insert lines), so that a mutant differs from its parent by the
operator's edit and nothing else: no reformatting, no comment loss, which a
round trip through ``ast.unparse`` would cause.

Positions follow :mod:`ast`: lines are 1-based, columns are 0-based UTF-8 byte
offsets. Edits are applied on the UTF-8 bytes of the source.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    """Replace the byte span ``[start, end)`` of one file with ``text``.

    Attributes
    ----------
    start, end : int
        Byte offsets into the UTF-8 encoding of the file (``start <= end``;
        equal for an insertion).
    text : str
        The replacement.
    """

    start: int
    end: int
    text: str


class Source:
    """One parsed Python file: text, AST, parent links and offset helpers.

    Parameters
    ----------
    path : str
        The file's path relative to the variant folder (used in site names).
    text : str
        Its contents.

    Raises
    ------
    SyntaxError
        When ``text`` is not valid Python.
    """

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.data = text.encode("utf-8")
        self.tree = ast.parse(text)
        self.line_starts = [0]
        for i, b in enumerate(self.data):
            if b == 0x0A:
                self.line_starts.append(i + 1)
        self.parent = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node

    # -- offsets -----------------------------------------------------------
    def off(self, lineno: int, col: int) -> int:
        """Byte offset of (1-based line, 0-based byte column)."""
        return self.line_starts[lineno - 1] + col

    def start(self, node) -> int:
        return self.off(node.lineno, node.col_offset)

    def end(self, node) -> int:
        return self.off(node.end_lineno, node.end_col_offset)

    def seg(self, node) -> str:
        """The exact source text of ``node`` (without enclosing parentheses)."""
        return self.data[self.start(node):self.end(node)].decode("utf-8")

    def line_text(self, lineno: int) -> str:
        s = self.line_starts[lineno - 1]
        e = self.line_starts[lineno] if lineno < len(self.line_starts) else len(self.data)
        return self.data[s:e].decode("utf-8")

    def indent_of(self, stmt) -> str:
        line = self.line_text(stmt.lineno)
        return line[: len(line) - len(line.lstrip())]

    def site(self, node, detail: str = "") -> str:
        """A stable site name: ``path:line:col`` plus an optional ``/detail``."""
        return f"{self.path}:{node.lineno}:{node.col_offset}" + (f"/{detail}" if detail else "")

    # -- structure ---------------------------------------------------------
    def ancestors(self, node):
        while node in self.parent:
            node = self.parent[node]
            yield node

    def enclosing_function(self, node):
        for a in self.ancestors(node):
            if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return a
        return None

    def owns_lines(self, stmt) -> bool:
        """True when ``stmt`` sits alone on its lines (nothing else before or after it)."""
        first = self.line_text(stmt.lineno)
        last = self.line_text(stmt.end_lineno)
        before = first.encode("utf-8")[: stmt.col_offset].decode("utf-8")
        after = last.encode("utf-8")[stmt.end_col_offset:].decode("utf-8")
        return before.strip() == "" and (after.strip() == "" or after.strip().startswith("#"))

    def block_of(self, stmt):
        """``(list, index)``: the statement list holding ``stmt`` and its position."""
        par = self.parent.get(stmt)
        for fieldname in ("body", "orelse", "finalbody", "handlers"):
            lst = getattr(par, fieldname, None)
            if isinstance(lst, list) and stmt in lst:
                return lst, lst.index(stmt)
        return None, -1

    def stmt_lines_span(self, stmt) -> tuple:
        """Byte span of the whole lines ``stmt`` occupies, newline included."""
        s = self.line_starts[stmt.lineno - 1]
        e = self.line_starts[stmt.end_lineno] if stmt.end_lineno < len(self.line_starts) else len(self.data)
        return s, e

    def stmt_block_text(self, stmt) -> str:
        s, e = self.stmt_lines_span(stmt)
        t = self.data[s:e].decode("utf-8")
        return t if t.endswith("\n") else t + "\n"

    # -- edits ---------------------------------------------------------------
    def delete_stmt(self, stmt) -> list:
        """Edits removing ``stmt``; a ``pass`` takes its place when it is alone in its block."""
        lst, _ = self.block_of(stmt)
        s, e = self.stmt_lines_span(stmt)
        if lst is not None and len(lst) == 1:
            return [Edit(s, e, self.indent_of(stmt) + "pass\n")]
        return [Edit(s, e, "")]

    def insert_after(self, stmt, lines: list, indent: str | None = None) -> list:
        """Edits inserting ``lines`` (no newline) after ``stmt``, at its indentation."""
        ind = self.indent_of(stmt) if indent is None else indent
        _, e = self.stmt_lines_span(stmt)
        pre = "" if self.data[:e].endswith(b"\n") else "\n"
        return [Edit(e, e, pre + "".join(ind + ln + "\n" for ln in lines))]

    def insert_before(self, stmt, block_text: str) -> list:
        """Edits inserting ready-indented ``block_text`` before the lines of ``stmt``."""
        s, _ = self.stmt_lines_span(stmt)
        return [Edit(s, s, block_text)]

    def reindent(self, stmt, new_indent: str) -> str:
        """The lines of ``stmt`` re-indented from its own indentation to ``new_indent``."""
        old = self.indent_of(stmt)
        out = []
        for ln in self.stmt_block_text(stmt).splitlines(keepends=True):
            out.append(new_indent + ln[len(old):] if ln.startswith(old) else ln)
        return "".join(out)


def apply_edits(text: str, edits: list) -> str:
    """Apply non-overlapping byte-span edits to ``text``.

    Raises
    ------
    ValueError
        When two edits overlap (an operator bug).
    """
    data = text.encode("utf-8")
    out = data
    last = None
    for ed in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        if last is not None and ed.end > last.start and not (ed.start == ed.end == last.start):
            raise ValueError(f"overlapping edits at bytes {ed.start}-{ed.end} and {last.start}-{last.end}")
        out = out[: ed.start] + ed.text.encode("utf-8") + out[ed.end:]
        last = ed
    return out.decode("utf-8")


def dotted(node) -> str:
    """``wp.kernel`` for ``Attribute(Name('wp'), 'kernel')``; ``""`` when not a dotted name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def warp_decorator(fn) -> str:
    """``kernel``, ``func``, ``func_grad``, ``func_replay``, ``func_native`` or ``""``."""
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = dotted(target)
        if name.startswith("wp.") or name.startswith("warp."):
            tail = name.split(".")[-1]
            if tail in ("kernel", "func", "func_grad", "func_replay", "func_native"):
                return tail
    return ""


def is_device_code(src: Source, node) -> bool:
    """True when ``node`` lies in a ``@wp.kernel`` or ``@wp.func*`` function."""
    for a in src.ancestors(node):
        if isinstance(a, ast.FunctionDef) and warp_decorator(a):
            return True
    return False
