"""Source evidence: patterns in a variant's Python and kernel code.

Static and safe: every ``.py`` file of the variant folder is parsed with
:mod:`ast` (never executed, never regex over code). Each rule looks for a
pattern an expert reads as a hint of a bug class; each finding carries the
file, the line, the rule and the classes it supports. A finding is a *smell*
until a measured signature agrees with it: the engine weighs it, it never
decides alone.

Rules (``RULES`` maps each to the classes it supports):

===========================  ====================================================
``inplace_array_op``         ``*=`` / ``/=`` on an array element in a kernel
``component_reassign``       a local vector/matrix component assigned twice,
                             or assigned inside a loop
``dynamic_loop``             a loop with a runtime bound whose carried value is
                             updated non-additively, used after the loop, or
                             left with ``continue``/``break``
``func_grad_assign``         ``wp.adjoint[x] = ...`` in a ``@wp.func_grad`` body
``where_overflow``           ``wp.where``/``wp.select`` operand with exp, log,
                             division or pow (both sides are evaluated)
``nonsmooth_op``             sqrt / pow / log / atan2 / acos / asin in a kernel
``piecewise_constant_op``    round / floor / ceil / sign / trunc / int() in a kernel
``retain_grad``              ``retain_grad`` used
``backward_disabled``        ``enable_backward=False`` (decorator or module option)
``backward_in_loop``         ``.backward(`` inside a Python loop
``repeated_backward``        ``.backward(`` called more than once in one function
``no_grad_zeroing``          a class or module calls ``.backward(`` but never
                             zeroes (``tape.zero()``, ``.grad.zero_()``,
                             ``tape.reset()``, a fresh ``wp.Tape()`` per call)
``array_ptr_alias``          ``wp.array(ptr=...)``
``atomic_index``             the return of ``wp.atomic_add``/``atomic_sub`` used
                             as an index without ``@wp.func_replay``
``func_native_no_adjoint``   ``@wp.func_native`` without ``adj_snippet``
``struct_array_write``       a kernel writes into an array field of a struct arg
``copy_on_tape``             ``wp.copy``/``wp.clone``/``.assign`` in a tape block
``mutation_on_tape``         ``.zero_()``/``.fill_()`` inside a tape block
``launch_after_tape``        a launch or in-place write after a ``with tape:``
                             block and before ``.backward(`` in the same function
``launch_before_tape``       a value computed by launches before the
                             ``with tape:`` block and used inside it
``buffer_swap``              two names swapped (``a, b = b, a``) in a loop
``no_requires_grad``         an array allocated without ``requires_grad=True``
                             whose name is passed as a launch output
``tape_per_window``          a ``wp.Tape()`` created inside a loop
``host_rng``                 NumPy/random draws outside construction
``device_rng``               ``wp.rand_init``/``wp.randn``/``wp.randf`` in a kernel
``array_component_write``    ``a[i].x = ...`` / ``a[i][k] = ...`` on an array
                             element (adjoint wrong before Warp 1.14)
``static_write_after_read``  within one host function, a launch writes an array
                             that an earlier launch read (kernel read/write sets
                             taken from the kernels' ASTs)
``write_after_write``        two launches in one host function assign one array
``struct_write_after_read``  the same, for an array reached through a struct
``host_write_after_read``    ``.zero_()``/``.fill_()``/``wp.copy`` on an array
                             an earlier launch read (loop bodies count twice:
                             the next iteration)
``host_assign_after_read``   the same with ``.assign()`` (values replaced from
                             the host, not recorded as a kernel write)
``custom_adjoint``           a ``@wp.func_grad`` is defined (hand-written adjoint)
``grad_read_before_backward`` ``.grad`` read (directly or by a helper) between
                             the tape block and ``backward()``
``loss_after_tape``          a launch after the tape block writes the array
                             that ``backward()`` then seeds
``kernel_read_write``        a kernel reads and writes the same array argument
``grad_buffer_reuse``        ``x.grad = self.buf``: a persistent buffer used as
                             an adjoint (consumed by backward() from Warp 1.13)
===========================  ====================================================
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass
from pathlib import Path

RULES = {
    "inplace_array_op": ("inplace_math",),
    "component_reassign": ("component_reassign",),
    "dynamic_loop": ("dynamic_loop",),
    "func_grad_assign": ("custom_adjoint_error",),
    "where_overflow": ("where_nan",),
    "nonsmooth_op": ("nonsmooth_nan", "nonsmooth_tie"),
    "piecewise_constant_op": ("piecewise_constant",),
    "retain_grad": ("double_count",),
    "backward_disabled": ("backward_disabled",),
    "backward_in_loop": ("truncation", "missing_tape_zero"),
    "repeated_backward": ("double_count",),
    "no_grad_zeroing": ("missing_tape_zero",),
    "array_ptr_alias": ("overwrite",),
    "atomic_index": ("replay_side_effect",),
    "func_native_no_adjoint": ("native_no_adjoint",),
    "struct_array_write": ("struct_overwrite",),
    "copy_on_tape": ("copy_adjoint",),
    "mutation_on_tape": ("overwrite",),
    "launch_after_tape": ("offtape_mutation",),
    "launch_before_tape": ("tape_scope",),
    "buffer_swap": ("overwrite",),
    "no_requires_grad": ("missing_requires_grad",),
    "tape_per_window": ("truncation",),
    "host_rng": ("stochastic_forward", "rng_replay"),
    "device_rng": ("stochastic_forward", "rng_replay"),
    "array_component_write": ("warp_adjoint_bug",),
    "static_write_after_read": ("overwrite",),
    "struct_write_after_read": ("struct_overwrite",),
    "host_write_after_read": ("overwrite",),
    "host_assign_after_read": ("offtape_mutation",),
    "custom_adjoint": ("custom_adjoint_error",),
    "loss_after_tape": ("tape_scope",),
    "kernel_read_write": ("overwrite", "inplace_math"),
    "grad_buffer_reuse": ("stale_gradient_read",),
    "grad_read_before_backward": ("stale_gradient_read",),
    "write_after_write": ("overwrite",),
}

#: How specific each rule is (0..1): the weight a finding adds to the classes
#: it supports. Rules that also fire on correct code (a sqrt, a kernel that
#: updates its own array) weigh little.
SPECIFICITY = {
    "nonsmooth_op": 0.1,
    "piecewise_constant_op": 0.3,
    "kernel_read_write": 0.15,
    "write_after_write": 0.2,
    "launch_before_tape": 0.4,
    "custom_adjoint": 0.3,
    "backward_in_loop": 0.2,
    "host_rng": 0.2,
    "device_rng": 0.2,
    "no_requires_grad": 0.4,
    "retain_grad": 0.8,
    "atomic_index": 0.9,
}
DEFAULT_SPECIFICITY = 0.5

_KERNEL_DECOS = {"kernel", "func", "func_grad", "func_replay", "func_native"}
#: Builtins whose adjoint is singular somewhere (wp.length/normalize are
#: guarded at the zero vector on every release, so they are not listed).
_NONSMOOTH = {"sqrt", "pow", "log", "atan2", "acos", "asin"}
_PIECEWISE = {"round", "floor", "ceil", "sign", "trunc", "rint", "int", "int32", "int64"}
_OVERFLOW = {"exp", "log", "pow", "sqrt", "tan", "div"}
_MUTATORS = {"launch", "assign", "fill_", "copy", "zero_"}
_ALLOC = {"zeros", "empty", "zeros_like", "empty_like", "array", "full", "ones", "full_like", "ones_like"}


@dataclass(frozen=True)
class Finding:
    """One source finding.

    Attributes
    ----------
    rule : str
        Key of :data:`RULES`.
    file : str
        File name relative to the variant folder.
    line : int
        1-based line.
    detail : str
        What was seen, in words.
    classes : tuple[str, ...]
        Classes the finding supports.
    scope : str
        The kernel or function the finding sits in ("" at module level).
    """

    rule: str
    file: str
    line: int
    detail: str
    classes: tuple
    scope: str = ""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["classes"] = list(self.classes)
        return d


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


def _base_name(node):
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


class _Scanner:
    def __init__(self, rel: str, tree: ast.Module, constants: set, mutating: set = frozenset(),
                 grad_readers: set = frozenset()):
        self.rel = rel
        self.tree = tree
        self.constants = constants
        self.mutating = mutating
        self.grad_readers = grad_readers
        self.current = ""
        self.counters, self.replayed = set(), set()
        self.out = []

    def add(self, rule, node, detail):
        self.out.append(Finding(rule, self.rel, getattr(node, "lineno", 0), detail, RULES[rule], self.current))

    # -- kernels and funcs ----------------------------------------------
    def kernel(self, fn, kind):
        self.current = fn.name
        params = {a.arg for a in fn.args.args}
        annotations = {a.arg: a.annotation for a in fn.args.args}
        array_params = {n for n, a in annotations.items() if a is not None and "array" in ast.dump(a)}
        struct_params = {n for n, a in annotations.items() if a is not None and n not in array_params
                         and isinstance(a, ast.Name) and a.id[:1].isupper()}
        comp_assigns = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Mult, ast.Div)):
                if _base_name(node.target) in array_params and isinstance(node.target, (ast.Subscript, ast.Attribute)):
                    self.add("inplace_array_op", node, f"'{ast.unparse(node.target)} {'*=' if isinstance(node.op, ast.Mult) else '/='} ...' in {kind} {fn.name}")
            if isinstance(node, ast.Call):
                t = _tail(node)
                if t in _NONSMOOTH:
                    self.add("nonsmooth_op", node, f"{t}() in {kind} {fn.name}")
                if t in _PIECEWISE:
                    self.add("piecewise_constant_op", node, f"{t}() in {kind} {fn.name}")
                if t in ("rand_init", "randn", "randf", "randi", "noise"):
                    self.add("device_rng", node, f"{t}() in {kind} {fn.name}")
                if t in ("where", "select"):
                    ops = _resolve_locals(fn, node.args[1:])
                    risky = [_tail(c) for a in ops for c in ast.walk(a)
                             if (isinstance(c, ast.Call) and _tail(c) in _OVERFLOW)]
                    risky += ["division" for a in ops for c in ast.walk(a) if isinstance(c, ast.BinOp) and isinstance(c.op, ast.Div)]
                    if risky:
                        self.add("where_overflow", node, f"wp.{t}() operand computes {', '.join(sorted(set(risky)))} in {kind} {fn.name}")
                if t in ("atomic_add", "atomic_sub") or (t in self.counters and t not in self.replayed):
                    parent_uses = [p for p in ast.walk(fn) if isinstance(p, ast.Assign) and p.value is node]
                    for p in parent_uses:
                        names = {_base_name(tg) for tg in p.targets}
                        used_as_index = any(isinstance(s, ast.Subscript) and (_names_in(s.slice) & names) for s in ast.walk(fn))
                        if used_as_index and not (kind == "func" and fn.name in self.replayed):
                            self.add("atomic_index", node, f"value of {t}() (an atomic counter) used as an index in {fn.name} without @wp.func_replay")
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for tg in targets:
                    if isinstance(tg, (ast.Subscript, ast.Attribute)):
                        base = _base_name(tg)
                        inner = tg.value
                        if base in array_params and isinstance(inner, ast.Subscript) and (
                            isinstance(tg, ast.Attribute) or isinstance(tg, ast.Subscript)
                        ):
                            self.add("array_component_write", node, f"component write '{ast.unparse(tg)}' to an array element in {fn.name}")
                        if base in struct_params and isinstance(inner, ast.Attribute) and isinstance(tg, ast.Subscript):
                            self.add("struct_array_write", node, f"kernel {fn.name} writes '{ast.unparse(tg)}' (array in struct '{base}')")
                        if base and base not in params and isinstance(node, ast.Assign) and isinstance(inner, ast.Name):
                            key = (base, ast.unparse(tg))
                            comp_assigns.setdefault(key, []).append(node)
        for (_base, text), nodes in comp_assigns.items():
            in_loop = any(self._inside_loop(fn, n) for n in nodes)
            if len(nodes) > 1 or in_loop:
                self.add("component_reassign", nodes[-1],
                         f"local component '{text}' assigned {len(nodes)} time(s){' inside a loop' if in_loop else ''} in {fn.name}")
        if kind == "kernel":
            _, r, w = kernel_access(fn)
            for name in sorted((r & w) & array_params):
                plain = [n for n in ast.walk(fn) if isinstance(n, ast.Assign) and any(_base_name(t) == name for t in n.targets)]
                aug = [n for n in ast.walk(fn) if isinstance(n, ast.AugAssign) and _base_name(n.target) == name]
                if plain or aug:
                    self.add("kernel_read_write", (plain or aug)[0], f"kernel {fn.name} reads and writes array '{name}'")
        for loop in [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))]:
            self.loop(fn, loop, params)
        if kind == "func_grad":
            self.add("custom_adjoint", fn, f"hand-written adjoint {fn.name}")
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Subscript) and _tail(t.value) == "adjoint" for t in node.targets
                ):
                    self.add("func_grad_assign", node, f"'{ast.unparse(node.targets[0])} = ...' assigns instead of accumulating")
        if kind == "func_native":
            for d in fn.decorator_list:
                if isinstance(d, ast.Call) and len(d.args) < 2 and _kw(d, "adj_snippet") is None:
                    self.add("func_native_no_adjoint", fn, f"@wp.func_native {fn.name} has no adj_snippet")
        for d in fn.decorator_list:
            if isinstance(d, ast.Call) and _is_false(_kw(d, "enable_backward")):
                self.add("backward_disabled", d, f"{fn.name} decorated with enable_backward=False")

    @staticmethod
    def _inside_loop(fn, target):
        for loop in ast.walk(fn):
            if isinstance(loop, (ast.For, ast.While)) and loop is not target:
                if any(n is target for n in ast.walk(loop)):
                    return True
        return False

    def loop(self, fn, loop, params):
        if isinstance(loop, ast.For):
            it = loop.iter
            if not (isinstance(it, ast.Call) and _tail(it) == "range"):
                return
            bound_names = set().union(*(_names_in(a) for a in it.args)) if it.args else set()
            if not bound_names or bound_names <= self.constants:
                return
            loop_var = loop.target.id if isinstance(loop.target, ast.Name) else None
        else:
            loop_var = None
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
                                (isinstance(v.left, ast.Name) and v.left.id == tg.id) or (isinstance(v.right, ast.Name) and v.right.id == tg.id)
                            )
                            if not additive:
                                reasons.append(f"'{tg.id}' carried non-additively")
        after = [n for n in ast.walk(fn) if getattr(n, "lineno", 0) > (loop.end_lineno or loop.lineno)]
        used_after = {x.id for n in after for x in ast.walk(n) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}
        carried = [v for v in assigned if v in used_after]
        if carried:
            reasons.append("value(s) " + ", ".join(sorted(carried)) + " used after the loop")
        if reasons:
            kind = "while loop" if isinstance(loop, ast.While) else f"loop over range({', '.join(ast.unparse(a) for a in loop.iter.args)})"
            self.add("dynamic_loop", loop, f"runtime-bound {kind} in {fn.name}: " + "; ".join(dict.fromkeys(reasons)))

    # -- host code -------------------------------------------------------
    def host_function(self, fn):
        self.current = fn.name
        if fn.name not in ("__init__", "make_problem") and not fn.name.startswith("set_"):
            for n in ast.walk(fn):
                if isinstance(n, ast.Call) and (
                    _dotted(n.func).startswith(("np.random", "numpy.random", "random."))
                    or _tail(n) in ("standard_normal", "normal", "uniform", "integers", "random", "randn", "rand")
                    and _dotted(n.func).split(".")[0] in ("self", "rng", "np", "numpy")
                ):
                    self.add("host_rng", n, f"random draw '{ast.unparse(n.func)}' in {fn.name}")
        tape_blocks = [w for w in ast.walk(fn) if isinstance(w, ast.With) and self._is_tape_with(w)]
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in n.targets):
                if isinstance(n.value, ast.Attribute) or (isinstance(n.value, ast.Name) and n.value.id.isupper()):
                    self.add("grad_buffer_reuse", n, f"'{ast.unparse(n)}' hands a persistent buffer to backward() as an adjoint in {fn.name}")
        backward_calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and _tail(c) == "backward"]
        if len(backward_calls) > 1:
            self.add("repeated_backward", backward_calls[1], f".backward() called {len(backward_calls)} times in {fn.name}")
        for loop in [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))]:
            inner = list(ast.walk(loop))
            if any(isinstance(c, ast.Call) and _tail(c) == "backward" for c in inner):
                self.add("backward_in_loop", loop, f".backward() inside a loop in {fn.name}")
            if any(isinstance(c, ast.Call) and _tail(c) == "Tape" for c in inner):
                self.add("tape_per_window", loop, f"a new wp.Tape() per loop iteration in {fn.name}")
            parity = {t.id for n in inner if isinstance(n, ast.Assign) for t in ast.walk(n.targets[0])
                      if isinstance(t, ast.Name) and any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Mod) for b in ast.walk(n.value))}
            for n in inner:
                if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and _names_in(n.slice) & parity:
                    self.add("buffer_swap", n, f"'{ast.unparse(n)}' indexes buffers by a parity computed in a loop in {fn.name}")
                if isinstance(n, ast.Subscript) and any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Mod) for b in ast.walk(n.slice)):
                    self.add("buffer_swap", n, f"'{ast.unparse(n)}' alternates buffers by index parity inside a loop in {fn.name}")
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple) and isinstance(n.value, ast.Tuple):
                    lhs = [ast.unparse(e) for e in n.targets[0].elts]
                    rhs = [ast.unparse(e) for e in n.value.elts]
                    if len(lhs) == 2 and lhs == rhs[::-1]:
                        self.add("buffer_swap", n, f"'{ast.unparse(n)}' swaps buffers inside a loop in {fn.name}")
        for n in ast.walk(fn):
            if isinstance(n, ast.Call) and _tail(n) in ("copy", "clone") and _dotted(n.func).split(".")[0] in ("wp", "warp"):
                inside = any(any(m is n for m in ast.walk(w)) for w in tape_blocks)
                where = "inside the tape block" if inside else "(recorded when called under a tape)"
                self.add("copy_on_tape", n, f"wp.{_tail(n)}() in {fn.name} {where}")
        for w in tape_blocks:
            for n in ast.walk(w):
                if isinstance(n, ast.Call):
                    t = _tail(n)
                    if t in ("zero_", "fill_"):
                        self.add("mutation_on_tape", n, f"'{ast.unparse(n.func)}()' inside the tape block in {fn.name}")
            end = w.end_lineno or w.lineno
            later_backward = [c for c in backward_calls if c.lineno > end]
            if later_backward:
                stop = later_backward[0].lineno
                seeded = _names_in(later_backward[0]) - {"tape"}
                for n in ast.walk(fn):
                    if not (isinstance(n, ast.Call) and end < n.lineno < stop):
                        continue
                    on_grad = ".grad." in ast.unparse(n.func) + "."
                    reads_grad = _tail(n) in self.grad_readers or ".grad" in ast.unparse(n)
                    if reads_grad:
                        self.add("grad_read_before_backward", n, f"'{ast.unparse(n.func)}(...)' reads .grad before backward() in {fn.name}")
                    elif (_tail(n) in _MUTATORS or _tail(n) in self.mutating) and not on_grad:
                        if seeded & set().union(*(_names_in(a) for a in list(n.args) + [k.value for k in n.keywords])):
                            self.add("loss_after_tape", n, f"'{ast.unparse(n.func)}(...)' writes the seeded loss after the tape block in {fn.name}")
                        else:
                            self.add("launch_after_tape", n, f"'{ast.unparse(n.func)}(...)' between the tape block and backward() in {fn.name}")
            inside = set().union(*(_names_in(x) for x in w.body))
            for n in fn.body:
                if n.lineno >= w.lineno or not isinstance(n, ast.Assign) or not isinstance(n.value, ast.Call):
                    continue
                t = _tail(n.value)
                bound = {x.id for tg in n.targets for x in ast.walk(tg) if isinstance(x, ast.Name)}
                if (t == "launch" or t in self.mutating) and bound & inside:
                    self.add("launch_before_tape", n, f"'{ast.unparse(n)}' is computed by launches before the tape block and used inside it in {fn.name}")


    @staticmethod
    def _is_tape_with(w: ast.With) -> bool:
        for item in w.items:
            e = item.context_expr
            if (isinstance(e, ast.Call) and _tail(e) == "Tape") or "tape" in _dotted(e).lower():
                return True
        return False

    def module_wide(self):
        self.current = ""
        tree = self.tree
        for n in ast.walk(tree):
            if isinstance(n, ast.Call):
                t = _tail(n)
                if _is_true(_kw(n, "retain_grad")) or t == "retain_grad":
                    self.add("retain_grad", n, "retain_grad used")
                if t == "array" and _kw(n, "ptr") is not None:
                    self.add("array_ptr_alias", n, "wp.array(ptr=...) aliases existing memory")
                if t == "set_module_options" and n.args and isinstance(n.args[0], ast.Dict):
                    for k, v in zip(n.args[0].keys, n.args[0].values):
                        if isinstance(k, ast.Constant) and k.value == "enable_backward" and _is_false(v):
                            self.add("backward_disabled", n, "wp.set_module_options({'enable_backward': False})")
            if isinstance(n, ast.Assign) and _is_true(n.value) and any(
                isinstance(t, ast.Attribute) and t.attr == "retain_grad" for t in n.targets
            ):
                self.add("retain_grad", n, f"'{ast.unparse(n)}'")
            if isinstance(n, ast.Assign) and any(_dotted(t) == "wp.config.enable_backward" for t in n.targets) and _is_false(n.value):
                self.add("backward_disabled", n, "wp.config.enable_backward = False")


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
        if isinstance(n, ast.Call) and _tail(n).startswith("atomic_") and n.args:
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


#: Array attributes that are metadata, not data (reading them is not a read).
_METADATA = {"shape", "ndim", "size", "strides", "dtype"}


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


def _access_findings(rel, tree, kernels, host_fns=None) -> list:
    """Static write-after-read and write-after-write in each host function,
    from the kernels' read/write sets and in-place host writes."""
    out = {}
    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and not _deco_kind(n)]:
        if fn.name in ("__init__", "objective", "make_problem"):
            continue
        reads, writes = {}, {}
        for line, kind, key, who, struct, where in _events(fn.body, kernels, host_fns, 0, rel):
            if kind == "read":
                reads.setdefault(key, (who, line))
                continue
            if key in reads and reads[key][0] != who:
                rule = ("host_assign_after_read" if who == ".assign()" else "host_write_after_read") if kind == "host" else (
                    "struct_write_after_read" if struct else "static_write_after_read")
                by = f"'{key}{who}'" if kind == "host" else f"kernel {who} writes '{key}'"
                out.setdefault((rule, where, line), Finding(
                    rule, where, line, f"{by} after {reads[key][0]} (line {reads[key][1]}) read it, in {fn.name}", RULES[rule]))
            elif kind == "assign" and key in writes and writes[key][0] != who:
                out.setdefault(("write_after_write", where, line), Finding(
                    "write_after_write", where, line,
                    f"kernel {who} assigns '{key}', already written by {writes[key][0]} (line {writes[key][1]}) in {fn.name}",
                    RULES["write_after_write"]))
            writes.setdefault(key, (who, line))
    return list(out.values())


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


def scan(folder: str | Path) -> list:
    """All findings for the ``.py`` files under ``folder`` (sorted by file, line).

    A file that does not parse yields one finding-free entry in the log only;
    the scan goes on with the other files.
    """
    folder = Path(folder)
    parsed = []
    for py in sorted(folder.rglob("*.py")):
        try:
            parsed.append((str(py.relative_to(folder)), ast.parse(py.read_text(encoding="utf-8"), filename=str(py))))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
    constants = set().union(*(_module_constants(t) for _, t in parsed)) if parsed else set()
    any_grad = any(_is_true(_kw(c, "requires_grad")) for _, t in parsed for c in ast.walk(t) if isinstance(c, ast.Call))
    kernels = {fn.name: kernel_access_detail(fn) + (_struct_params(fn),) for _, t in parsed for fn in ast.walk(t)
               if isinstance(fn, ast.FunctionDef) and _deco_kind(fn) == "kernel"}
    outputs = set().union(*(_launch_outputs(t, kernels) for _, t in parsed)) if parsed else set()
    mutating = _mutating_functions([t for _, t in parsed])
    counters, replayed = _counter_funcs([t for _, t in parsed])
    grad_readers = {fn.name for _, t in parsed for fn in ast.walk(t) if isinstance(fn, ast.FunctionDef)
                    and not _deco_kind(fn) and any(isinstance(a, ast.Attribute) and a.attr == "grad"
                                                   and isinstance(a.ctx, ast.Load) for a in ast.walk(fn))}
    findings = []
    fns = [fn for _, t in parsed for fn in ast.walk(t) if isinstance(fn, ast.FunctionDef) and not _deco_kind(fn)]
    names = [fn.name for fn in fns]
    host_fns = {fn.name: (rel, fn) for rel, t in parsed for fn in ast.walk(t)
                if isinstance(fn, ast.FunctionDef) and not _deco_kind(fn)
                and names.count(fn.name) == 1 and fn.name not in ("objective", "gradient")}
    for rel, tree in parsed:
        findings += _access_findings(rel, tree, kernels, host_fns)
        s = _Scanner(rel, tree, constants, mutating, grad_readers)
        s.counters, s.replayed = counters, replayed
        for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
            kind = _deco_kind(fn)
            if kind:
                s.kernel(fn, kind)
            else:
                s.host_function(fn)
        s.module_wide()
        if any_grad:
            mixed = _mixed_allocations(tree)
            for name, node in _allocs_without_grad(tree):
                if name in outputs:
                    s.add("no_requires_grad", node, f"'{ast.unparse(node.targets[0])}' allocated without requires_grad=True and written by a launch")
                elif id(node) in mixed:
                    s.add("no_requires_grad", node, f"'{ast.unparse(node.targets[0])}' allocated without requires_grad=True "
                          "next to allocations with it, in the same function")
        findings += s.out
    calls = [(rel, c) for rel, t in parsed for c in ast.walk(t) if isinstance(c, ast.Call)]
    backward = [(rel, c) for rel, c in calls if _tail(c) == "backward"]
    if backward and not any(_tail(c) in ("zero", "zero_", "reset") for _, c in calls):
        rel, node = backward[0]
        findings.append(Finding("no_grad_zeroing", rel, node.lineno,
                                "backward() is called but nothing zeroes gradients (no tape.zero(), .grad.zero_() or tape.reset())",
                                RULES["no_grad_zeroing"]))
    uniq = {}
    for f in findings:
        uniq.setdefault((f.rule, f.file, f.line), f)
    return sorted(uniq.values(), key=lambda f: (f.file, f.line, f.rule))
