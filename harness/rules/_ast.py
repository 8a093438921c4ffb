"""Shared AST helpers of the source rules (standard library only).

Everything here is a pure function of :mod:`ast` nodes; the per-file and
per-folder passes that several rules need are computed once by
:class:`defects4warp.rules.unit.Unit` / :class:`defects4warp.rules.unit.Project`.
"""

from __future__ import annotations

import ast
import re

_KERNEL_DECOS = {"kernel", "func", "func_grad", "func_replay", "func_native"}
#: Builtins whose adjoint is singular somewhere (wp.length/normalize are
#: guarded at the zero vector on every release, so they are not listed).
_NONSMOOTH = {"sqrt", "pow", "log", "atan2", "acos", "asin"}
_PIECEWISE = {"round", "floor", "ceil", "sign", "trunc", "rint", "int", "int32", "int64"}
_OVERFLOW = {"exp", "log", "pow", "sqrt", "tan", "div"}
_MUTATORS = {"launch", "assign", "fill_", "copy", "zero_"}
_ALLOC = {"zeros", "empty", "zeros_like", "empty_like", "array", "full", "ones", "full_like", "ones_like"}


def _tail(node) -> str:
    """Last name of a call target or attribute chain (``wp.sqrt`` -> ``sqrt``)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _dotted(node) -> str:
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):
        return _dotted(node.value)
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


def _deco_kind(fn) -> str | None:
    for d in fn.decorator_list:
        t = _tail(d)
        if t in _KERNEL_DECOS:
            return t
    return None


def _kw(call: ast.Call, name: str):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def _is_true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


_INT_DTYPES = {"int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "bool_"}


def _grad_maybe(call) -> bool:
    """True when an allocation passes requires_grad other than a literal
    False, or allocates an integer array (which never carries a gradient)."""
    v = _kw(call, "requires_grad")
    dt = _kw(call, "dtype")
    if dt is not None and _tail(dt) in _INT_DTYPES:
        return True
    return v is not None and not _is_false(v)


def _is_false(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _names_in(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _resolve_locals(fn, exprs, depth: int = 3) -> list:
    """``exprs`` plus the right-hand sides of the local assignments (in ``fn``)
    of the names they use, followed ``depth`` levels deep."""
    assigns = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    assigns.setdefault(t.id, []).append(n.value)
    out, frontier, seen = list(exprs), list(exprs), set()
    for _ in range(depth):
        nxt = []
        for e in frontier:
            for name in _names_in(e) - seen:
                seen.add(name)
                nxt += assigns.get(name, [])
        out += nxt
        frontier = nxt
    return out


_INT_CALLS = _INT_DTYPES | {"tid", "len", "floor_div"}


def _is_int_annotation(node) -> bool:
    return node is not None and isinstance(node, (ast.Name, ast.Attribute)) and _tail(node) in _INT_DTYPES


def int_locals(fn, int_funcs=frozenset()) -> set:
    """Names in ``fn`` that hold an integer wherever they are assigned.

    A name is integer when it is a parameter annotated with an integer dtype
    (``int``, ``wp.int32``, ...), the target of ``for ... in range(...)``, or
    every assignment to it is an integer expression: an ``int`` literal, a call
    of ``int()``/``wp.int32()``/... or ``wp.tid()`` or of a ``@wp.func`` in
    ``int_funcs`` (functions annotated ``-> int``), or arithmetic, unary and
    conditional expressions over integer names and literals. A name with any
    other assignment, and every name the function does not assign (globals,
    untyped parameters), is not integer. Computed as the greatest fixpoint,
    so ``r = r * i`` with ``r = int(1)`` is integer.

    An integer local carries no adjoint (Warp's adjoints are for float
    types), which is what the loop rules need to tell a loop that computes an
    index or a factorial from one whose float state the adjoint replays.
    """
    params = {a.arg: a.annotation for a in fn.args.args}
    assigns: dict = {}
    fixed: set = {n for n, a in params.items() if _is_int_annotation(a)}

    def add(name, value):
        assigns.setdefault(name, []).append(value)

    for n in ast.walk(fn):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    add(t.id, n.value)
                elif isinstance(t, ast.Tuple):
                    is_tid = isinstance(n.value, ast.Call) and _tail(n.value) == "tid"
                    for e in t.elts:
                        if isinstance(e, ast.Name):
                            add(e.id, ast.Constant(0) if is_tid else None)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            add(n.target.id, n.value)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            add(n.target.id, ast.Constant(0) if _is_int_annotation(n.annotation) else None)
        elif isinstance(n, ast.For) and isinstance(n.target, ast.Name):
            it = n.iter
            add(n.target.id, ast.Constant(0) if isinstance(it, ast.Call) and _tail(it) == "range" else None)
    for name in params:
        if name not in fixed and name in assigns:
            assigns[name].append(None)  # an untyped parameter's incoming value
    ints = set(assigns) | fixed

    def is_int(e) -> bool:
        if e is None:
            return False
        if isinstance(e, ast.Constant):
            return isinstance(e.value, int)
        if isinstance(e, ast.Name):
            return e.id in ints
        if isinstance(e, ast.Call):
            return _tail(e) in _INT_CALLS or _tail(e) in int_funcs
        if isinstance(e, ast.BinOp):
            return not isinstance(e.op, ast.Pow) and is_int(e.left) and is_int(e.right)
        if isinstance(e, ast.UnaryOp):
            return is_int(e.operand)
        if isinstance(e, ast.IfExp):
            return is_int(e.body) and is_int(e.orelse)
        return False

    changed = True
    while changed:
        changed = False
        for name, values in assigns.items():
            if name in ints and name not in fixed and not all(is_int(v) for v in values):
                ints.discard(name)
                changed = True
    return ints


def int_funcs(functions) -> set:
    """Names of the ``@wp.func`` definitions in ``functions`` annotated ``-> int``."""
    return {fn.name for fn in functions if _is_int_annotation(getattr(fn, "returns", None))}


def _base_name(node):
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None



def inside_loop(fn, target) -> bool:
    """True when ``target`` lies inside a ``for``/``while`` loop of ``fn``
    other than ``target`` itself."""
    for loop in ast.walk(fn):
        if isinstance(loop, (ast.For, ast.While)) and loop is not target:
            if any(n is target for n in ast.walk(loop)):
                return True
    return False


def is_tape_with(w: ast.With) -> bool:
    """True for ``with wp.Tape():`` / ``with tape:`` / ``with self.tape:`` blocks."""
    for item in w.items:
        e = item.context_expr
        if (isinstance(e, ast.Call) and _tail(e) == "Tape") or "tape" in _dotted(e).lower():
            return True
    return False


def _struct_params(fn) -> set:
    """Kernel params annotated with a bare capitalised name (a ``@wp.struct``)."""
    return {a.arg for a in fn.args.args if isinstance(a.annotation, ast.Name) and a.annotation.id[:1].isupper()}


def _launch_args(call: ast.Call) -> tuple:
    """(kernel name, [argument expressions]) of a ``wp.launch`` call."""
    kernel = _kw(call, "kernel") or (call.args[0] if call.args else None)
    ins = _kw(call, "inputs") or (call.args[2] if len(call.args) > 2 else None)
    outs = _kw(call, "outputs") or (call.args[3] if len(call.args) > 3 else None)
    args = []
    for group in (ins, outs):
        if isinstance(group, (ast.List, ast.Tuple)):
            args += list(group.elts)
    return (_tail(kernel) if kernel is not None else ""), args


_HOST_WRITES = {"assign", "zero_", "fill_"}


def _events(stmts, kernels, host_fns=None, depth: int = 0, here: str = "") -> list:
    """Array accesses of a host statement list in execution order, loop bodies
    taken twice (the second pass is the next iteration), calls to the
    variant's own host functions inlined two levels deep (so ``self.x`` read
    in one method and reset in another is seen). Each event is
    ``(line, kind, key, who, struct, file)`` with kind ``read``, ``assign``,
    ``accumulate`` (kernel writes) or ``host`` (assign/zero_/fill_/wp.copy).
    A key naming the loop variable is a different array in the next
    iteration (``states[t]``), so its second pass is tagged ``@next``."""
    host_fns = host_fns or {}
    out = []
    for st in stmts:
        if isinstance(st, (ast.For, ast.While)):
            body = _events(st.body, kernels, host_fns, depth, here)
            loop_vars = {n.id for n in ast.walk(st.target) if isinstance(n, ast.Name)} if isinstance(st, ast.For) else set()
            again = [(ln, k, key + "@next" if loop_vars & set(re.findall(r"\w+", key)) else key, who, struct, rel)
                     for ln, k, key, who, struct, rel in body]
            out += body + again
            continue
        if isinstance(st, (ast.If, ast.With, ast.Try)):
            out += (_events(getattr(st, "body", []), kernels, host_fns, depth, here)
                    + _events(getattr(st, "orelse", []), kernels, host_fns, depth, here))
            continue
        if isinstance(st, (ast.FunctionDef, ast.ClassDef)):
            continue
        calls = sorted((c for c in ast.walk(st) if isinstance(c, ast.Call)), key=lambda c: (c.lineno, c.col_offset))
        for c in calls:
            t = _tail(c)
            if t == "launch":
                name, args = _launch_args(c)
                if name not in kernels:
                    continue
                params, r, w, assigned, structs = kernels[name]
                for p, a in zip(params, args):
                    key = ast.unparse(a)
                    if p in r:
                        out.append((c.lineno, "read", key, name, p in structs, here))
                for p, a in zip(params, args):
                    if p in w:
                        kind = "assign" if p in assigned else "accumulate"
                        out.append((c.lineno, kind, ast.unparse(a), name, p in structs, here))
            elif t in _HOST_WRITES and isinstance(c.func, ast.Attribute) and ".grad" not in ast.unparse(c.func.value) + ".":
                out.append((c.lineno, "host", ast.unparse(c.func.value), f".{t}()", False, here))
            elif t == "copy" and _dotted(c.func).split(".")[0] in ("wp", "warp") and len(c.args) >= 2:
                out.append((c.lineno, "read", ast.unparse(c.args[1]), "wp.copy", False, here))
                out.append((c.lineno, "host", ast.unparse(c.args[0]), "wp.copy()", False, here))
            elif t in host_fns and depth < 2:
                callee_rel, callee = host_fns[t]
                out += _events(callee.body, kernels, host_fns, depth + 1, callee_rel)
    return out


def _module_constants(tree) -> set:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and _tail(n.value) == "constant":
            out |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, int):
            out |= {t.id for t in n.targets if isinstance(t, ast.Name) and t.id.isupper()}
    return out


#: Allocations of working buffers (as opposed to wp.array(data) constants).
_BUFFERS = {"zeros", "empty", "zeros_like", "empty_like", "full", "full_like", "ones", "ones_like"}


def _mixed_allocations(tree) -> set:
    """ids of buffer allocations without requires_grad inside host functions
    that also allocate buffers with it (constants from data are ignored)."""
    out = set()
    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and not _deco_kind(n) and n.name != "objective"]:
        allocs = [(st, c) for st in ast.walk(fn) if isinstance(st, ast.Assign)
                  for c in ast.walk(st.value) if isinstance(c, ast.Call) and _tail(c) in _BUFFERS
                  and _dotted(c.func).split(".")[0] in ("wp", "warp")]
        if any(_grad_maybe(c) for _, c in allocs):
            out |= {id(st) for st, c in allocs if not _grad_maybe(c)}
    return out


def _counter_funcs(trees) -> tuple:
    """(funcs returning the value of an atomic add/sub, funcs that have a
    ``@wp.func_replay``)."""
    counters, replayed = set(), set()
    for t in trees:
        for fn in ast.walk(t):
            if not isinstance(fn, ast.FunctionDef):
                continue
            kind = _deco_kind(fn)
            if kind == "func_replay":
                for d in fn.decorator_list:
                    if isinstance(d, ast.Call) and d.args:
                        replayed.add(_tail(d.args[0]))
            if kind == "func":
                held = {tg.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                        and _tail(n.value) in ("atomic_add", "atomic_sub") for tg in n.targets if isinstance(tg, ast.Name)}
                for r in ast.walk(fn):
                    if isinstance(r, ast.Return) and r.value is not None and (
                        _names_in(r.value) & held or (isinstance(r.value, ast.Call) and _tail(r.value) in ("atomic_add", "atomic_sub"))
                    ):
                        counters.add(fn.name)
    return counters, replayed


def _mutating_functions(trees) -> set:
    """Names of host functions that launch kernels or write arrays in place,
    directly or through another such function (two levels)."""
    fns = [fn for t in trees for fn in ast.walk(t) if isinstance(fn, ast.FunctionDef) and not _deco_kind(fn)]
    out = set()
    for _ in range(3):
        for fn in fns:
            if any(isinstance(c, ast.Call) and (_tail(c) in _MUTATORS or _tail(c) in out) for c in ast.walk(fn)):
                out.add(fn.name)
    return out


def _allocs_without_grad(tree) -> list:
    """(name, node) for allocations without requires_grad=True, by the last
    name of their target (``self.flux`` -> ``flux``). Allocations inside
    ``objective()`` are skipped: the protocol runs it without a tape."""
    out = []
    skip = {id(n) for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef) and fn.name == "objective" for n in ast.walk(fn)}
    for n in ast.walk(tree):
        if id(n) in skip:
            continue
        if not isinstance(n, ast.Assign):
            continue
        calls = [c for c in ast.walk(n.value) if isinstance(c, ast.Call) and _tail(c) in _ALLOC
                 and _dotted(c.func).split(".")[0] in ("wp", "warp")]
        if calls and not any(_grad_maybe(c) for c in calls):
            for t in n.targets:
                name = _tail(t) if isinstance(t, (ast.Attribute, ast.Name)) else None
                if name:
                    out.append((name, n))
    return out


def _launch_outputs(tree, kernels) -> set:
    """Last names of the arrays that launches write (``fields.flux[t]`` ->
    ``flux``): arguments at the positions of parameters the kernel writes,
    and anything in ``outputs=`` of a kernel not found in the sources."""
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and _tail(n) == "launch":
            kname, args = _launch_args(n)
            if kname in kernels:
                params, _, w = kernels[kname][:3]
                chosen = [a for p, a in zip(params, args) if p in w]
            else:
                outs = _kw(n, "outputs")
                chosen = list(outs.elts) if isinstance(outs, (ast.List, ast.Tuple)) else []
            for e in chosen:
                names.add(_tail(e.value) if isinstance(e, ast.Subscript) else _tail(e))
    names.discard("")
    return names


