"""Rules over a whole module or folder: options, allocations, zeroing."""

from __future__ import annotations

import ast

from ._ast import _is_true, _kw, _tail
from .registry import rule


@rule("retain_grad", specificity=0.8,
      summary="retain_grad used")
def retain_grad(unit):
    """``retain_grad=True`` / ``x.retain_grad = True`` / ``retain_grad()``:
    intermediate adjoints kept between passes."""
    for n in ast.walk(unit.tree):
        if isinstance(n, ast.Call) and (_is_true(_kw(n, "retain_grad")) or _tail(n) == "retain_grad"):
            yield n, "retain_grad used", ""
        if isinstance(n, ast.Assign) and _is_true(n.value) and any(
                isinstance(t, ast.Attribute) and t.attr == "retain_grad" for t in n.targets):
            yield n, f"'{ast.unparse(n)}'", ""


@rule("array_ptr_alias",
      summary="wp.array(ptr=...)")
def array_ptr_alias(unit):
    """An array aliasing existing memory: writes through one name change the other."""
    for n in unit.calls:
        if _tail(n) == "array" and _kw(n, "ptr") is not None:
            yield n, "wp.array(ptr=...) aliases existing memory", ""


@rule("no_requires_grad", specificity=0.4, observed=True,
      summary="an array allocated without requires_grad=True whose name is passed as a launch output")
def no_requires_grad(unit):
    """In a program that uses ``requires_grad=True`` somewhere: a float
    allocation without it that a launch writes, or that sits next to
    allocations with it in the same function (outside ``objective()``)."""
    if not unit.project.any_grad:
        return
    outputs, mixed = unit.project.outputs, unit.mixed_allocations
    for name, node in unit.allocs_without_grad:
        if name in outputs:
            yield node, f"'{ast.unparse(node.targets[0])}' allocated without requires_grad=True and written by a launch", ""
        elif id(node) in mixed:
            yield node, (f"'{ast.unparse(node.targets[0])}' allocated without requires_grad=True "
                         "next to allocations with it, in the same function"), ""


@rule("no_grad_zeroing", observed=True,
      summary="backward() is called but nothing in the folder zeroes gradients")
def no_grad_zeroing(unit):
    """No ``tape.zero()``, ``.grad.zero_()`` or ``tape.reset()`` anywhere in
    the folder while ``backward()`` is called; reported once, at the first
    ``backward()`` (in file order)."""
    calls = unit.project.calls
    backward = [(rel, c) for rel, c in calls if _tail(c) == "backward"]
    if backward and backward[0][0] == unit.rel and not any(_tail(c) in ("zero", "zero_", "reset") for _, c in calls):
        yield backward[0][1], ("backward() is called but nothing zeroes gradients "
                               "(no tape.zero(), .grad.zero_() or tape.reset())"), ""
