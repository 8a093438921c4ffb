"""Mutation operators: small named AST-level edits that inject one gradient bug.

Each operator is a subclass of :class:`Operator` registered in
:data:`OPERATORS`. It names the taxonomy class it produces (``produces``, a
class id of ``harness/taxonomy.py``) and implements :meth:`Operator.sites`,
which walks the AST of one source file and yields every place the fault can be
injected together with the text edits that inject it. :meth:`Operator.apply`
runs it over the ``.py`` files of a program and returns one
:class:`Mutation` per site, or an empty :class:`Mutations` whose ``reason``
says why the operator does not apply.

An operator proposes; it does not decide. Whether a site really breaks the
gradient (the array is on the parameter-to-loss path, the loop carries a
non-additive value, the point hits the singularity) is settled by admission
(:mod:`defects4warp.corpus.mutate.admit`), which measures each mutant with the independent
oracle.

The operator set follows the disguises listed per class in docs/taxonomy.md,
in the manner of the deep-learning mutation tools that draw their operators
from real faults (DeepCrime, Humbatova et al., ISSTA 2021).
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass

from .patterns import (
    _alloc_with_grad, _blocks, _bound_name, _calls, _expr_call_stmts, _guard_removals, _inside_where, _is_backward_stmt,
    _is_host_write, _is_launch_stmt, _is_literal_call, _is_tape_with, _kw, _loads, _needs_parens, _param_names,
    _stores, _wrap, _written_twice,
)
from .source import Edit, Source, apply_edits, dotted, is_device_code, warp_decorator


@dataclass
class Mutation:
    """One mutant: the parent's sources with one operator applied at one site.

    Attributes
    ----------
    operator : str
        The operator's name (a key of :data:`OPERATORS`).
    produces : str
        The taxonomy class the operator injects.
    site : str
        ``path:line:col[/detail]`` of the anchor node in the parent source; with
        the parent and the operator it makes the mutant's stable id.
    sources : dict[str, str]
        Full new text of every file the edit changes (path relative to the variant).
    note : str
        What was changed, in one line (for reports; never written into the mutant).
    """

    operator: str
    produces: str
    site: str
    sources: dict
    note: str = ""

    def diff(self, parent_sources: dict) -> str:
        """Unified diff from the parent to this mutant (files it changes only)."""
        out = []
        for path in sorted(self.sources):
            out.extend(difflib.unified_diff(
                parent_sources[path].splitlines(keepends=True), self.sources[path].splitlines(keepends=True),
                fromfile=f"a/{path}", tofile=f"b/{path}"))
        return "".join(out)


class Mutations(list):
    """A list of :class:`Mutation` with ``reason``: why it is empty (``""`` otherwise)."""

    def __init__(self, items=(), reason: str = ""):
        super().__init__(items)
        self.reason = reason


class Operator:
    """Base class of the mutation operators.

    Subclasses set ``name``, ``produces`` (a taxonomy class id), ``summary``
    and ``absent`` (the reason given when no site exists) and implement
    :meth:`sites`.
    """

    name = ""
    produces = ""
    #: Other classes :meth:`sites` may give a site (the 4-tuple form), for checks of the manifest.
    site_classes: tuple = ()
    summary = ""
    absent = "no site"

    def sites(self, src: Source):
        """Yield ``(site, edits, note)`` for each place ``src`` can be mutated, or
        ``(site, edits, note, class_id)`` where the class at that site differs from
        ``produces`` (the mechanism depends on the surrounding code)."""
        raise NotImplementedError

    def apply(self, sources: dict) -> Mutations:
        """Mutate a program.

        Parameters
        ----------
        sources : dict[str, str]
            Path (relative to the variant folder) to file text; only ``.py``
            files are considered.

        Returns
        -------
        Mutations
            One :class:`Mutation` per site, sorted by site; when empty,
            ``.reason`` says why the operator does not apply.
        """
        out = []
        unparsable = []
        for path in sorted(p for p in sources if p.endswith(".py")):
            try:
                src = Source(path, sources[path])
            except SyntaxError as exc:
                unparsable.append(f"{path}: {exc.msg}")
                continue
            seen = set()
            for site, edits, note, *cls in self.sites(src):
                if site in seen or not edits:
                    continue
                seen.add(site)
                new = apply_edits(src.text, edits)
                if new == src.text:
                    continue
                out.append(Mutation(self.name, cls[0] if cls else self.produces, site, {path: new}, note))
        if out:
            return Mutations(sorted(out, key=lambda m: _site_key(m.site)))
        return Mutations(reason=self.absent + (f" (unparsable: {'; '.join(unparsable)})" if unparsable else ""))


def _site_key(site: str):
    path, line, rest = site.split(":", 2)
    col, _, detail = rest.partition("/")
    return (path, int(line), int(col), detail)


OPERATORS: dict = {}


def register(cls):
    """Class decorator adding an operator instance to :data:`OPERATORS`."""
    OPERATORS[cls.name] = cls()
    return cls


def get_operator(name: str) -> Operator:
    """The registered operator ``name``.

    Raises
    ------
    KeyError
        Naming the known operators when ``name`` is not one.
    """
    try:
        return OPERATORS[name]
    except KeyError:
        raise KeyError(f"unknown operator {name!r}; known: {', '.join(sorted(OPERATORS))}") from None


# ---------------------------------------------------------------------------
# the operators


@register
class DropRequiresGrad(Operator):
    """Drop ``requires_grad=True`` from one Warp allocation (``wp.zeros``, ``wp.array``, ...).

    Produces ``missing_requires_grad``: an array on the parameter-to-loss path
    without a gradient buffer cuts every adjoint upstream of it.
    """

    name = "drop_requires_grad"
    produces = "missing_requires_grad"
    summary = "remove requires_grad=True from one allocation"
    absent = "no Warp allocation with requires_grad=True"

    def sites(self, src):
        for call in _calls(src, host_only=True):
            if not _alloc_with_grad(call) or _kw(call, "retain_grad") is not None:
                continue
            if _bound_name(src, call) in _param_names(src):
                continue
            kw = _kw(call, "requires_grad")
            items = sorted(list(call.args) + list(call.keywords), key=lambda n: (n.lineno, n.col_offset))
            i = items.index(kw)
            if i > 0:
                edit = Edit(src.end(items[i - 1]), src.end(kw), "")
            elif len(items) > 1:
                edit = Edit(src.start(kw), src.start(items[1]), "")
            else:
                edit = Edit(src.start(kw), src.end(kw), "")
            yield src.site(call), [edit], f"{dotted(call.func)} without requires_grad"


@register
class DropGradZeroing(Operator):
    """Delete the gradient zeroing between iterations (``tape.zero()``, ``x.grad.zero_()``).

    Produces ``missing_tape_zero``: parameter gradients sum across calls of
    ``gradient()`` (``growth``).
    """

    name = "drop_grad_zeroing"
    produces = "missing_tape_zero"
    summary = "delete tape.zero() or x.grad.zero_()"
    absent = "no tape.zero() or .grad.zero_() statement"

    def sites(self, src):
        for stmt, call in _expr_call_stmts(src):
            f = call.func
            if not isinstance(f, ast.Attribute) or call.args:
                continue
            if (f.attr == "zero" and "tape" in dotted(f.value).lower()) or (
                    f.attr == "zero_" and isinstance(f.value, ast.Attribute) and f.value.attr == "grad"):
                yield src.site(stmt), src.delete_stmt(stmt), f"deleted {src.seg(call)}"


@register
class DropTapeReset(Operator):
    """Delete ``tape.reset()`` before a tape is recorded again.

    Produces ``double_count``: the re-recorded tape keeps the old launches and
    replays them too. Where the tape is a local of the same function made by a
    ``Tape(...)`` call there (a fresh tape each call), nothing is re-recorded: the
    deleted ``reset()`` was only the zeroing, so the site produces
    ``missing_tape_zero``. The signature cannot tell them apart (both grow with
    ratios 2, 3 over three calls when the kept tape is zeroed elsewhere: measured on
    ``stay-cable-damper-tuning``, fresh tape, and ``cylinder-marker-radii``, kept
    tape); the tape's lifetime, read here from the source, decides the class.
    """

    name = "drop_tape_reset"
    produces = "double_count"
    site_classes = ("missing_tape_zero",)
    summary = "delete tape.reset()"
    absent = "no tape.reset() statement"

    def sites(self, src):
        for stmt, call in _expr_call_stmts(src):
            f = call.func
            if isinstance(f, ast.Attribute) and f.attr == "reset" and not call.args and "tape" in dotted(f.value).lower():
                fresh = isinstance(f.value, ast.Name) and _made_by_tape_call(src.enclosing_function(stmt), f.value.id)
                yield (src.site(stmt), src.delete_stmt(stmt), f"deleted {src.seg(call)}",
                       "missing_tape_zero" if fresh else self.produces)


def _made_by_tape_call(fn, name: str) -> bool:
    """Whether local ``name`` of function ``fn`` is assigned from a ``...Tape(...)`` call in ``fn``'s body."""
    if fn is None:
        return False
    for node in ast.walk(fn):
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
                and isinstance(node.value, ast.Call) and dotted(node.value.func).split(".")[-1] == "Tape"):
            return True
    return False


@register
class InplaceAugAssign(Operator):
    """Turn a multiplicative array store in a kernel into ``*=`` / ``/=`` on the array.

    ``a[i] = a[i] * s`` becomes ``a[i] *= s``; ``out[i] = u * s`` (``out`` a
    kernel array argument) becomes ``out[i] = u`` then ``out[i] *= s``.
    Produces ``inplace_math``: in-place multiply/divide on an array element
    has no correct adjoint (Warp docs, Limitations, "In-Place Math Operations").
    """

    name = "inplace_augassign"
    produces = "inplace_math"
    summary = "a[i] = a[i] * s -> a[i] *= s (or split a store into = and *=)"
    absent = "no multiplicative array store in a kernel"

    def sites(self, src):
        ops = {ast.Mult: "*=", ast.Div: "/="}
        for node in ast.walk(src.tree):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and is_device_code(src, node)):
                continue
            t, v = node.targets[0], node.value
            if not (isinstance(t, ast.Subscript) and isinstance(v, ast.BinOp) and type(v.op) in ops):
                continue
            if not src.owns_lines(node):
                continue
            fn = src.enclosing_function(node)
            base = t.value
            if not (isinstance(base, ast.Name) and fn is not None
                    and any(a.arg == base.id and "array" in ast.dump(a.annotation or ast.Constant(None)) for a in fn.args.args)):
                continue
            op = ops[type(v.op)]
            tdump = ast.dump(t.value), ast.dump(t.slice)
            same = lambda n: isinstance(n, ast.Subscript) and (ast.dump(n.value), ast.dump(n.slice)) == tdump  # noqa: E731
            if same(v.left):
                yield src.site(node), [Edit(src.start(node), src.end(node), f"{src.seg(t)} {op} {src.seg(v.right)}")], "self store to in-place"
            elif isinstance(v.op, ast.Mult) and same(v.right):
                yield src.site(node), [Edit(src.start(node), src.end(node), f"{src.seg(t)} {op} {src.seg(v.left)}")], "self store to in-place"
            elif not any(same(n) for n in ast.walk(v)):
                ind = src.indent_of(node)
                text = f"{src.seg(t)} = {src.seg(v.left)}\n{ind}{src.seg(t)} {op} {src.seg(v.right)}"
                yield src.site(node), [Edit(src.start(node), src.end(node), text)], "store split into = and in-place"


@register
class PingPongState(Operator):
    """Reuse two state buffers where the program allocates one per step.

    Inside a ``for t in range(...)`` loop of host code, ``s[t]`` / ``s[t + 1]``
    become ``s[t % 2]`` / ``s[(t + 1) % 2]`` (a ring of two); other non-constant
    indices of the same list in the function (the final state) follow.
    Produces ``overwrite``: later steps overwrite arrays earlier recorded
    launches read (Warp docs, "Array Overwrites").
    """

    name = "ping_pong_state"
    produces = "overwrite"
    summary = "states[t], states[t + 1] -> states[t % 2], states[(t + 1) % 2]"
    absent = "no per-step list of states indexed by a loop variable and its successor"

    @staticmethod
    def _offset(sl, var):
        if isinstance(sl, ast.Name) and sl.id == var:
            return 0
        if (isinstance(sl, ast.BinOp) and isinstance(sl.left, ast.Name) and sl.left.id == var
                and isinstance(sl.op, (ast.Add, ast.Sub)) and isinstance(sl.right, ast.Constant)
                and isinstance(sl.right.value, int)):
            return sl.right.value * (1 if isinstance(sl.op, ast.Add) else -1)
        return None

    def sites(self, src):
        for loop in ast.walk(src.tree):
            if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name)
                    and isinstance(loop.iter, ast.Call) and dotted(loop.iter.func) == "range"
                    and not is_device_code(src, loop)):
                continue
            var = loop.target.id
            groups = {}
            for n in ast.walk(loop):
                if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load):
                    k = self._offset(n.slice, var)
                    if k is not None:
                        groups.setdefault(ast.dump(n.value), []).append((n, k))
            fn = src.enclosing_function(loop) or src.tree
            for key, subs in sorted(groups.items(), key=lambda kv: src.start(kv[1][0][0])):
                offs = {k for _, k in subs}
                if not (0 in offs and (1 in offs or -1 in offs)):
                    continue
                inner = {id(n) for n, _ in subs}
                edits = []
                for n, _ in subs:
                    s = src.seg(n.slice)
                    edits.append(Edit(src.start(n.slice), src.end(n.slice), f"{s} % 2" if isinstance(n.slice, ast.Name) else f"({s}) % 2"))
                for n in ast.walk(fn):
                    if (isinstance(n, ast.Subscript) and id(n) not in inner and ast.dump(n.value) == key
                            and not isinstance(n.slice, (ast.Constant, ast.Slice)) and not src.start(loop) <= src.start(n) < src.end(loop)):
                        s = src.seg(n.slice)
                        if (isinstance(n.slice, ast.UnaryOp) and isinstance(n.slice.op, ast.USub)
                                and isinstance(n.slice.operand, ast.Constant)):
                            s = f"(len({src.seg(n.value)}) - {src.seg(n.slice.operand)}) % 2"   # s[-1]: the last step
                        elif isinstance(n.slice, (ast.Name, ast.Attribute)):
                            s = f"{s} % 2"
                        else:
                            s = f"({s}) % 2"
                        edits.append(Edit(src.start(n.slice), src.end(n.slice), s))
                yield src.site(loop, src.seg(subs[0][0].value)), edits, f"ring of two for {src.seg(subs[0][0].value)}"


@register
class HostWriteBeforeBackward(Operator):
    """Move a host write (``.assign``, ``.zero_``, ``.fill_``, ``wp.copy``) to just before ``backward()``.

    Candidates are host writes in the block of a ``with tape:`` (before it, or
    at the top level of its body) that is followed by ``tape.backward(...)``.
    Produces ``offtape_mutation``: the tape replays its launches on arrays as
    they are at backward time.
    """

    name = "host_write_before_backward"
    produces = "offtape_mutation"
    summary = "move .assign/.zero_/.fill_/wp.copy between the tape and backward()"
    absent = "no host write next to a with-tape block followed by backward()"

    def sites(self, src):
        for block in _blocks(src):
            for wi, w in enumerate(block):
                if not _is_tape_with(w):
                    continue
                bw = next((s for s in block[wi + 1:] if _is_backward_stmt(s)), None)
                if bw is None or not src.owns_lines(bw):
                    continue
                cands = [s for s in block[:wi] if _is_host_write(s)] + [s for s in w.body if _is_host_write(s)]
                for s in cands:
                    if not src.owns_lines(s) or (s in w.body and len(w.body) == 1):
                        continue
                    moved = src.reindent(s, src.indent_of(bw))
                    edits = src.delete_stmt(s) + src.insert_before(bw, moved)
                    yield src.site(s), edits, f"moved {src.seg(s.value)} before backward"


@register
class LaunchIntoTape(Operator):
    """Move a launch that runs after the ``with tape:`` block to the end of the block.

    Produces ``overwrite``: a housekeeping launch (state copy-back, reset)
    recorded after the loss writes arrays the recorded forward read.
    """

    name = "launch_into_tape"
    produces = "overwrite"
    summary = "move a launch after the tape into the tape, after the loss"
    absent = "no wp.launch statement after a with-tape block in the same block"

    def sites(self, src):
        for block in _blocks(src):
            for wi, w in enumerate(block):
                if not _is_tape_with(w):
                    continue
                body_indent = src.indent_of(w.body[0])
                for si, s in enumerate(block[wi + 1:], start=wi + 1):
                    if _is_tape_with(s):
                        break
                    if _is_launch_stmt(s) and src.owns_lines(s) and not (_loads(s) & _stores(block[wi + 1:si])):
                        moved = src.reindent(s, body_indent)
                        edits = src.delete_stmt(s) + [Edit(src.stmt_lines_span(w.body[-1])[1], src.stmt_lines_span(w.body[-1])[1], moved)]
                        yield src.site(s), edits, "moved a launch into the tape"


@register
class RetainGrad(Operator):
    """Add ``retain_grad=True`` to one allocation that has ``requires_grad=True``.

    Produces ``double_count``: from Warp 1.13.0 backward consumes (reads then
    zeroes) output adjoints; an array written twice that opts out with
    ``retain_grad`` passes one adjoint to both writers (changelog 1.13.0).
    """

    name = "retain_grad"
    produces = "double_count"
    summary = "add retain_grad=True to an allocation"
    absent = "no Warp allocation with requires_grad=True"

    def sites(self, src):
        written = _written_twice(src)
        for call in _calls(src, host_only=True):
            if _alloc_with_grad(call) and _kw(call, "retain_grad") is None and _bound_name(src, call) in written:
                kw = _kw(call, "requires_grad")
                yield src.site(call), [Edit(src.end(kw), src.end(kw), ", retain_grad=True")], f"{dotted(call.func)} with retain_grad"


@register
class DropEpsilon(Operator):
    """Drop the epsilon guarding ``wp.sqrt``/``wp.log``/``wp.pow``/``wp.length``/``wp.normalize`` or a division
    in a kernel or ``@wp.func`` (host code, e.g. an optimiser's update, is left alone).

    ``wp.sqrt(d + 1e-12)`` becomes ``wp.sqrt(d)``, ``a / wp.max(r, 1e-9)`` becomes
    ``a / r``. Produces ``nonsmooth_nan``: the adjoint is inf/NaN where the
    argument reaches the singular point.
    """

    name = "drop_epsilon"
    produces = "nonsmooth_nan"
    summary = "remove + eps or wp.max(., eps) inside sqrt/log/pow/length or a denominator"
    absent = "no epsilon guard inside sqrt/log/pow/length/normalize or a denominator"
    guarded = frozenset("wp.sqrt wp.log wp.pow wp.length wp.normalize wp.atan2 wp.acos wp.asin".split())

    def sites(self, src):
        for node in ast.walk(src.tree):
            scopes = []
            if isinstance(node, ast.Call) and dotted(node.func) in self.guarded:
                scopes = list(node.args)
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                scopes = [node.right]
            if scopes and not is_device_code(src, node):
                continue
            for scope in scopes:
                for anchor, text in _guard_removals(src, scope):
                    if _inside_where(src, anchor):
                        continue
                    keep = next((n for n in ast.iter_child_nodes(anchor) if src.seg(n) == text), None)
                    yield src.site(anchor), [Edit(src.start(anchor), src.end(anchor), _wrap(src, anchor, text, keep))], f"dropped epsilon in {src.seg(anchor)}"


@register
class UnguardWhere(Operator):
    """Remove the guard inside a ``wp.where`` / conditional-expression branch.

    ``wp.where(r > 0.0, x / wp.max(r, 1e-9), 0.0)`` becomes
    ``wp.where(r > 0.0, x / r, 0.0)``. Produces ``where_nan``: both branches are
    differentiated, and ``0 * inf`` in the untaken one is NaN.
    """

    name = "unguard_where"
    produces = "where_nan"
    summary = "remove + eps / wp.max(., eps) inside a wp.where or a ? : branch"
    absent = "no guarded expression inside a wp.where or conditional expression"

    def sites(self, src):
        for node in ast.walk(src.tree):
            branches = []
            if isinstance(node, ast.Call) and dotted(node.func) == "wp.where" and len(node.args) == 3:
                branches = node.args[1:]
            elif isinstance(node, ast.IfExp):
                branches = [node.body, node.orelse]
            for b in branches:
                for anchor, text in _guard_removals(src, b):
                    keep = next((n for n in ast.iter_child_nodes(anchor) if src.seg(n) == text), None)
                    yield src.site(anchor), [Edit(src.start(anchor), src.end(anchor), _wrap(src, anchor, text, keep))], "unguarded a where branch"


@register
class LoopBoundToArgument(Operator):
    """Turn a literal ``range(N)`` bound in a kernel into a kernel argument.

    Adds ``n_<var>: int`` to the kernel's signature and passes ``N`` at every
    launch of that kernel in the same file. Produces ``dynamic_loop``: a
    runtime bound is not unrolled and the adjoint replays the loop with its
    final carried value (Warp docs, Limitations, "Dynamic Loops").
    """

    name = "loop_bound_to_argument"
    produces = "dynamic_loop"
    summary = "for k in range(3) -> for k in range(n_k) with n_k a kernel argument"
    absent = "no literal-bound loop in a kernel launched from the same file"

    def sites(self, src):
        kernels = {fn.name: fn for fn in ast.walk(src.tree) if isinstance(fn, ast.FunctionDef) and warp_decorator(fn) == "kernel"}
        for kname, fn in sorted(kernels.items()):
            for loop in ast.walk(fn):
                if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and isinstance(loop.iter, ast.Call)
                        and dotted(loop.iter.func) in ("range", "wp.range") and len(loop.iter.args) == 1):
                    continue
                bound = loop.iter.args[0]
                if not (isinstance(bound, ast.Constant) and isinstance(bound.value, int) and bound.value > 1):
                    continue
                pname = f"n_{loop.target.id}"
                if any(a.arg == pname for a in fn.args.args) or not fn.args.args:
                    continue
                launch_edits = self._launch_edits(src, kname, str(bound.value))
                if not launch_edits:
                    continue
                last = fn.args.args[-1]
                edits = [Edit(src.start(bound), src.end(bound), pname), Edit(src.end(last), src.end(last), f", {pname}: int")]
                yield src.site(loop), edits + launch_edits, f"{kname}: range({bound.value}) -> range({pname})"

    @staticmethod
    def _launch_edits(src, kname, value):
        edits, n = [], 0
        for call in ast.walk(src.tree):
            if not (isinstance(call, ast.Call) and dotted(call.func) == "wp.launch"):
                continue
            k = call.args[0] if call.args else (_kw(call, "kernel").value if _kw(call, "kernel") else None)
            if not (isinstance(k, ast.Name) and k.id == kname):
                continue
            n += 1
            lst = None
            for key in ("outputs", "inputs"):
                kw = _kw(call, key)
                if kw is not None and kw.value is not None:
                    if isinstance(kw.value, ast.List):
                        lst = kw.value
                    break
            if lst is None and _kw(call, "inputs") is None and len(call.args) >= 3 and isinstance(call.args[2], ast.List):
                lst = call.args[2]
            if lst is None:
                return []
            if lst.elts:
                edits.append(Edit(src.end(lst.elts[-1]), src.end(lst.elts[-1]), f", {value}"))
            else:
                edits.append(Edit(src.start(lst) + 1, src.start(lst) + 1, value))
        return edits if n else []


@register
class ComponentReassign(Operator):
    """Assign one component of a freshly built local vector again.

    After ``v = wp.vec3(a, b, c)`` in a kernel, insert ``v[k] = <k-th argument>``
    for the first non-literal argument: the forward value is unchanged.
    Produces ``component_reassign``: Warp's adjoint of a component written
    more than once is wrong (Limitations, "each component may only be
    assigned once"; measured 1.8x on 1.19.0 for ``v[0] = 2x`` after ``wp.vec3(2x, x, 1)``).
    """

    name = "component_reassign"
    produces = "component_reassign"
    summary = "v = wp.vec3(a, b, c) -> ...; v[0] = a"
    absent = "no local vector built from non-literal components in a kernel or function"
    ctor = re.compile(r"^wp\.vec[234][hfd]?$|^wp\.vec$")

    def sites(self, src):
        for node in ast.walk(src.tree):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Call) and self.ctor.match(dotted(node.value.func))
                    and is_device_code(src, node) and len(node.value.args) >= 2 and not node.value.keywords
                    and src.owns_lines(node)):
                continue
            v = node.targets[0].id
            for k, a in enumerate(node.value.args):
                if isinstance(a, (ast.Constant, ast.Starred)) or _is_literal_call(a):
                    continue
                if any(isinstance(n, ast.Name) and n.id == v for n in ast.walk(a)):
                    continue
                yield src.site(node), src.insert_after(node, [f"{v}[{k}] = {src.seg(a)}"]), f"{v}[{k}] assigned twice"
                break


@register
class DropFuncGradFactor(Operator):
    """Drop one factor from an adjoint accumulation in a ``@wp.func_grad``.

    ``wp.adjoint[x] += 2.0 * x * adj_ret`` becomes ``wp.adjoint[x] += x * adj_ret``.
    Produces ``custom_adjoint_error``: the custom adjoint no longer is the
    derivative of the forward.
    """

    name = "drop_func_grad_factor"
    produces = "custom_adjoint_error"
    summary = "remove one factor of a product in a @wp.func_grad"
    absent = "no product in a @wp.func_grad adjoint accumulation"

    @staticmethod
    def _factors(node):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            return DropFuncGradFactor._factors(node.left) + DropFuncGradFactor._factors(node.right)
        return [node]

    def sites(self, src):
        for fn in ast.walk(src.tree):
            if not (isinstance(fn, ast.FunctionDef) and warp_decorator(fn) == "func_grad"):
                continue
            for st in ast.walk(fn):
                if not (isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Add)):
                    continue
                fs = self._factors(st.value)
                if len(fs) < 2:
                    continue
                for i, f in enumerate(fs):
                    if isinstance(f, ast.Name) and f.id.startswith("adj"):
                        continue
                    rest = [g for j, g in enumerate(fs) if j != i]
                    text = " * ".join(f"({src.seg(g)})" if _needs_parens(g) else src.seg(g) for g in rest)
                    yield src.site(st, str(i)), [Edit(src.start(st.value), src.end(st.value), text)], f"dropped factor {src.seg(f)}"


@register
class DisableBackward(Operator):
    """Compile one kernel with ``enable_backward=False``.

    Produces ``backward_disabled``: no adjoint is launched for it, so the
    gradient through it is cut.
    """

    name = "disable_backward"
    produces = "backward_disabled"
    summary = "@wp.kernel -> @wp.kernel(enable_backward=False)"
    absent = "no @wp.kernel"

    def sites(self, src):
        for fn in ast.walk(src.tree):
            if not (isinstance(fn, ast.FunctionDef) and warp_decorator(fn) == "kernel"):
                continue
            for d in fn.decorator_list:
                if isinstance(d, ast.Call) and dotted(d.func).endswith("kernel"):
                    if _kw(d, "enable_backward") is not None:
                        continue
                    pos = src.end(d) - 1
                    sep = ", " if (d.args or d.keywords) else ""
                    yield src.site(fn), [Edit(pos, pos, f"{sep}enable_backward=False")], f"{fn.name} without backward"
                elif dotted(d).endswith("kernel"):
                    yield src.site(fn), [Edit(src.end(d), src.end(d), "(enable_backward=False)")], f"{fn.name} without backward"


@register
class StatementOutOfTape(Operator):
    """Move the first or the last statement of a ``with tape:`` body out of the block.

    Produces ``tape_scope``: launches the tape does not record contribute
    nothing to the backward pass.
    """

    name = "statement_out_of_tape"
    produces = "tape_scope"
    summary = "move the first/last statement of a with-tape body out of it"
    absent = "no with-tape block holding two or more statements"

    def sites(self, src):
        for w in ast.walk(src.tree):
            if not (_is_tape_with(w) and len(w.body) >= 2) or is_device_code(src, w):
                continue
            ind = src.indent_of(w)
            first, last = w.body[0], w.body[-1]
            if src.owns_lines(first):
                yield src.site(first), src.delete_stmt(first) + src.insert_before(w, src.reindent(first, ind)), "first statement before the tape"
            if src.owns_lines(last) and last is not first:
                _, e = src.stmt_lines_span(last)
                yield src.site(last), [Edit(*src.stmt_lines_span(last), "")] + [Edit(e, e, src.reindent(last, ind))], "last statement after the tape"


@register
class DoubleBackward(Operator):
    """Call ``tape.backward(...)`` a second time right after the first.

    Produces ``double_count``: the second replay adds the adjoints again (2x
    from Warp 1.13.0, 3x on 1.12.1).
    """

    name = "double_backward"
    produces = "double_count"
    summary = "repeat the tape.backward(...) statement"
    absent = "no tape.backward(...) statement"

    def sites(self, src):
        for stmt, call in _expr_call_stmts(src):
            if _is_backward_stmt(stmt) and stmt.lineno == stmt.end_lineno:
                yield src.site(stmt), src.insert_after(stmt, [src.seg(stmt)]), "backward twice"


@register
class GradNumpyView(Operator):
    """Return ``x.grad.numpy()`` instead of ``x.grad.numpy().copy()``.

    Produces ``stale_gradient_read``: on CPU ``.numpy()`` is a view, so the
    ``tape.zero()`` that follows zeroes the returned gradient (device dependent:
    on CUDA ``.numpy()`` copies).
    """

    name = "grad_numpy_view"
    produces = "stale_gradient_read"
    summary = "x.grad.numpy().copy() -> x.grad.numpy()"
    absent = "no .grad.numpy().copy()"

    def sites(self, src):
        for call in _calls(src, host_only=True):
            f = call.func
            if (isinstance(f, ast.Attribute) and f.attr == "copy" and not call.args and isinstance(f.value, ast.Call)
                    and isinstance(f.value.func, ast.Attribute) and f.value.func.attr == "numpy"
                    and isinstance(f.value.func.value, ast.Attribute) and f.value.func.value.attr == "grad"):
                yield src.site(call), [Edit(src.end(f.value), src.end(call), "")], "gradient returned as a view"
