"""AST patterns the mutation operators (:mod:`defects4warp.corpus.mutate.operators`) look for: Warp calls and
allocations, tapes and backward calls, host writes and launches, names bound and read, guards around a
singular point. Each is a small predicate or generator over one :class:`defects4warp.corpus.mutate.source.Source`."""

from __future__ import annotations

import ast

from .source import Source, dotted, is_device_code, warp_decorator


#: Warp allocation functions that take ``requires_grad=``.
ALLOCATORS = frozenset(
    "array zeros empty ones full zeros_like empty_like ones_like full_like clone from_numpy".split()
)


#: Host-side writes to an array's contents that are not launches (``types.py``, ``context.py``).
HOST_WRITES = frozenset("assign zero_ fill_".split())


def _calls(src: Source, host_only=False, device_only=False):
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Call):
            dev = is_device_code(src, node)
            if (host_only and dev) or (device_only and not dev):
                continue
            yield node


def _kw(call, name):
    for k in call.keywords:
        if k.arg == name:
            return k
    return None


def _is_true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _alloc_with_grad(call) -> bool:
    name = dotted(call.func)
    return (name.startswith("wp.") and name.split(".")[-1] in ALLOCATORS
            and _kw(call, "requires_grad") is not None and _is_true(_kw(call, "requires_grad").value))


def _expr_call_stmts(src: Source):
    """``(stmt, call)`` for every expression statement that is a call, outside device code."""
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and not is_device_code(src, node):
            if src.owns_lines(node):
                yield node, node.value


def _is_tape_with(stmt) -> bool:
    if not isinstance(stmt, (ast.With,)):
        return False
    for item in stmt.items:
        e = item.context_expr
        name = dotted(e.func if isinstance(e, ast.Call) else e).lower()
        if "tape" in name:
            return True
    return False


def _is_backward_stmt(stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "backward")


def _is_host_write(stmt) -> bool:
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    f = stmt.value.func
    if isinstance(f, ast.Attribute) and f.attr in HOST_WRITES:
        return True
    return dotted(f) == "wp.copy"


def _is_launch_stmt(stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and dotted(stmt.value.func) == "wp.launch")


def _blocks(src: Source):
    """Every statement list of host code (function bodies and nested blocks)."""
    for node in ast.walk(src.tree):
        if is_device_code(src, node) or (isinstance(node, ast.FunctionDef) and warp_decorator(node)):
            continue
        for fieldname in ("body", "orelse", "finalbody"):
            lst = getattr(node, fieldname, None)
            if isinstance(lst, list) and lst and isinstance(lst[0], ast.stmt):
                yield lst


def _name_of(node) -> str:
    """``x`` for ``x``, ``self.x`` and ``x[...]``; ``""`` otherwise."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _bound_name(src: Source, call) -> str:
    """The name an allocation is assigned to (``x = wp.zeros(...)``, ``self.x = ...``), or ``""``."""
    par = src.parent.get(call)
    if isinstance(par, ast.Assign) and len(par.targets) == 1:
        return _name_of(par.targets[0])
    if isinstance(par, ast.keyword) and isinstance(src.parent.get(par), ast.Call):
        return par.arg or ""
    return ""


def _param_names(src: Source) -> set:
    """Names bound in a ``params`` dict display (``self.params = {"k": self.k}``): the parameters."""
    out = set()
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any("params" in _name_of(t) for t in node.targets):
            for v in node.value.values:
                out.add(_name_of(v))
    return out


def _written_twice(src: Source) -> set:
    """Names passed as launch outputs by two launch sites, or by one launch inside a loop."""
    count = {}
    for call in ast.walk(src.tree):
        if isinstance(call, ast.Call) and dotted(call.func) == "wp.launch":
            kw = _kw(call, "outputs")
            if kw is None or not isinstance(kw.value, ast.List):
                continue
            in_loop = any(isinstance(a, (ast.For, ast.While)) for a in src.ancestors(call))
            for e in kw.value.elts:
                n = _name_of(e)
                if n:
                    count[n] = count.get(n, 0) + (2 if in_loop else 1)
    return {n for n, c in count.items() if c >= 2}


def _loads(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stores(stmts) -> set:
    return {n.id for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _small_constant(src: Source, node, limit=1.0e-3) -> bool:
    """A positive numeric literal <= ``limit``, bare or wrapped (``wp.float64(1e-9)``, ``float(...)``)."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        if dotted(node.func) in ("float", "wp.float32", "wp.float64", "wp.float16"):
            node = node.args[0]
    return (isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool) and 0 < node.value <= limit)


def _guard_removals(src: Source, node):
    """``(anchor, replacement_text)`` for each epsilon guard in the subtree of ``node``:
    ``e + eps`` / ``eps + e`` and ``wp.max(e, eps)`` / ``wp.max(eps, e)``."""
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
            if _small_constant(src, n.right):
                yield n, src.seg(n.left)
            elif _small_constant(src, n.left):
                yield n, src.seg(n.right)
        elif isinstance(n, ast.Call) and dotted(n.func) == "wp.max" and len(n.args) == 2:
            a, b = n.args
            if _small_constant(src, b):
                yield n, src.seg(a)
            elif _small_constant(src, a):
                yield n, src.seg(b)


def _wrap(src: Source, anchor, text: str, keep) -> str:
    """Parenthesise ``text`` when the kept operand is an operator expression inside another operator."""
    par = src.parent.get(anchor)
    if isinstance(keep, (ast.BinOp, ast.BoolOp, ast.IfExp, ast.Compare, ast.UnaryOp)) and isinstance(
            par, (ast.BinOp, ast.UnaryOp, ast.Attribute, ast.Subscript)):
        return f"({text})"
    return text


def _inside_where(src: Source, node) -> bool:
    for a in src.ancestors(node):
        if isinstance(a, ast.IfExp) or (isinstance(a, ast.Call) and dotted(a.func) == "wp.where"):
            return True
    return False


def _needs_parens(node) -> bool:
    return (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))) or isinstance(
        node, (ast.IfExp, ast.BoolOp, ast.Compare, ast.Lambda))


def _is_literal_call(node) -> bool:
    return (isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], (ast.Constant, ast.UnaryOp))
            and dotted(node.func) in ("float", "int", "wp.float32", "wp.float64", "wp.float16", "wp.int32"))
