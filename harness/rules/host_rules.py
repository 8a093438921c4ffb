"""Rules over host functions: taping patterns around ``wp.Tape``,
``backward()`` and the arrays handed to launches."""

from __future__ import annotations

import ast

from ._ast import _MUTATORS, _dotted, _names_in, _tail, is_tape_with
from .registry import rule


def _backward_calls(unit, fn):
    return unit.cached(("backward", id(fn)),
                       lambda: [c for c in ast.walk(fn) if isinstance(c, ast.Call) and _tail(c) == "backward"])


def _tape_blocks(unit, fn):
    return unit.cached(("tapes", id(fn)), lambda: [w for w in ast.walk(fn) if isinstance(w, ast.With) and is_tape_with(w)])


def _loops(fn):
    return [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))]


_RNG_TAILS = ("standard_normal", "normal", "uniform", "integers", "random", "randn", "rand")
#: Calls under ``np.random`` / ``random`` that make or seed a generator or read its state: no draw.
_RNG_SETUP = ("default_rng", "RandomState", "Generator", "SeedSequence", "PCG64", "PCG64DXSM", "Philox", "MT19937",
              "SFC64", "BitGenerator", "seed", "get_state", "set_state", "getstate", "setstate", "Random")


@rule("host_rng", specificity=0.2, observed=True,
      summary="NumPy/random draws outside construction")
def host_rng(unit):
    """``np.random.*`` / ``random.*`` / ``rng.normal(...)`` in a host function
    other than ``__init__``, ``make_problem`` and ``set_*``; making or seeding a
    generator (``np.random.default_rng(seed)``, ``np.random.seed``, :data:`_RNG_SETUP`)
    is not a draw."""
    for fn in unit.host_functions:
        if fn.name in ("__init__", "make_problem") or fn.name.startswith("set_"):
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Call) and _tail(n) not in _RNG_SETUP and (
                _dotted(n.func).startswith(("np.random", "numpy.random", "random."))
                or _tail(n) in _RNG_TAILS and _dotted(n.func).split(".")[0] in ("self", "rng", "np", "numpy")
            ):
                yield n, f"random draw '{ast.unparse(n.func)}' in {fn.name}", fn.name


@rule("grad_buffer_reuse", gate=">=1.13",
      summary="`x.grad = self.buf`: a persistent buffer used as an adjoint (consumed by backward() from Warp 1.13)")
def grad_buffer_reuse(unit):
    """A ``.grad`` assigned an attribute or an upper-case global (a buffer
    that outlives the call); Warp changelog 1.13.0: backward() consumes
    output adjoints."""
    for fn in unit.host_functions:
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in n.targets):
                if isinstance(n.value, ast.Attribute) or (isinstance(n.value, ast.Name) and n.value.id.isupper()):
                    yield n, f"'{ast.unparse(n)}' hands a persistent buffer to backward() as an adjoint in {fn.name}", fn.name


@rule("repeated_backward", observed=True,
      summary="`.backward(` called more than once in one function")
def repeated_backward(unit):
    """Two backward passes in one function accumulate into the same adjoints."""
    for fn in unit.host_functions:
        calls = _backward_calls(unit, fn)
        if len(calls) > 1:
            yield calls[1], f".backward() called {len(calls)} times in {fn.name}", fn.name


@rule("backward_in_loop", specificity=0.2, observed=True,
      summary="`.backward(` inside a Python loop")
def backward_in_loop(unit):
    """A backward pass per loop iteration (windowed/truncated gradients, or
    adjoints accumulating across iterations)."""
    for fn in unit.host_functions:
        for loop in _loops(fn):
            if any(isinstance(c, ast.Call) and _tail(c) == "backward" for c in ast.walk(loop)):
                yield loop, f".backward() inside a loop in {fn.name}", fn.name


@rule("tape_per_window", observed=True,
      summary="a wp.Tape() created inside a loop")
def tape_per_window(unit):
    """A fresh tape per iteration: the gradient stops at each window's start."""
    for fn in unit.host_functions:
        for loop in _loops(fn):
            if any(isinstance(c, ast.Call) and _tail(c) == "Tape" for c in ast.walk(loop)):
                yield loop, f"a new wp.Tape() per loop iteration in {fn.name}", fn.name


def _has_mod(node) -> bool:
    return any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Mod) for b in ast.walk(node))


@rule("buffer_swap", observed=True,
      summary="two names swapped (`a, b = b, a`) or buffers indexed by parity in a loop")
def buffer_swap(unit):
    """Ping-pong buffers inside a loop: a later step overwrites what an
    earlier recorded launch read."""
    for fn in unit.host_functions:
        for loop in _loops(fn):
            inner = list(ast.walk(loop))
            parity = {t.id for n in inner if isinstance(n, ast.Assign) for t in ast.walk(n.targets[0])
                      if isinstance(t, ast.Name) and _has_mod(n.value)}
            for n in inner:
                if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and _names_in(n.slice) & parity:
                    yield n, f"'{ast.unparse(n)}' indexes buffers by a parity computed in a loop in {fn.name}", fn.name
                if isinstance(n, ast.Subscript) and _has_mod(n.slice):
                    yield n, f"'{ast.unparse(n)}' alternates buffers by index parity inside a loop in {fn.name}", fn.name
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple) \
                        and isinstance(n.value, ast.Tuple):
                    lhs = [ast.unparse(e) for e in n.targets[0].elts]
                    rhs = [ast.unparse(e) for e in n.value.elts]
                    if len(lhs) == 2 and lhs == rhs[::-1]:
                        yield n, f"'{ast.unparse(n)}' swaps buffers inside a loop in {fn.name}", fn.name


@rule("copy_on_tape", gate="<1.17",
      summary="wp.copy / wp.clone in a host function (recorded when under a tape)")
def copy_on_tape(unit):
    """``wp.copy``/``wp.clone`` whose adjoint was wrong before Warp 1.17
    (changelog 1.17.0)."""
    for fn in unit.host_functions:
        tapes = _tape_blocks(unit, fn)
        for n in ast.walk(fn):
            if isinstance(n, ast.Call) and _tail(n) in ("copy", "clone") and _dotted(n.func).split(".")[0] in ("wp", "warp"):
                inside = any(any(m is n for m in ast.walk(w)) for w in tapes)
                where = "inside the tape block" if inside else "(recorded when called under a tape)"
                yield n, f"wp.{_tail(n)}() in {fn.name} {where}", fn.name


@rule("mutation_on_tape", observed=True,
      summary="`.zero_()` / `.fill_()` inside a tape block")
def mutation_on_tape(unit):
    """An in-place host write the tape does not record, inside its block."""
    for fn in unit.host_functions:
        for w in _tape_blocks(unit, fn):
            for n in ast.walk(w):
                if isinstance(n, ast.Call) and _tail(n) in ("zero_", "fill_"):
                    yield n, f"'{ast.unparse(n.func)}()' inside the tape block in {fn.name}", fn.name


def _after_tape(unit, fn):
    """(rule, call, detail) for calls between a tape block's end and the next
    ``backward()`` of the same function, computed once per function."""
    def compute():
        out = []
        calls = _backward_calls(unit, fn)
        mutating, readers = unit.project.mutating, unit.project.grad_readers
        for w in _tape_blocks(unit, fn):
            end = w.end_lineno or w.lineno
            later = [c for c in calls if c.lineno > end]
            if not later:
                continue
            stop = later[0].lineno
            seeded = _names_in(later[0]) - {"tape"}
            for n in ast.walk(fn):
                if not (isinstance(n, ast.Call) and end < n.lineno < stop):
                    continue
                on_grad = ".grad." in ast.unparse(n.func) + "."
                if _tail(n) in readers or ".grad" in ast.unparse(n):
                    out.append(("grad_read_before_backward", n,
                                f"'{ast.unparse(n.func)}(...)' reads .grad before backward() in {fn.name}"))
                elif (_tail(n) in _MUTATORS or _tail(n) in mutating) and not on_grad:
                    if seeded & set().union(*(_names_in(a) for a in list(n.args) + [k.value for k in n.keywords])):
                        out.append(("loss_after_tape", n,
                                    f"'{ast.unparse(n.func)}(...)' writes the seeded loss after the tape block in {fn.name}"))
                    else:
                        out.append(("launch_after_tape", n,
                                    f"'{ast.unparse(n.func)}(...)' between the tape block and backward() in {fn.name}"))
        return out
    return unit.cached(("after_tape", id(fn)), compute)


def _after_tape_rule(unit, name):
    for fn in unit.host_functions:
        for r, n, detail in _after_tape(unit, fn):
            if r == name:
                yield n, detail, fn.name


@rule("grad_read_before_backward", observed=True,
      summary="`.grad` read (directly or by a helper) between the tape block and backward()")
def grad_read_before_backward(unit):
    """A gradient read before this call's backward() wrote it (last call's value)."""
    yield from _after_tape_rule(unit, "grad_read_before_backward")


@rule("loss_after_tape", observed=True,
      summary="a launch after the tape block writes the array that backward() then seeds")
def loss_after_tape(unit):
    """The loss is computed off the tape, so its seed reaches nothing."""
    yield from _after_tape_rule(unit, "loss_after_tape")


@rule("launch_after_tape", observed=True,
      summary="a launch or in-place write after a `with tape:` block and before `.backward(`")
def launch_after_tape(unit):
    """An array mutated between recording and replay: backward() sees the new contents."""
    yield from _after_tape_rule(unit, "launch_after_tape")


@rule("launch_before_tape", specificity=0.4, observed=True,
      summary="a value computed by launches before the `with tape:` block and used inside it")
def launch_before_tape(unit):
    """Work done before the tape starts is not recorded: no gradient flows through it."""
    for fn in unit.host_functions:
        mutating = unit.project.mutating
        for w in _tape_blocks(unit, fn):
            inside = set().union(*(_names_in(x) for x in w.body))
            for n in fn.body:
                if n.lineno >= w.lineno or not isinstance(n, ast.Assign) or not isinstance(n.value, ast.Call):
                    continue
                t = _tail(n.value)
                bound = {x.id for tg in n.targets for x in ast.walk(tg) if isinstance(x, ast.Name)}
                if (t == "launch" or t in mutating) and bound & inside:
                    yield n, (f"'{ast.unparse(n)}' is computed by launches before the tape block "
                              f"and used inside it in {fn.name}"), fn.name
