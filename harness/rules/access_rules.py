"""Static read/write analysis across the launches of one host function
(kernel read/write sets from the kernels' ASTs, host in-place writes, loop
bodies taken twice, the variant's own helpers inlined two levels deep)."""

from __future__ import annotations

import ast

from ._ast import _deco_kind, _events
from .registry import rule

#: Host functions the access pass skips (construction and the untaped objective).
SKIP_FUNCTIONS = ("__init__", "objective", "make_problem")


def access_findings(unit, *, skip=SKIP_FUNCTIONS) -> list:
    """(rule, file, line, detail) of every write-after-read and
    write-after-write in the host functions of ``unit`` (computed once per
    unit; the first finding per (rule, file, line) is kept)."""
    def compute():
        kernels, host_fns = unit.project.kernels, unit.project.host_fns
        out = {}
        for fn in [n for n in ast.walk(unit.tree) if isinstance(n, ast.FunctionDef) and not _deco_kind(n)]:
            if fn.name in skip:
                continue
            reads, writes, last = {}, {}, {}
            for line, kind, key, who, struct, where in _events(fn.body, kernels, host_fns, 0, unit.rel):
                if kind == "read":
                    reads.setdefault(key, (who, line))
                    last.setdefault(key, []).append((who, line))
                    continue
                if key in reads and reads[key][0] != who:
                    if kind == "host":
                        name = "host_assign_after_read" if who == ".assign()" else "host_write_after_read"
                    else:
                        name = "struct_write_after_read" if struct else "static_write_after_read"
                    by = f"kernel {who} writes '{key}'"
                    if kind == "host":  # 'wp.copy(self.x, ...)', 'self.x.assign()': the call as written
                        by = f"'{who[:-2]}({key}, ...)'" if who.startswith("wp.") else f"'{key}{who}'"
                    # cite the read nearest before this write (the copy inside the loop that runs, not the
                    # first one before it); which reads count is unchanged: the first reader decides
                    rwho, rline = next((r for r in reversed(last[key]) if r[0] != who), reads[key])
                    out.setdefault((name, where, line), f"{by} after {rwho} (line {rline}) read it, in {fn.name}")
                elif kind == "assign" and key in writes and writes[key][0] != who:
                    out.setdefault(("write_after_write", where, line),
                                   f"kernel {who} assigns '{key}', already written by {writes[key][0]} "
                                   f"(line {writes[key][1]}) in {fn.name}")
                writes.setdefault(key, (who, line))
        return [(name, where, line, detail) for (name, where, line), detail in out.items()]
    return unit.cached(("access", tuple(skip)), compute)


def _of(unit, name):
    for r, where, line, detail in access_findings(unit):
        if r == name:
            yield line, detail, "", where


@rule("static_write_after_read", observed=True,
      summary="within one host function, a launch writes an array that an earlier launch read")
def static_write_after_read(unit):
    """Write-after-read between launches: backward() replays the reader
    against the overwritten contents."""
    yield from _of(unit, "static_write_after_read")


@rule("struct_write_after_read", observed=True,
      summary="static_write_after_read for an array reached through a struct")
def struct_write_after_read(unit):
    """Write-after-read through a ``@wp.struct`` field."""
    yield from _of(unit, "struct_write_after_read")


@rule("host_write_after_read", observed=True,
      summary="`.zero_()` / `.fill_()` / wp.copy on an array an earlier launch read (loop bodies count twice)")
def host_write_after_read(unit):
    """An in-place host write after a launch read the array."""
    yield from _of(unit, "host_write_after_read")


@rule("host_assign_after_read", observed=True,
      summary="`.assign()` on an array an earlier launch read (values replaced from the host)")
def host_assign_after_read(unit):
    """Values replaced from the host after a launch read them; not recorded as a kernel write."""
    yield from _of(unit, "host_assign_after_read")


@rule("write_after_write", specificity=0.2, observed=True,
      summary="two launches in one host function assign one array")
def write_after_write(unit):
    """A second kernel assigns (not accumulates) an array another already wrote."""
    yield from _of(unit, "write_after_write")
