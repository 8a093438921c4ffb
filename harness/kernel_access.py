"""Kernel access analysis: which arrays a Warp kernel reads and writes, from its Python source.

One module for the two readers of a kernel's accesses:

* the runtime trace (:mod:`defects4warp.measure.recorder`): from a kernel
  object's source (``inspect.getsource`` of ``kernel.func``), per parameter or
  struct field path, reads / writes / accumulating writes, following
  resolvable ``wp.func`` calls (:func:`_analyse_function`); the index
  expressions of every access, evaluated per launch into element masks
  (:func:`_index_info`, :func:`_eval_index`, :func:`_access_mask`); and the
  values the kernel's adjoint reads given which arguments carry gradients
  (:func:`_values_needed`);
* the source rules (:mod:`defects4warp.rules`): from a parsed file's
  ``ast.FunctionDef``, without running anything, the parameters a kernel
  reads, writes and assigns (:func:`kernel_access`,
  :func:`kernel_access_detail`).

Warp's own codegen flags (``kernel.adj.args[i].is_read/is_write``) are reset
after the build on 1.12.1 and 1.19.0 alike (measured), so the source is read
instead. Standard library only at import (NumPy is imported by
:func:`_access_mask` when called; Warp is never imported: a ``wp.func``
reached through the ``warp`` module itself is recognised through
``sys.modules``).
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap

__all__ = ["kernel_access", "kernel_access_detail"]

_ATOMIC_PREFIXES = ("atomic_",)
_TILE_WRITES = ("tile_store", "tile_atomic_add")
_RNG_PREFIXES = ("rand", "sample_", "noise", "pnoise", "curlnoise", "poisson")

#: Array attributes that are metadata, not data (reading them is not a read).
_METADATA = {"shape", "ndim", "size", "strides", "dtype"}


# ----------------------------------------------------------------------------
# trace: a kernel object's accesses, element masks, values its adjoint needs
# ----------------------------------------------------------------------------


def _root_path(node, aliases):
    """Dotted path of the array a subscript/attribute chain addresses, or None."""
    parts = []
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
            parts = []  # a component of an element: the array is what is indexed
            continue
        if isinstance(node, ast.Attribute):
            parts.insert(0, node.attr)
            node = node.value
            continue
        if isinstance(node, ast.Name):
            base = aliases.get(node.id)
            if base is None:
                return None
            return ".".join([base] + parts) if parts else base
        return None


def _subscript_root(node, aliases):
    """For a store target ``a[i]``, ``a[i].x``, ``s.q[i]``: the array path."""
    n = node
    while isinstance(n, ast.Attribute):  # a[i].x -> a[i]
        n = n.value
    if not isinstance(n, ast.Subscript):
        return None
    return _root_path(n.value, aliases)


def _func_name(call):
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr, f
    if isinstance(f, ast.Name):
        return f.id, f
    return None, f


def _analyse_function(pyfunc, depth=0, max_depth=4):
    """Per-parameter access flags of a kernel or ``wp.func`` from its Python AST.

    Returns ``{path: {"reads", "writes", "accumulates"}}`` keyed by parameter
    name or ``"param.field"`` for struct fields, or ``None`` if the source is
    not available. Stores (``a[i] = ...``, ``a[i].x = ...``) are writes;
    ``a[i] += ...``, ``wp.atomic_*(a, ...)`` and ``wp.tile_atomic_add`` are
    accumulating writes; any other use of the name except ``.shape``/``len()``
    is a read. Calls to resolvable ``wp.func`` functions are followed
    ``max_depth`` levels deep.
    """
    try:
        src = textwrap.dedent(inspect.getsource(pyfunc))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    fdef = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)), None)
    if fdef is None:
        return None
    params = [a.arg for a in fdef.args.args]
    aliases = {p: p for p in params}
    # simple aliases: b = a, b = s.q
    for n in ast.walk(fdef):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            if isinstance(n.value, (ast.Name, ast.Attribute)):
                r = _root_path(n.value, aliases)
                if r is not None:
                    aliases[n.targets[0].id] = r
    acc = {}

    def flag(path, **kw):
        d = acc.setdefault(path, {"reads": False, "writes": False, "accumulates": False})
        for k, v in kw.items():
            d[k] = d[k] or v

    write_nodes = set()
    glb = getattr(pyfunc, "__globals__", {}) or {}
    for n in ast.walk(fdef):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            _flag_stores(n, aliases, flag, write_nodes)
        elif isinstance(n, ast.Call):
            name, fnode = _func_name(n)
            if name is None:
                continue
            if name.startswith(_ATOMIC_PREFIXES) or name in _TILE_WRITES:
                if n.args:
                    r = _root_path(n.args[0], aliases)
                    if r is not None:
                        write_nodes.add(id(n.args[0]))
                        flag(r, writes=True, accumulates=name != "tile_store")
                        if name in ("atomic_cas", "atomic_exch"):
                            flag(r, reads=True)
                continue
            if name in ("len",):
                for a in n.args:
                    write_nodes.add(id(a))
                continue
            _follow_call(n, fnode, glb, aliases, flag, write_nodes, depth, max_depth)  # a user wp.func
    _flag_reads(fdef, aliases, flag, write_nodes)
    return acc


def _flag_stores(n, aliases, flag, write_nodes):
    """Flag the array stores of one assignment ``n`` (kept in ``write_nodes``: a stored node is no read)."""
    targets = n.targets if isinstance(n, ast.Assign) else [n.target]
    for t in targets:
        for tt in t.elts if isinstance(t, ast.Tuple) else [t]:
            r = _subscript_root(tt, aliases)
            if r is None:
                continue
            write_nodes.add(id(tt))
            inner = tt
            while isinstance(inner, ast.Attribute):  # a[i].x = ...: a component write, not a read
                inner = inner.value
                write_nodes.add(id(inner))
            if isinstance(n, ast.AugAssign) and isinstance(n.op, (ast.Add, ast.Sub)):
                flag(r, writes=True, accumulates=True)  # Warp emits an atomic add
            elif isinstance(n, ast.AugAssign):
                flag(r, reads=True, writes=True)  # a[i] *= s reads the old value
            else:
                flag(r, writes=True)


def _follow_call(n, fnode, glb, aliases, flag, write_nodes, depth, max_depth):
    """Flag what a call ``n`` to a resolvable ``wp.func`` does to the arrays passed to it, from its own analysis."""
    target = None
    if isinstance(fnode, ast.Name):
        target = glb.get(fnode.id)
    elif isinstance(fnode, ast.Attribute) and isinstance(fnode.value, ast.Name):
        mod = glb.get(fnode.value.id)
        target = getattr(mod, fnode.attr, None) if mod is not None and mod is not sys.modules.get("warp") else None
    inner_py = getattr(target, "func", None)
    if depth < max_depth and callable(inner_py) and not isinstance(target, type):
        sub = _analyse_function(inner_py, depth + 1, max_depth)
        if sub is None:
            return
        try:
            inner_params = list(inspect.signature(inner_py).parameters)
        except (TypeError, ValueError):
            return
        for i, a in enumerate(n.args):
            r = _root_path(a, aliases)
            if r is None or i >= len(inner_params):
                continue
            for path, fl in sub.items():
                head, _, rest = path.partition(".")
                if head != inner_params[i]:
                    continue
                full = r + ("." + rest if rest else "")
                flag(full, **fl)
                write_nodes.add(id(a))


def _flag_reads(fdef, aliases, flag, write_nodes):
    """Flag as read every remaining load of an aliased name (subscripts and call arguments not stored to)."""
    for n in ast.walk(fdef):
        if isinstance(n, ast.Subscript) and id(n) not in write_nodes and isinstance(n.ctx, ast.Load):
            r = _root_path(n.value, aliases)
            if r is not None:
                flag(r, reads=True)
        elif isinstance(n, ast.Call):
            name, _ = _func_name(n)
            if name is None or name.startswith(_ATOMIC_PREFIXES) or name in _TILE_WRITES or name == "len":
                continue
            for a in list(n.args) + [k.value for k in n.keywords]:
                if id(a) in write_nodes:
                    continue
                if isinstance(a, (ast.Name, ast.Attribute)):
                    r = _root_path(a, aliases)
                    if r is not None:
                        flag(r, reads=True)


def _subscript_chain(node):
    """(base, [index nodes]) of ``a[i][j]`` / ``a[i, j]``; the base is what is indexed first."""
    idx = []
    while isinstance(node, ast.Subscript):
        sl = node.slice
        if isinstance(sl, ast.Index):  # Python < 3.9
            sl = sl.value
        parts = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
        idx = parts + idx
        node = node.value
    return node, idx


def _dump(idx):
    return "|".join(ast.dump(i) if i is not None else "?" for i in idx)


def _index_info(pyfunc):
    """Index expressions of every array access of a kernel, for element-level checks.

    Returns ``{"tids": {name: launch axis}, "locals": {name: expr}, "reads": {path: [[index
    nodes]...]}, "writes": {path: [...]}, "calls": [names of user functions called]}`` or
    ``None`` without source. Accesses inside called ``wp.func`` functions are not resolved
    (callers treat a path absent from both maps as touching every element).
    """
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(pyfunc)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    fdef = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)), None)
    if fdef is None:
        return None
    params = [a.arg for a in fdef.args.args]
    aliases = {p: p for p in params}
    tids, local_defs = _tids_and_locals(fdef, aliases)
    reads, writes, calls = {}, {}, []
    rng = False
    rmw = set()  # paths with a read-modify-write of one element (a[i] *= s, a[i] = f(a[i]))
    wlines = {}  # (path, index dump) -> first line storing there
    store_subs = set()
    glb = getattr(pyfunc, "__globals__", {}) or {}
    for n in ast.walk(fdef):
        targets = []
        if isinstance(n, ast.Assign):
            targets = n.targets
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            targets = [n.target]
        for t in targets:
            for tt in t.elts if isinstance(t, ast.Tuple) else [t]:
                inner = tt
                while isinstance(inner, ast.Attribute):
                    inner = inner.value
                if isinstance(inner, ast.Subscript):
                    base, idx = _subscript_chain(inner)
                    r = _root_path(base, aliases)
                    if r is not None:
                        writes.setdefault(r, []).append(idx)
                        wlines.setdefault((r, _dump(idx)), n.lineno)
                        if isinstance(n, ast.AugAssign) and not isinstance(n.op, (ast.Add, ast.Sub)):
                            reads.setdefault(r, []).append(idx)
                            rmw.add(r)
                        elif isinstance(n, ast.Assign):
                            d = _dump(idx)
                            for sub in ast.walk(n.value):
                                if isinstance(sub, ast.Subscript):
                                    b2, i2 = _subscript_chain(sub)
                                    if _root_path(b2, aliases) == r and _dump(i2) == d:
                                        rmw.add(r)  # a[i] = f(a[i]): the element's old value is read and replaced
                        while isinstance(inner, ast.Subscript):
                            store_subs.add(id(inner))
                            inner = inner.value
        if isinstance(n, ast.Call):
            name, fnode = _func_name(n)
            if name and (name.startswith(_ATOMIC_PREFIXES) or name in _TILE_WRITES) and n.args:
                r = _root_path(n.args[0], aliases)
                if r is not None:
                    simple = name in ("atomic_add", "atomic_sub", "atomic_min", "atomic_max")
                    writes.setdefault(r, []).append(list(n.args[1:-1]) if simple else [None])
            elif name and isinstance(fnode, ast.Name) and callable(getattr(glb.get(fnode.id), "func", None)):
                calls.append(name)
            if name and name.startswith(_RNG_PREFIXES):
                rng = True
    _index_reads(fdef, aliases, reads, wlines, store_subs)
    return {"tids": tids, "locals": local_defs, "reads": reads, "writes": writes, "calls": calls, "rng": rng,
            "rmw": sorted(rmw)}


def _tids_and_locals(fdef, aliases):
    """``(tids, local_defs)``: thread indices by launch axis, locals assigned once (array aliases join ``aliases``)."""
    tids, local_defs, counts = {}, {}, {}
    for n in ast.walk(fdef):
        if isinstance(n, ast.Assign) and len(n.targets) == 1:
            t = n.targets[0]
            if isinstance(n.value, ast.Call) and _func_name(n.value)[0] == "tid":
                names = [e.id for e in t.elts] if isinstance(t, ast.Tuple) else [t.id] if isinstance(t, ast.Name) else []
                for k, nm in enumerate(names):
                    tids[nm] = k
            elif isinstance(t, ast.Name):
                counts[t.id] = counts.get(t.id, 0) + 1
                local_defs[t.id] = n.value
                if isinstance(n.value, (ast.Name, ast.Attribute)):
                    r = _root_path(n.value, aliases)
                    if r is not None:
                        aliases[t.id] = r
        elif isinstance(n, (ast.AugAssign, ast.For)) and isinstance(getattr(n, "target", None), ast.Name):
            counts[n.target.id] = counts.get(n.target.id, 0) + 2
    return tids, {k: v for k, v in local_defs.items() if counts.get(k) == 1 and k not in tids}


def _index_reads(fdef, aliases, reads, wlines, store_subs):
    """Add each array load's index list to ``reads``, bar stores and re-reads of an element stored before."""
    for n in ast.walk(fdef):  # parents are visited before children
        if isinstance(n, ast.Subscript) and id(n) not in store_subs:
            base, idx = _subscript_chain(n)
            inner = n.value
            while isinstance(inner, ast.Subscript):  # a[i][j] also walks a[i]
                store_subs.add(id(inner))
                inner = inner.value
            r = _root_path(base, aliases)
            if r is not None:
                reads.setdefault(r, [])
                w = wlines.get((r, _dump(idx)))
                if w is None or w >= n.lineno:  # not a re-read of an element this kernel stored before
                    reads[r].append(idx)


class _Unknown(Exception):
    """A construct the value analyses (:func:`_values_needed`, :func:`_value_flows`) do not know."""


_LINEAR_CALLS = ("float16", "float32", "float64", "float", "vec2", "vec3", "vec4", "vec2d", "vec3d", "vec4d",
                 "vec2f", "vec3f", "vec4f", "vector", "transpose", "dot_linear_placeholder")


def _values_needed(pyfunc, active, max_nodes=5000):
    """Argument paths whose *values* the adjoint of a kernel reads, given which paths are active
    (carry gradients: arrays with ``requires_grad``).

    A value is needed where it multiplies or divides an active quantity, feeds a nonlinear
    function of an active quantity, decides a branch, or indexes an array; an array read only
    in affine terms with constant coefficients (``x_out[i] = x[i] + dt * v[i]``) is not needed:
    overwriting it later does not change the gradient (on Warp >= 1.13, where store adjoints
    are consumed). Returns a set of paths, or ``None`` (unknown: treat every read as needed).
    """
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(pyfunc)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    fdef = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)), None)
    if fdef is None or sum(1 for _ in ast.walk(fdef)) > max_nodes:
        return None
    params = [a.arg for a in fdef.args.args]
    aliases = {p: p for p in params}
    walk = _NeedsAnalysis(aliases, active)
    try:
        walk.run(fdef.body)
    except (_Unknown, RecursionError):
        return None
    return walk.need


class _NeedsAnalysis:
    """The walk behind :func:`_values_needed`: locals' (active, values) and the paths found needed."""

    def __init__(self, aliases, active):
        self.aliases, self.active = aliases, active
        self.env = {}  # local -> (act, vals)
        self.need = set()

    def ev(self, n):
        """(active, vals: array paths whose values flow into n)."""
        if isinstance(n, ast.Constant):
            return False, frozenset()
        if isinstance(n, ast.Name):
            if n.id in self.env:
                return self.env[n.id]
            if n.id in self.aliases:  # a scalar argument or an array used whole
                return self.aliases[n.id] in self.active, frozenset()
            return False, frozenset()
        if isinstance(n, ast.Subscript):
            base, idx = _subscript_chain(n)
            for i in idx:
                _, iv = self.ev(i)
                self.need.update(iv)  # an index read from an array: its value decides what is read
            r = _root_path(base, self.aliases)
            if r is not None:
                return r in self.active, frozenset([r])
            a, v = self.ev(base)
            return a, v
        if isinstance(n, ast.Attribute):
            r = _root_path(n, self.aliases)
            if r is not None:
                return r in self.active, frozenset()
            return self.ev(n.value)
        if isinstance(n, ast.UnaryOp):
            return self.ev(n.operand)
        if isinstance(n, ast.BinOp):
            a, va = self.ev(n.left)
            b, vb = self.ev(n.right)
            if isinstance(n.op, (ast.Add, ast.Sub)):
                pass
            elif isinstance(n.op, ast.Mult):
                if b:
                    self.need.update(va)
                if a:
                    self.need.update(vb)
            elif isinstance(n.op, ast.Div):  # d/da = 1/b, d/db = -a/b^2
                if a:
                    self.need.update(vb)
                if b:
                    self.need.update(va | vb)
            else:  # ** % // @: the derivative reads both operands
                if a or b:
                    self.need.update(va | vb)
            return a or b, va | vb
        if isinstance(n, (ast.Compare, ast.BoolOp)):
            vals = frozenset()
            for c in ([n.left] + n.comparators) if isinstance(n, ast.Compare) else n.values:
                vals |= self.ev(c)[1]
            self.need.update(vals)  # a branch decided by these values
            return False, vals
        if isinstance(n, ast.IfExp):
            _, vt = self.ev(n.test)
            self.need.update(vt)
            a, va = self.ev(n.body)
            b, vb = self.ev(n.orelse)
            return a or b, va | vb
        if isinstance(n, ast.Call):
            name, _ = _func_name(n)
            res = [self.ev(x) for x in list(n.args) + [k.value for k in n.keywords]]
            act = any(r[0] for r in res)
            vals = frozenset().union(*[r[1] for r in res]) if res else frozenset()
            if name in ("tid",):
                return False, frozenset()
            if name in _LINEAR_CALLS:
                return act, vals
            if name and (name.startswith(_ATOMIC_PREFIXES) or name in _TILE_WRITES):
                return act, vals
            if act:
                self.need.update(vals)  # a nonlinear (or unknown) function of an active value
            return act, vals
        if isinstance(n, (ast.Tuple, ast.List)):
            res = [self.ev(x) for x in n.elts]
            return any(r[0] for r in res), frozenset().union(*[r[1] for r in res]) if res else frozenset()
        raise _Unknown(type(n).__name__)

    def run(self, body):
        """Walk a statement list, recording what it needs (raises _Unknown on a construct it does not know)."""
        for st in body:
            if isinstance(st, ast.Assign):
                a, v = self.ev(st.value)
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        self.env[t.id] = (a, v)
                    elif isinstance(t, (ast.Tuple, ast.List)):
                        for e in t.elts:
                            if isinstance(e, ast.Name):
                                self.env[e.id] = (a, v)
                    else:
                        inner = t
                        while isinstance(inner, ast.Attribute):
                            inner = inner.value
                        if isinstance(inner, ast.Subscript):
                            base, idx = _subscript_chain(inner)
                            for i in idx:
                                self.need.update(self.ev(i)[1])
            elif isinstance(st, ast.AugAssign):
                fake = ast.BinOp(left=st.target if not isinstance(st.target, ast.Name) else st.target,
                                 op=st.op, right=st.value)
                a, v = self.ev(fake)
                if isinstance(st.target, ast.Name):
                    self.env[st.target.id] = (a, v)
            elif isinstance(st, ast.AnnAssign) and st.value is not None:
                if isinstance(st.target, ast.Name):
                    self.env[st.target.id] = self.ev(st.value)
            elif isinstance(st, ast.Expr):
                self.ev(st.value)
            elif isinstance(st, ast.If):
                self.need.update(self.ev(st.test)[1])
                self.run(st.body)
                self.run(st.orelse)
            elif isinstance(st, (ast.For, ast.While)):
                if isinstance(st, ast.For):
                    self.need.update(self.ev(st.iter)[1])
                else:
                    self.need.update(self.ev(st.test)[1])
                self.run(st.body)
                self.run(st.body)  # loop-carried locals
            elif isinstance(st, (ast.Pass, ast.Continue, ast.Break, ast.Return)):
                if isinstance(st, ast.Return) and st.value is not None:
                    self.ev(st.value)
            else:
                raise _Unknown(type(st).__name__)


def _value_flows(pyfunc, max_nodes=5000):
    """Which argument paths' *values* flow into each array a kernel writes.

    Gradients travel along values, never along indices or branch conditions: in
    ``out[k] = src[i]`` with ``k = wp.atomic_add(counter, 0, 1)`` the value of ``out``
    depends on ``src`` only, whatever ``counter`` and the branch deciding the store hold.
    The analysis is flow-insensitive and conservative: a local collects every value ever
    assigned to it (branches and loop iterations included), a call to a user function or
    an unknown builtin returns the union of its arguments' values and may write every
    array passed to it with that union, and ``wp.atomic_*(a, ..., v)`` writes ``v`` into
    ``a`` and returns ``a``'s value.

    Parameters
    ----------
    pyfunc : callable
        The kernel's Python function (its source is parsed, never run).
    max_nodes : int
        Larger functions are not analysed (default 5000 AST nodes, as :func:`_values_needed`).

    Returns
    -------
    dict[str, set[str]] or None
        Written argument path -> argument paths whose values reach it; ``None`` when the
        source cannot be read or holds a construct the analysis does not know (treat every
        write as depending on every read).
    """
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(pyfunc)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    fdef = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)), None)
    if fdef is None or sum(1 for _ in ast.walk(fdef)) > max_nodes:
        return None
    params = [a.arg for a in fdef.args.args]
    aliases = {p: p for p in params}
    walk = _FlowAnalysis(aliases)
    try:
        walk.run(fdef.body)
    except Exception:  # noqa: BLE001 - _Unknown, RecursionError or a construct the helpers do not expect: unknown
        return None
    return walk.flows


class _FlowAnalysis:
    """The walk behind :func:`_value_flows`: the values each local collected and each written path's sources."""

    def __init__(self, aliases):
        self.aliases = aliases
        self.env, self.flows = {}, {}

    def write(self, path, vals):
        """Record that ``vals`` reach the written argument ``path``."""
        self.flows.setdefault(path, set()).update(vals)

    def ev(self, n):
        """Argument paths whose values flow into expression ``n`` (writes its calls make are recorded)."""
        if isinstance(n, ast.Constant):
            return frozenset()
        if isinstance(n, ast.Name):
            if n.id in self.env:
                return frozenset(self.env[n.id])
            return frozenset([self.aliases[n.id]]) if n.id in self.aliases else frozenset()
        if isinstance(n, ast.Subscript):
            base, _idx = _subscript_chain(n)  # indices carry no value
            r = _root_path(base, self.aliases)
            return frozenset([r]) if r is not None else self.ev(base)
        if isinstance(n, ast.Attribute):
            if n.attr in _METADATA:
                return frozenset()
            r = _root_path(n, self.aliases)
            return frozenset([r]) if r is not None else self.ev(n.value)
        if isinstance(n, ast.UnaryOp):
            return frozenset() if isinstance(n.op, ast.Not) else self.ev(n.operand)
        if isinstance(n, ast.BinOp):
            return self.ev(n.left) | self.ev(n.right)
        if isinstance(n, (ast.Compare, ast.BoolOp)):
            for c in ([n.left] + n.comparators) if isinstance(n, ast.Compare) else n.values:
                self.ev(c)  # a boolean carries no gradient; calls inside still write
            return frozenset()
        if isinstance(n, ast.IfExp):
            self.ev(n.test)
            return self.ev(n.body) | self.ev(n.orelse)
        if isinstance(n, ast.Call):
            name, _ = _func_name(n)
            if name in ("tid", "len"):
                return frozenset()
            args = list(n.args) + [k.value for k in n.keywords]
            if name and name.startswith(_ATOMIC_PREFIXES) and n.args:
                r = _root_path(n.args[0], self.aliases)
                vals = frozenset().union(*[self.ev(x) for x in n.args[1:]]) if len(n.args) > 1 else frozenset()
                if r is None:
                    raise _Unknown("atomic on a non-argument")
                self.write(r, vals)
                return frozenset([r])
            vals = frozenset().union(*[self.ev(x) for x in args]) if args else frozenset()
            for x in args:  # an array handed to a function may be written with what it was given
                r = _root_path(x, self.aliases) if isinstance(x, (ast.Name, ast.Attribute)) else None
                if r is not None:
                    self.write(r, vals)
            return vals
        if isinstance(n, (ast.Tuple, ast.List)):
            return frozenset().union(*[self.ev(x) for x in n.elts]) if n.elts else frozenset()
        raise _Unknown(type(n).__name__)

    def store(self, t, vals):
        """Assign ``vals`` to a store target: a local, a tuple of targets, or an argument array."""
        if isinstance(t, ast.Name):
            self.env.setdefault(t.id, set()).update(vals)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self.store(e, vals)
        elif isinstance(t, (ast.Subscript, ast.Attribute)):
            r = _subscript_root(t, self.aliases) or _root_path(t, self.aliases)
            if r is not None:
                self.write(r, vals)
            else:  # a component of a local (v[0] = ..., v.x = ...)
                inner = t
                while isinstance(inner, (ast.Subscript, ast.Attribute)):
                    inner = inner.value
                if not isinstance(inner, ast.Name):
                    raise _Unknown("store target")
                self.env.setdefault(inner.id, set()).update(vals)
        else:
            raise _Unknown(type(t).__name__)

    def run(self, body):
        """Walk a statement list (raises _Unknown on a construct it does not know)."""
        for st in body:
            if isinstance(st, ast.Assign):
                v = self.ev(st.value)
                whole = _root_path(st.value, self.aliases) if isinstance(st.value, (ast.Name, ast.Attribute)) else None
                for t in st.targets:
                    if whole is not None and isinstance(t, ast.Name) and t.id not in self.aliases:
                        self.aliases[t.id] = whole  # a local naming a whole argument: stores through it reach it
                    self.store(t, v)
            elif isinstance(st, ast.AugAssign):
                self.store(st.target, self.ev(st.value) | self.ev(st.target))
            elif isinstance(st, ast.AnnAssign):
                if st.value is not None:
                    self.store(st.target, self.ev(st.value))
            elif isinstance(st, ast.Expr):
                self.ev(st.value)
            elif isinstance(st, ast.If):
                self.ev(st.test)
                self.run(st.body)
                self.run(st.orelse)
            elif isinstance(st, (ast.For, ast.While)):
                self.ev(st.iter if isinstance(st, ast.For) else st.test)
                if isinstance(st, ast.For):
                    self.store(st.target, frozenset())
                for _ in range(3):  # loop-carried locals reach a fixed point in a few passes
                    self.run(st.body)
                self.run(st.orelse)
            elif isinstance(st, ast.Return):
                if st.value is not None:
                    self.ev(st.value)
            elif isinstance(st, (ast.Pass, ast.Continue, ast.Break)):
                pass
            else:
                raise _Unknown(type(st).__name__)


def _eval_index(node, tids, scalars, local_defs, depth=0):
    """("tid", axis, offset) | ("const", int) | None for one index expression."""
    if node is None or depth > 4:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return ("const", node.value)
    if isinstance(node, ast.Name):
        if node.id in tids:
            return ("tid", tids[node.id], 0)
        v = scalars.get(node.id)
        if isinstance(v, int) and not isinstance(v, bool):
            return ("const", v)
        if node.id in local_defs:
            return _eval_index(local_defs[node.id], tids, scalars, local_defs, depth + 1)
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _eval_index(node.operand, tids, scalars, local_defs, depth + 1)
        return ("const", -v[1]) if v and v[0] == "const" else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        a = _eval_index(node.left, tids, scalars, local_defs, depth + 1)
        b = _eval_index(node.right, tids, scalars, local_defs, depth + 1)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(node.op, ast.Add) else -1
        if a[0] == "const" and b[0] == "const":
            return ("const", a[1] + sign * b[1])
        if a[0] == "tid" and b[0] == "const":
            return ("tid", a[1], a[2] + sign * b[1])
        if a[0] == "const" and b[0] == "tid" and sign == 1:
            return ("tid", b[1], b[2] + a[1])
        return None
    if isinstance(node, ast.Call) and _func_name(node)[0] in ("int", "int32", "int64", "uint32") and len(node.args) == 1:
        return _eval_index(node.args[0], tids, scalars, local_defs, depth + 1)
    return None


def _access_mask(shape, dims, index_lists, tids, scalars, local_defs):
    """Boolean mask (Warp ``shape``) of the elements a launch of ``dims`` touches through
    ``index_lists``; all True where an index cannot be evaluated."""
    import numpy as np

    mask = np.zeros(tuple(shape), dtype=bool)
    if not shape:
        return mask
    for idx in index_lists:
        axes = []
        for d, n in enumerate(shape):
            e = _eval_index(idx[d], tids, scalars, local_defs) if d < len(idx) else None
            if e is None:
                axes.append(np.arange(n))
            elif e[0] == "const":
                c = e[1] + n if e[1] < 0 else e[1]
                axes.append(np.array([c]) if 0 <= c < n else np.array([], dtype=int))
            else:
                k, off = e[1], e[2]
                if k < len(dims) and isinstance(dims[k], int):
                    r = np.arange(off, off + dims[k])
                    axes.append(r[(r >= 0) & (r < n)])
                else:
                    axes.append(np.arange(n))
        mask[np.ix_(*axes)] = True
    return mask


# ----------------------------------------------------------------------------
# source rules: a parsed kernel's parameters read, written, assigned
# ----------------------------------------------------------------------------


def _call_tail(node) -> str:
    """Last name of a call target (``wp.atomic_add`` -> ``atomic_add``)."""
    f = node.func if isinstance(node, ast.Call) else node
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return ""


def _base_name(node):
    """The name at the root of a subscript/attribute chain (``s.q[i].x`` -> ``s``), or None."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def kernel_access(fn) -> tuple:
    """(params, read, written) of a kernel: parameter names in order, the
    params it reads, and those it writes (assignment to an element, field or
    component, augmented assignment, or the first argument of an atomic).
    A struct parameter counts as read or written through its fields."""
    params, read, written, _ = kernel_access_detail(fn)
    return params, read, written


def kernel_access_detail(fn) -> tuple:
    """:func:`kernel_access` plus the params it *assigns* (plain ``=``, as
    opposed to accumulating with ``+=`` or an atomic)."""
    params = [a.arg for a in fn.args.args]
    pset = set(params)
    read, written, assigned = set(), set(), set()
    for n in ast.walk(fn):
        if isinstance(n, (ast.Assign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                b = _base_name(t) if isinstance(t, (ast.Subscript, ast.Attribute)) else None
                if b in pset:
                    written.add(b)
                    if isinstance(n, ast.AugAssign):
                        read.add(b)
                    else:
                        assigned.add(b)
        if isinstance(n, ast.Call) and _call_tail(n).startswith("atomic_") and n.args:
            b = _base_name(n.args[0])
            if b in pset:
                written.add(b)
        if isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Load):
            if any(isinstance(x, ast.Attribute) and x.attr in _METADATA for x in (n, getattr(n, "value", None))):
                continue
            b = _base_name(n)
            if b in pset:
                read.add(b)
    return params, read, written, assigned
