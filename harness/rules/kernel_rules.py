"""Rules over kernel and ``@wp.func`` bodies (what happens inside the
generated adjoint, which the runtime trace cannot see)."""

from __future__ import annotations

import ast
import re

from ..kernel_access import kernel_access
from ._ast import (_NONSMOOTH, _OVERFLOW, _PIECEWISE, _base_name, _dotted, _is_false, _kw, _names_in, _resolve_locals,
                   _tail, inside_loop, int_funcs, int_locals)
from .registry import rule


def _walk_kernels(unit, kinds=None):
    for fn, kind in unit.kernels:
        if kinds is None or kind in kinds:
            yield fn, kind


@rule("inplace_array_op",
      summary="`*=` / `/=` on an array element in a kernel")
def inplace_array_op(unit):
    """``*=`` / ``/=`` on an element or field of an array parameter."""
    for fn, kind in _walk_kernels(unit):
        arrays = unit.kernel_info(fn)["array_params"]
        for node in ast.walk(fn):
            if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Mult, ast.Div)):
                if _base_name(node.target) in arrays and isinstance(node.target, (ast.Subscript, ast.Attribute)):
                    op = "*=" if isinstance(node.op, ast.Mult) else "/="
                    yield node, f"'{ast.unparse(node.target)} {op} ...' in {kind} {fn.name}", fn.name


def _calls_named(unit, names):
    for fn, kind in _walk_kernels(unit):
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and _tail(node) in names:
                yield fn, kind, node, _tail(node)


@rule("nonsmooth_op", specificity=0.1,
      summary="sqrt / pow / log / atan2 / acos / asin in a kernel")
def nonsmooth_op(unit):
    """A builtin whose adjoint is singular somewhere (wp.length/normalize are
    guarded at the zero vector on every release, so they are not listed)."""
    for fn, kind, node, t in _calls_named(unit, _NONSMOOTH):
        yield node, f"{t}() in {kind} {fn.name}", fn.name


@rule("piecewise_constant_op", specificity=0.3,
      summary="round / floor / ceil / sign / trunc / int() in a kernel")
def piecewise_constant_op(unit):
    """A builtin with zero derivative almost everywhere."""
    for fn, kind, node, t in _calls_named(unit, _PIECEWISE):
        yield node, f"{t}() in {kind} {fn.name}", fn.name


@rule("device_rng", specificity=0.2,
      summary="wp.rand_init / wp.randn / wp.randf / wp.randi / wp.noise in a kernel")
def device_rng(unit):
    """Random numbers drawn on the device (replayed by the adjoint)."""
    for fn, kind, node, t in _calls_named(unit, ("rand_init", "randn", "randf", "randi", "noise")):
        yield node, f"{t}() in {kind} {fn.name}", fn.name


@rule("where_overflow",
      summary="wp.where/wp.select operand with exp, log, division or pow (both sides are evaluated)")
def where_overflow(unit):
    """An operand of ``wp.where``/``wp.select`` (followed through local
    assignments three levels deep) computes exp, log, pow, sqrt, tan or a
    division: both branches' adjoints run, so the masked one can be inf/NaN."""
    for fn, kind, node, t in _calls_named(unit, ("where", "select")):
        ops = _resolve_locals(fn, node.args[1:])
        risky = [_tail(c) for a in ops for c in ast.walk(a) if (isinstance(c, ast.Call) and _tail(c) in _OVERFLOW)]
        risky += ["division" for a in ops for c in ast.walk(a) if isinstance(c, ast.BinOp) and isinstance(c.op, ast.Div)]
        if risky:
            yield node, f"wp.{t}() operand computes {', '.join(sorted(set(risky)))} in {kind} {fn.name}", fn.name


@rule("atomic_index", specificity=0.9,
      summary="the return of wp.atomic_add/atomic_sub used as an index without @wp.func_replay")
def atomic_index(unit):
    """The value an atomic counter returns (directly or through a
    ``@wp.func`` returning it) indexes an array: the adjoint pass replays the
    forward and draws other slots unless a ``@wp.func_replay`` is given."""
    counters, replayed = unit.project.counters, unit.project.replayed
    for fn, kind in _walk_kernels(unit):
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            t = _tail(node)
            if t in ("atomic_add", "atomic_sub") or (t in counters and t not in replayed):
                parent_uses = [p for p in ast.walk(fn) if isinstance(p, ast.Assign) and p.value is node]
                for p in parent_uses:
                    names = {_base_name(tg) for tg in p.targets}
                    used_as_index = any(isinstance(s, ast.Subscript) and (_names_in(s.slice) & names) for s in ast.walk(fn))
                    if used_as_index and not (kind == "func" and fn.name in replayed):
                        yield node, (f"value of {t}() (an atomic counter) used as an index in {fn.name} "
                                     "without @wp.func_replay"), fn.name


def _element_writes(unit):
    """(fn, kind, statement, target) for every subscript/attribute target of
    an assignment or augmented assignment in a Warp function."""
    for fn, kind in _walk_kernels(unit):
        for node in ast.walk(fn):
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for tg in targets:
                    if isinstance(tg, (ast.Subscript, ast.Attribute)):
                        yield fn, kind, node, tg


@rule("array_component_write", gate="<1.14",
      summary="`a[i].x = ...` / `a[i][k] = ...` on an array element (adjoint wrong before Warp 1.14)")
def array_component_write(unit):
    """A component of an array element written in place (Warp changelog
    1.14.0 fixed its adjoint)."""
    for fn, kind, node, tg in _element_writes(unit):
        if _base_name(tg) in unit.kernel_info(fn)["array_params"] and isinstance(tg.value, ast.Subscript):
            yield node, f"component write '{ast.unparse(tg)}' to an array element in {fn.name}", fn.name


@rule("struct_array_write",
      summary="a kernel writes into an array field of a struct argument")
def struct_array_write(unit):
    """``s.field[i] = ...`` where ``s`` is a ``@wp.struct`` parameter."""
    for fn, kind, node, tg in _element_writes(unit):
        base = _base_name(tg)
        if base in unit.kernel_info(fn)["struct_params"] and isinstance(tg.value, ast.Attribute) \
                and isinstance(tg, ast.Subscript):
            yield node, f"kernel {fn.name} writes '{ast.unparse(tg)}' (array in struct '{base}')", fn.name


#: Releases on which assigning a local vector/matrix component again gives a wrong adjoint (the k-th
#: of n writes weighted 2^(n-k)). Measured 2026-12-02 (scratch kernel v[1] = v[1] + 2x; v[1] = v[1] + 3x,
#: d/dx 5): 7 from 1.7.2, 5 (right) on 1.4.2-1.6.2, 0 on 1.0.2-1.3.3, where every local component write
#: has a zero adjoint (builtins conformance cells [local_*]: Warp's own defect, not this rule's); and
#: v = wp.vec3(2a, a, 1); v[0] = 2a (d/da 3): 5 from 1.7.2, 3 on 1.3.3-1.6.2.
REASSIGN_GATE = ">=1.7.2"


@rule("component_reassign", gate=REASSIGN_GATE,
      summary="a local vector/matrix component assigned twice, or assigned inside a loop")
def component_reassign(unit):
    """``v[0] = ...`` / ``v.x = ...`` on a local (not a parameter) more than
    once, or inside a loop."""
    for fn, kind in _walk_kernels(unit):
        params = unit.kernel_info(fn)["params"]
        comp_assigns = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                for tg in node.targets:
                    if isinstance(tg, (ast.Subscript, ast.Attribute)):
                        base = _base_name(tg)
                        if base and base not in params and isinstance(tg.value, ast.Name):
                            comp_assigns.setdefault((base, ast.unparse(tg)), []).append(node)
        for (_base, text), nodes in comp_assigns.items():
            in_loop = any(inside_loop(fn, n) for n in nodes)
            if len(nodes) > 1 or in_loop:
                yield nodes[-1], (f"local component '{text}' assigned {len(nodes)} time(s)"
                                  f"{' inside a loop' if in_loop else ''} in {fn.name}"), fn.name


#: Constructors whose positional arguments are the components, in order (matrices row-major).
_COMPONENT_CTOR = re.compile(r"^(vec\d[a-z]{0,2}|mat\d\d[a-z]{0,2}|quat[a-z]?|spatial_(vector|matrix)[a-z]?|vector|matrix"
                             r"|transform[a-z]?)$")
_SWIZZLE = {"x": 0, "y": 1, "z": 2, "w": 3}
_LITERAL_CASTS = {"float", "int", "float16", "float32", "float64", "int32", "int64", "uint32"}


def _const_expr(node, constants) -> bool:
    """True when ``node`` depends on no runtime data: literals, compile-time constants, arithmetic and
    casts/constructors of them."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id in constants
    if isinstance(node, ast.UnaryOp):
        return _const_expr(node.operand, constants)
    if isinstance(node, ast.BinOp):
        return _const_expr(node.left, constants) and _const_expr(node.right, constants)
    if isinstance(node, ast.Call) and not node.keywords:
        tail = _tail(node)
        if tail in _LITERAL_CASTS or _COMPONENT_CTOR.match(tail):
            return all(_const_expr(a, constants) for a in node.args)
    return False


def _component_state(value, constants):
    """``(per-component data dependence {index: bool}, default for other indices, columns or None)``
    of a local just assigned ``value`` as a whole."""
    if isinstance(value, ast.Call) and not value.keywords and _COMPONENT_CTOR.match(_tail(value)) \
            and not any(isinstance(a, ast.Starred) for a in value.args):
        tail, args = _tail(value), value.args
        digits = [int(c) for c in tail if c.isdigit()]
        cols = digits[1] if tail.startswith("mat") and len(digits) >= 2 else None
        rows = digits[0] if tail.startswith("mat") and digits else None
        if not args:
            return {}, False, cols
        if len(args) == 1:
            return {}, not _const_expr(args[0], constants), cols
        if cols and rows and len(args) == rows:  # wp.mat22(row0, row1): one vector per row
            return ({r * cols + c: not _const_expr(a, constants) for r, a in enumerate(args) for c in range(cols)},
                    False, cols)
        return {k: not _const_expr(a, constants) for k, a in enumerate(args)}, False, cols
    return {}, not _const_expr(value, constants), None


def _component_indices(tg, cols):
    """Flat component indices a component store writes (None: not known statically)."""
    if isinstance(tg, ast.Attribute):
        return [_SWIZZLE[tg.attr]] if tg.attr in _SWIZZLE else None
    sl = tg.slice
    if isinstance(sl, ast.Constant) and isinstance(sl.value, int):
        return list(range(sl.value * cols, (sl.value + 1) * cols)) if cols else [sl.value]
    if isinstance(sl, ast.Tuple) and len(sl.elts) == 2 and cols \
            and all(isinstance(e, ast.Constant) and isinstance(e.value, int) for e in sl.elts):
        return [sl.elts[0].value * cols + sl.elts[1].value]
    return None


def _reads_after(fn, base, idx, cols, node) -> bool:
    """Whether a component in ``idx`` (None: any) of local ``base`` is read after the store ``node``
    (a whole-value read, or a read of that component): only then does the wrong adjoint reach anything."""
    end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
    parents = {}
    for p in ast.walk(fn):
        for c in ast.iter_child_nodes(p):
            parents[c] = p
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id == base and isinstance(n.ctx, ast.Load)
                and (n.lineno, n.col_offset) > end):
            continue
        p = parents.get(n)
        if isinstance(p, (ast.Subscript, ast.Attribute)) and p.value is n and isinstance(p.ctx, ast.Load):
            got = _component_indices(p, cols)
            if got is None or idx is None or set(got) & set(idx):
                return True
            continue
        if isinstance(p, (ast.Subscript, ast.Attribute)) and p.value is n:
            continue  # a store into another component
        return True
    return False


@rule("component_write_after_init", gate=REASSIGN_GATE,
      summary="a component of a local vector/matrix/quaternion written once, after its construction gave it a "
              "non-literal value")
def component_write_after_init(unit):
    """``v = wp.vec3(a, b, c)`` then ``v[0] = ...``: the component already holds a value computed from
    runtime data when it is written, and Warp's adjoint of the store does not remove that value's share
    (Warp docs, Limitations: each component may only be assigned once; measured on 1.19.0: ``v =
    wp.vec3(2a, a, 1); v[0] = 2a`` gives d/da 5 for 3). A store over a literal component (``v =
    wp.vec3(0.0); v[0] = x``, ``wp.vec3(x, y, 0.0)`` then ``v[2] = z``) has the right adjoint and does not
    fire. Only the first store of a component outside loops is reported here; repeated stores and stores
    in loops are :func:`component_reassign`'s."""
    constants = unit.project.constants
    for fn, kind in _walk_kernels(unit):
        params = unit.kernel_info(fn)["params"]
        assigns = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Assign)), key=lambda n: (n.lineno, n.col_offset))
        texts, flagged = {}, set()  # flagged: locals component_reassign reports (a store repeated or in a loop)
        for n in assigns:
            for tg in n.targets:
                if isinstance(tg, (ast.Subscript, ast.Attribute)) and isinstance(tg.value, ast.Name):
                    texts[ast.unparse(tg)] = texts.get(ast.unparse(tg), 0) + 1
                    if texts[ast.unparse(tg)] > 1 or inside_loop(fn, n):
                        flagged.add(tg.value.id)
        state = {}
        for n in assigns:
            for tg in n.targets:
                if isinstance(tg, ast.Name):
                    state[tg.id] = (_component_state(n.value, constants), ast.unparse(n.value))
                    continue
                if not (isinstance(tg, (ast.Subscript, ast.Attribute)) and isinstance(tg.value, ast.Name)):
                    continue
                base = tg.value.id
                if base in params or base not in state or base in flagged:
                    continue
                if isinstance(tg, ast.Attribute) and tg.attr not in _SWIZZLE:
                    continue  # a struct field, not a component
                (comps, default, cols), origin = state[base]
                idx = _component_indices(tg, cols)
                held = any(comps.get(i, default) for i in idx) if idx is not None else (default or any(comps.values()))
                text = ast.unparse(tg)
                if held and _reads_after(fn, base, idx, cols, n):
                    yield n, (f"local component '{text}' written after '{base} = {origin[:60]}' gave it a "
                              f"non-literal value in {fn.name}"), fn.name
                dep = not _const_expr(n.value, constants)
                for i in idx or []:
                    comps[i] = dep
                if idx is None and dep:
                    state[base] = ((comps, True, cols), origin)


@rule("kernel_read_write", specificity=0.15,
      summary="a kernel reads and writes the same array argument")
def kernel_read_write(unit):
    """An array parameter both read and assigned in one ``@wp.kernel``."""
    for fn, kind in _walk_kernels(unit, ("kernel",)):
        _, r, w = kernel_access(fn)
        for name in sorted((r & w) & unit.kernel_info(fn)["array_params"]):
            plain = [n for n in ast.walk(fn) if isinstance(n, ast.Assign) and any(_base_name(t) == name for t in n.targets)]
            aug = [n for n in ast.walk(fn) if isinstance(n, ast.AugAssign) and _base_name(n.target) == name]
            if plain or aug:
                yield (plain or aug)[0], f"kernel {fn.name} reads and writes array '{name}'", fn.name


def _int_locals(unit, fn) -> set:
    return unit.cached(("int_locals", id(fn)),
                       lambda: int_locals(fn, int_funcs(f for f, _ in unit.kernels)))


def _loop_reasons(unit, fn, loop):
    """Why a loop with a runtime bound is a dynamic loop for the adjoint
    (empty when it is not one, or its bound is a compile-time constant).

    Integer locals (:func:`defects4warp.rules._ast.int_locals`) carry no
    adjoint: a loop whose only state is integer and that writes no memory (no
    element or field store, atomic, tile call or call of a Warp function of
    the file: an index search, a factorial) has nothing for the adjoint to
    replay and gives no reason at all. Where the loop writes memory, an
    integer it carries (an index, a stride) counts as any carried value."""
    if isinstance(loop, ast.For):
        it = loop.iter
        if not (isinstance(it, ast.Call) and _tail(it) == "range"):
            return []
        bound_names = set().union(*(_names_in(a) for a in it.args)) if it.args else set()
        if not bound_names or bound_names <= unit.project.constants:
            return []
        loop_var = loop.target.id if isinstance(loop.target, ast.Name) else None
    else:
        loop_var = None
    ints = _int_locals(unit, fn)
    # anything in the loop that may write memory: a store to an element or field, an atomic, a tile
    # store, or a call of a Warp function of this file (which may store through its arguments)
    own = {f.name for f, _ in unit.kernels}
    stores = any(isinstance(n, (ast.Assign, ast.AugAssign))
                 and any(isinstance(t, (ast.Subscript, ast.Attribute))
                         for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))
                 for n in ast.walk(loop)) or any(
        isinstance(n, ast.Call) and (_tail(n).startswith(("atomic_", "tile_")) or _tail(n) in own)
        for n in ast.walk(loop))
    floats = {tg.id for n in ast.walk(loop) if isinstance(n, (ast.Assign, ast.AugAssign))
              for tg in (n.targets if isinstance(n, ast.Assign) else [n.target])
              if isinstance(tg, ast.Name) and tg.id != loop_var and tg.id not in ints}
    if not stores and not floats:
        return []  # integer state only, nothing written: nothing for a loop adjoint to replay
    # with memory written, an integer carried across iterations (an index, a stride) decides where:
    # the reverse pass replays it at its final value, so it counts as any carried state
    reasons = []
    assigned = {}
    for n in ast.walk(loop):
        if isinstance(n, (ast.Continue, ast.Break)):
            reasons.append(f"'{type(n).__name__.lower()}' inside")
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            assigned.setdefault(n.target.id, []).append(n)
            if not isinstance(n.op, (ast.Add, ast.Sub)):
                reasons.append(f"'{n.target.id}' updated with a non-additive in-place operator")
        if isinstance(n, ast.Assign):
            for tg in n.targets:
                if isinstance(tg, ast.Name) and tg.id != loop_var:
                    assigned.setdefault(tg.id, []).append(n)
                    if tg.id in _names_in(n.value):
                        v = n.value
                        additive = isinstance(v, ast.BinOp) and isinstance(v.op, (ast.Add, ast.Sub)) and (
                            (isinstance(v.left, ast.Name) and v.left.id == tg.id)
                            or (isinstance(v.right, ast.Name) and v.right.id == tg.id))
                        if not additive:
                            reasons.append(f"'{tg.id}' carried non-additively")
    after = [n for n in ast.walk(fn) if getattr(n, "lineno", 0) > (loop.end_lineno or loop.lineno)]
    used_after = {x.id for n in after for x in ast.walk(n) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}
    carried = [v for v in assigned if v in used_after]
    if carried:
        reasons.append("value(s) " + ", ".join(sorted(carried)) + " used after the loop")
    return reasons


@rule("dynamic_loop",
      summary="a loop with a runtime bound whose carried value is updated non-additively, "
              "used after the loop, or left with continue/break")
def dynamic_loop(unit):
    """A ``for ... in range(n)`` with a bound that is not a compile-time
    constant (or a ``while``), whose carried state the adjoint of a dynamic
    loop does not restore."""
    for fn, kind in _walk_kernels(unit):
        for loop in [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))]:
            reasons = _loop_reasons(unit, fn, loop)
            if reasons:
                what = "while loop" if isinstance(loop, ast.While) else \
                    f"loop over range({', '.join(ast.unparse(a) for a in loop.iter.args)})"
                yield loop, f"runtime-bound {what} in {fn.name}: " + "; ".join(dict.fromkeys(reasons)), fn.name


@rule("custom_adjoint", specificity=0.3,
      summary="a @wp.func_grad is defined (hand-written adjoint)")
def custom_adjoint(unit):
    """A hand-written adjoint exists (a place where adjoints go wrong)."""
    for fn, kind in _walk_kernels(unit, ("func_grad",)):
        yield fn, f"hand-written adjoint {fn.name}", fn.name


@rule("func_grad_assign",
      summary="`wp.adjoint[x] = ...` in a @wp.func_grad body")
def func_grad_assign(unit):
    """A custom adjoint assigns an input's adjoint instead of accumulating
    into it (``wp.adjoint[x] += ...``)."""
    for fn, kind in _walk_kernels(unit, ("func_grad",)):
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Subscript) and _tail(t.value) == "adjoint" for t in node.targets):
                yield node, f"'{ast.unparse(node.targets[0])} = ...' assigns instead of accumulating", fn.name


#: Annotations of ``@wp.func_native`` arguments that carry no adjoint (integer, boolean and array
#: arguments: Warp's native adjoint signature gives them no ``adj_`` value to write).
_NO_ADJOINT_TYPES = {"int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"}


def _snippet_text(unit, node):
    """The string a ``func_native`` snippet argument holds: a literal, or a name bound once to a
    string literal at module level of any file of the variant. None when it cannot be read
    statically (an f-string, a computed or reassigned name)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.Name):
        return None
    values = [st.value.value for tree in unit.project.trees for st in tree.body
              if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in st.targets)
              and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str)]
    return values[0] if len(set(values)) == 1 else None


def _c_code(code: str) -> str:
    """A C/C++ snippet with comments and string literals blanked out."""
    return re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\])*\"", " ", code, flags=re.S)


def _c_identifiers(code: str) -> set:
    """Identifiers of a C/C++ snippet, comments and string literals left out."""
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", _c_code(code)))


def _differentiable_args(fn) -> list:
    """Names of the arguments of a Warp function that carry an adjoint (not integer, boolean or array)."""
    out = []
    for a in fn.args.args:
        ann = a.annotation
        if ann is None or "array" in ast.dump(ann) or _tail(ann) in _NO_ADJOINT_TYPES:
            continue
        out.append(a.arg)
    return out


_CMP = r"(?:<=|>=|==|!=|(?<![<>\-])<(?![<=])|(?<![<>\-])>(?![>=]))"


def _compared_only(code: str, name: str) -> bool:
    """True when every use of identifier ``name`` in C/C++ ``code`` is an operand of a comparison
    (``<``, ``>``, ``<=``, ``>=``, ``==``, ``!=``; not shifts or ``->``): a threshold or a selector
    whose derivative is zero wherever it exists, so an adjoint snippet rightly leaves it alone."""
    code = _c_code(code)
    ident = rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])"
    spans = [m.span() for m in re.finditer(ident, code)]
    compared = {m.start(1) for m in re.finditer(rf"({ident})\s*{_CMP}", code)} | \
               {m.start(1) for m in re.finditer(rf"{_CMP}\s*({ident})", code)}
    return bool(spans) and all(a in compared for a, _ in spans)


@rule("func_native_no_adjoint",
      summary="@wp.func_native without adj_snippet, or whose adj_snippet never writes the adjoint "
              "of a floating-point argument the snippet reads")
def func_native_no_adjoint(unit):
    """A native snippet function with no adjoint snippet, or with one that leaves the
    ``adj_<arg>`` of a floating-point argument the forward snippet reads unwritten: those
    inputs get no gradient (Warp documentation, "Native Snippets in Warp Kernels": the
    adjoint snippet accumulates one ``adj_`` variable per differentiable argument, and an
    unwritten one stays zero). Snippets that cannot be read statically are not judged."""
    for fn, kind in _walk_kernels(unit, ("func_native",)):
        for d in fn.decorator_list:
            if not isinstance(d, ast.Call) or _tail(d) != "func_native":
                continue
            adj = d.args[1] if len(d.args) >= 2 else _kw(d, "adj_snippet")
            if adj is None:
                yield fn, f"@wp.func_native {fn.name} has no adj_snippet", fn.name
                continue
            fwd = d.args[0] if d.args else _kw(d, "snippet")
            fwd_text, adj_text = _snippet_text(unit, fwd), _snippet_text(unit, adj)
            if fwd_text is None or adj_text is None:
                continue
            read, mentioned = _c_identifiers(fwd_text), _c_identifiers(adj_text)
            missing = [a for a in _differentiable_args(fn) if a in read and f"adj_{a}" not in mentioned
                       and not _compared_only(fwd_text, a)]
            if missing:
                yield fn, (f"the adj_snippet of @wp.func_native {fn.name} never writes "
                           + ", ".join(f"adj_{a}" for a in missing) + f" ({', '.join(missing)} read by the snippet)"), fn.name


@rule("backward_disabled",
      summary="enable_backward=False (decorator, module option or wp.config)")
def backward_disabled(unit):
    """Backward code generation switched off for a kernel or module."""
    for fn, kind in _walk_kernels(unit):
        for d in fn.decorator_list:
            if isinstance(d, ast.Call) and _is_false(_kw(d, "enable_backward")):
                yield d, f"{fn.name} decorated with enable_backward=False", fn.name
    for n in ast.walk(unit.tree):
        if isinstance(n, ast.Call) and _tail(n) == "set_module_options" and n.args and isinstance(n.args[0], ast.Dict):
            for k, v in zip(n.args[0].keys, n.args[0].values):
                if isinstance(k, ast.Constant) and k.value == "enable_backward" and _is_false(v):
                    yield n, "wp.set_module_options({'enable_backward': False})", ""
        if isinstance(n, ast.Assign) and any(_dotted(t) == "wp.config.enable_backward" for t in n.targets) \
                and _is_false(n.value):
            yield n, "wp.config.enable_backward = False", ""
