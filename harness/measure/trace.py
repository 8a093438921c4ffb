"""Runtime trace of one ``gradient()`` call, and the direct evidence it holds.

The reference engine used to read the user's source to guess how it tapes.
This module observes instead: :func:`trace_call` runs one callable (typically
``problem.gradient``) while Warp's *public* API is wrapped, records what
happened in order, and restores every wrapped name afterwards (also when the
callable raises). :func:`trace_findings` is a pure function from that trace
document to findings (measured facts that name a taxonomy class).

It runs inside the measurement worker subprocess, next to the user's
``problem.py``, and imports only the standard library, NumPy and Warp. It
works on every Warp release from 1.12.1 to 1.19.0 because it touches only
public names: ``wp.launch``, ``wp.launch_tiled``, ``wp.copy``, ``wp.clone``,
``wp.Tape.__init__/__enter__/__exit__/record_launch/record_func/backward/zero/
reset``, ``wp.array.zero_/fill_/assign/numpy`` and the ``wp.array.grad``
property (getter and setter), plus ``wp.types.is_struct`` and, read-only,
``kernel.key``, ``kernel.func``, ``kernel.module.name``, ``kernel.options``,
``kernel.module.options``, ``tape.gradients`` and a struct instance's field
table (``instance._cls.vars``, the one name not in Warp's documentation; it is
the same on 1.12.1 and 1.19.0). Signatures checked on 1.12.1 and 1.19.0:
``launch(kernel, dim, inputs, outputs, adj_inputs, adj_outputs, device,
stream, adjoint, record_tape, record_cmd, max_blocks, block_dim)``,
``Tape.record_launch(kernel, dim, max_blocks, inputs, outputs, device,
block_dim=0, metadata=None)``, ``Tape.backward(loss=None, grads=None)``;
``launch_tiled(*args, **kwargs)`` forwards to ``launch``. Which arrays a kernel reads and writes is found from the
kernel's Python source (``ast``), not from Warp's codegen flags: the flags in
``kernel.adj.args`` (``is_read``/``is_write``) are reset after the build on
1.12.1 and 1.19.0 alike (measured), so they cannot be read after a launch.

Contents are compared element by element where possible: every array a
launch reads is copied just before it runs (within ``max_snapshot_bytes``),
and at ``backward()`` only the elements the launch read count, found by
evaluating its index expressions (``a[i]``, ``z[t + 1, b]``, constants, the
launch's integer arguments); a time-indexed trajectory array that each step
extends is therefore not an overwrite. A kernel re-reading an element it
stored earlier in its body (``v[t + 1] = ...; ... v[t + 1]``) is not a read of
old contents, nor is a kernel that fills elements that held zeros before it ran
(a prefix product in a fresh buffer), unless it reads and replaces one element
in one statement (``flux[i] *= t``, the in-place math whose adjoint reads the
stored value).

An array read only in affine terms with constant coefficients
(``x_out[i] = x[i] + dt * v[i]`` with no gradient-carrying coefficient) is not
needed by the adjoint, so overwriting it is harmless from Warp 1.13, where
store adjoints are consumed; on 1.12.1 every overwrite still counts.

Overhead, measured on this project's shared 2-core CPU machine (Warp 1.19.0,
CPU, warm kernel cache, median of 15 calls; noisy because other jobs shared the
cores): tests/programs/trace_clean (3 launches) 0.2 ms untraced, 1.5 ms traced
(1.2 ms with ``digests=False``, 40 ms with ``coverage_root``);
corpus/hanging-chain-rest-lengths/buggy (11 launches) 1.0 ms vs 40 ms;
corpus/curling-delivery-velocities/buggy (121 launches) 49 ms vs 173 ms (111 ms
without digests, 548 ms with coverage). Roughly 1 ms per launch plus the
per-kernel source analysis, paid once per kernel per process (cached).
``trace_findings`` took 0.2-2 ms on these traces.

Limits: a name imported before the trace (``from warp import launch``) is not
wrapped; accesses inside a called ``wp.func`` count on every element; a
``wp.func`` that cannot be resolved from the kernel's globals is treated as
reading its arguments; launches Warp makes internally through private
functions (not ``wp.launch``) are invisible; one trace at a time per process;
state kept between iterations (a ``.grad`` never zeroed, a consumed seed
buffer) shows only from the second ``gradient()`` call on, so trace call 2.

Trace document (``trace_call(...)[1]``), JSON-serialisable
------------------------------------------------------------

``version``: 1. ``warp``: the imported Warp release (``wp.config.version``).
``python``: ``sys.version`` (first word). ``wall_s``: float, seconds of the
traced call including tracing. ``error``: ``None`` or ``"Type: message"`` of
the exception the callable raised. ``digests``: bool, whether contents were
digested. ``trace_errors``: list of str, exceptions raised while recording
(that operation then ran untraced; empty normally). ``snapshots_complete``: bool, every read array of every recorded
launch was copied (within ``max_snapshot_bytes``). ``params``: ``{name: array
label}``.

``arrays``: ``{label: {...}}``, one per ``wp.array`` the call touched (labels
``"A0"``, ``"A1"``, ...; params get the first labels, in ``params`` order):
``shape`` (list of int), ``dtype`` (Warp type name), ``float`` (bool, the
scalar type is float16/32/64), ``size`` (int), ``requires_grad`` (bool, when
first seen), ``param`` (its key in ``params`` or ``None``), ``grad_of``
(label of the array whose ``.grad`` this is, or ``None``).

``kernels``: ``{key: {...}}`` per launched kernel: ``name``, ``module``,
``file``, ``lines`` ([first, last] source lines, decorator included),
``enable_backward`` (bool: the kernel option, else the module option, else
True), ``access`` (``{arg or "arg.field": {"reads", "writes",
"accumulates"}}`` from the kernel's AST, ``None`` when the source could not
be analysed; then every array argument counts as read and written),
``kernel_option``/``module_option`` (the raw ``enable_backward`` options or
``None``), ``calls`` (user ``wp.func`` names it calls), ``rng`` (it calls a
``rand*``/``sample_*``/``noise`` built-in), ``rmw`` (argument paths with a
read-modify-write of one element: ``a[i] *= s``, ``a[i] = f(a[i])``).

``tapes``: ``{label: {"created": seq}}`` (labels ``"T0"``, ...).

``events``: list in call order; ``events[i]["seq"] == i``. Every event has
``seq`` and ``kind``:

* ``"launch"``: ``kernel`` (key), ``dim`` (list), ``tiled`` (bool),
  ``record_tape`` (the argument), ``tape`` (label it was recorded on, or
  ``None``), ``epoch`` (int: how many ``reset()`` that tape had seen),
  ``active_tape`` (label of the tape whose ``with`` block was open),
  ``after_loss`` (bool: recorded after the last write of an array later
  seeded by ``backward()``; ``None`` when no backward followed),
  ``args``: list of ``{"arg", "field", "array", "role", "reads", "writes",
  "accumulates", "pre"}`` for arrays (``field`` is the struct-field path, e.g.
  ``"state.q"``, or ``None``; ``role`` ``"input"``/``"output"``; ``pre`` is
  the content summary just before the launch) and ``{"arg", "value"}`` for
  other arguments; ``reads``/``writes``: array labels; ``needs``: argument
  paths whose values the kernel's adjoint reads given which arguments carry
  gradients (``requires_grad``), from its AST, or ``None`` when unknown.
* ``"host"``: ``op`` (``zero_``, ``fill_``, ``assign``, ``copy``,
  ``clone``), ``dest`` (label), ``src`` (label or ``None``), ``value``
  (``fill_`` value as float, else ``None``), ``active_tape``, ``tape``
  (label when the op was recorded on a tape through ``record_func``, else
  ``None``), ``epoch``, ``pre``/``post`` (summaries of ``dest``).
* ``"tape_init"``, ``"tape_enter"``, ``"tape_exit"``: ``tape``.
* ``"record_func"``: ``tape``, ``epoch``, ``arrays`` (labels), ``host`` (seq
  of the host op that recorded it or ``None``).
* ``"tape_zero"``, ``"tape_reset"``: ``tape``, ``arrays`` (labels whose
  adjoints it zeroed: the keys of ``tape.gradients``).
* ``"grad_read"``: ``array`` (owner), ``grad`` (label of the grad array),
  ``before_backward`` (no backward had started yet in this call). A read of
  the ``.grad`` property, e.g. to zero it.
* ``"grad_assign"``: same fields; ``owner.grad = array`` was set (``grad``
  is the attached array).
* ``"grad_numpy"``: same fields; ``.numpy()`` was called on a known grad
  array, i.e. its contents were consumed.
* ``"backward"``: ``tape``, ``epoch``, ``loss`` (label or ``None``),
  ``seeds``: list of ``{"mode": "loss"|"grads"|"preset", "target", "seed"
  (label of the seed buffer, ``None`` for ``loss``), "size", "sum", "min",
  "max", "all_ones", "constant" (the common value or ``None``),
  "target_sum", "target_mean", "target_size", "post_sum" (sum of the seed
  buffer after the backward)}`` (``"preset"``: backward() without
  arguments; the seeds are the nonzero or attached ``.grad`` of non-param
  arrays on the tape); ``pre``: ``{label:
  summary}`` of every array recorded on this tape (current epoch) just before
  the backward; ``grad_nonzero``: ``{label: bool}`` for every known array
  with a ``.grad`` (any element != 0 when the backward started);
  ``requires_grad``: ``{label: bool}`` at that time; ``writers``: ``{label:
  [{"event": seq, "by": "recorded launch"|"unrecorded launch"|"recorded host
  call"|"host call"}]}`` for each array a recorded launch on this tape read:
  the writes from its first read (that launch included) to the backward;
  ``read_changes``: ``{str(launch seq): {label: {"changed", "changed_set_before",
  "read", "self_overlap"}}}`` per recorded launch and array it read: how many
  elements it read differ now from just before it ran (``None`` without a
  snapshot), how many of those held a nonzero value then, how many elements
  it read (its index expressions evaluated with the launch's dim and integer
  arguments; every element where they cannot be evaluated), and whether it
  stored to elements it read (``None`` unknown); ``rebound``: ``[{"launch",
  "field", "then", "now"}]`` struct fields of recorded launches that point at
  another array now; ``adjoint_launches``:
  int; ``post_grads``: ``{param name: summary of its .grad after}``.

A *summary* is ``{"digest": 16 hex chars (blake2b-64 of the bytes, strided
sample above max_digest_bytes), "sum": float64 sum or None, "size": int}``
or ``None`` when digests are off.

``result``: ``{"grads": {name: {"sum", "size", "matches_backward" (index into
the call's backwards whose post-backward .grad equals the returned value, or
None), "ratio" (c when the return equals c times the last backward's .grad,
else None), "returned_zero" (bool), "backward_nonzero" (bool),
"matches_pre_backward" (bool: equals the param's nonzero .grad as it was when
the call's first backward started, and not what the last backward left)}}}`` or
``{"grads": None}`` when the return is not a dict.

``coverage``: ``None``, or ``{file: sorted executed line numbers}`` for .py
files under ``coverage_root``, launched kernels' whole line spans included.
``functions``: ``[{"file", "name", "line"}]`` Python functions entered under
the root.

Findings (``trace_findings``)
-----------------------------

Each finding is ``{"id", "classes", "detail", "data"}``; ids and classes:

=============================== ====================== =========================================
id                              classes                fact
=============================== ====================== =========================================
``write_after_read``            overwrite              an on-path recorded launch read A; a later
                                                       write recorded on the tape, or made while it
                                                       recorded, changed A before backward
``write_after_loss``            overwrite              same, the writer recorded after the loss
``struct_write_after_read``     struct_overwrite       same, A reached through a struct field
``struct_field_rebound``        struct_overwrite       a recorded struct's field now points at
                                                       another array (host rebinding)
``inplace_read_write``          inplace_math           one launch read and stored A
``rng_state_overwrite``         rng_replay             any of the above on an integer array read by a
                                                       kernel that draws random numbers
``zero_seed``                   stale_gradient_read    every seed of a backward is zero (a seed
                                                       buffer consumed earlier and not refilled)
``offtape_write_after_read``    offtape_mutation       A changed by an unrecorded launch/host call
                                                       outside the tape's recording
``missing_requires_grad``       missing_requires_grad  float array on the param->loss path, used
                                                       by the tape's launches, without
                                                       requires_grad
``forward_outside_tape``        tape_scope             an on-path launch recorded on no tape
``grad_nonzero_at_backward``    missing_tape_zero      a param's (or on-path intermediate's) .grad
                                                       nonzero when backward starts, never zeroed
                                                       in the call
``stale_gradient_read``         stale_gradient_read    a param's .grad contents read (.numpy())
                                                       before this call's backward, or returned
                                                       grads that are zeros where the backward
                                                       wrote some, or the .grad from before it
``multiple_backward``           double_count           two backwards replay the same launch
                                                       (kernel, arrays, input contents) reading a
                                                       param whose .grad is not zeroed between
``duplicate_launch``            double_count           same launch recorded twice on one tape
``seed_scale``                  seed_mismatch          constant seed over N>1 elements while the
                                                       objective is another reduction
``seed_accumulated``            seed_mismatch          the seed buffer was added to, not filled
``backward_disabled``           backward_disabled      on-path kernel built without backward
``window_handoff``              truncation             the path crosses from a tape whose
                                                       backward never follows
=============================== ====================== =========================================

``data`` holds the labels, event indices and numbers behind ``detail``. The
write-after-read family (``write_after_read``, ``write_after_loss``,
``struct_write_after_read``, ``inplace_read_write``, ``rng_state_overwrite``,
``offtape_write_after_read``) and ``missing_requires_grad`` group repeated
instances (one per reader kernel, argument and writer): ``arrays``,
``readers``, ``writers`` (event indices, at most 20 each), ``count``,
``changed_elements`` (elements read that differ at backward), ``field``,
``tape``, ``kernel``, ``writer_kind`` (``"launch"``/``"host"``),
``writer_recorded``, ``inplace``, ``loss_event``. ``seed_scale``:
``target``, ``seed``, ``constant``, ``size``, ``reduction`` (``"mean"`` or
``"sum"``), ``factor`` (gradient / objective's gradient), ``objective``.

"On the path" means: on the dataflow graph of the call's launches and host
copies up to that backward, an event that reads an array reachable from a
param (forward in time) and writes an array the seeded arrays depend on
(backward in time); params are leaves. Launches and host calls off that path
(counters, picking, housekeeping) never produce findings.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import inspect
import math
import os
import sys
import textwrap
import threading
import time

import numpy as np
import warp as wp


def _sibling(name):
    """A detector module of this folder (this file imports no harness module with a relative
    import, so that it also runs as a lone file in another release's environment)."""
    if __package__:
        try:
            return importlib.import_module(f"{__package__}.{name}")
        except ImportError:
            pass
    spec = importlib.util.spec_from_file_location(f"_d4w_trace_{name}",
                                                  os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_aliasing = _sibling("aliasing")
_tape_sessions = _sibling("tape_sessions")

__all__ = ["trace_call", "trace_findings", "FINDING_CLASSES"]

#: Finding id -> taxonomy class ids (docs/taxonomy.md).
FINDING_CLASSES = {
    "write_after_read": ["overwrite"],
    "write_after_loss": ["overwrite"],
    "struct_write_after_read": ["struct_overwrite"],
    "struct_field_rebound": ["struct_overwrite"],
    "inplace_read_write": ["inplace_math"],
    "rng_state_overwrite": ["rng_replay"],
    "zero_seed": ["stale_gradient_read"],
    "offtape_write_after_read": ["offtape_mutation"],
    "missing_requires_grad": ["missing_requires_grad"],
    "forward_outside_tape": ["tape_scope"],
    "grad_nonzero_at_backward": ["missing_tape_zero"],
    "stale_gradient_read": ["stale_gradient_read"],
    "multiple_backward": ["double_count"],
    "duplicate_launch": ["double_count"],
    "seed_scale": ["seed_mismatch"],
    "seed_accumulated": ["seed_mismatch"],
    "backward_disabled": ["backward_disabled"],
    "window_handoff": ["truncation"],
    _aliasing.FINDING_ID: ["stale_gradient_read"],
    _tape_sessions.FINDING_ID: ["double_count"],
}

_ATOMIC_PREFIXES = ("atomic_",)
_TILE_WRITES = ("tile_store", "tile_atomic_add")
_RNG_PREFIXES = ("rand", "sample_", "noise", "pnoise", "curlnoise", "poisson")
_ACTIVE = None  # the _Recorder of the trace in progress
_KERNEL_CACHE = {}  # id(kernel) -> (kernel, static info: source span, options, AST access maps)
_NEEDS_CACHE = {}  # (id(kernel), active argument paths) -> (kernel, paths whose values the adjoint reads)
_LOCK = threading.Lock()


# ----------------------------------------------------------------------------
# kernel source analysis
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
            # a user wp.func: follow it
            target = None
            if isinstance(fnode, ast.Name):
                target = glb.get(fnode.id)
            elif isinstance(fnode, ast.Attribute) and isinstance(fnode.value, ast.Name):
                mod = glb.get(fnode.value.id)
                target = getattr(mod, fnode.attr, None) if mod is not None and mod is not wp else None
            inner_py = getattr(target, "func", None)
            if depth < max_depth and callable(inner_py) and not isinstance(target, type):
                sub = _analyse_function(inner_py, depth + 1, max_depth)
                if sub is None:
                    continue
                try:
                    inner_params = list(inspect.signature(inner_py).parameters)
                except (TypeError, ValueError):
                    continue
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
    # reads: every remaining load of an aliased name
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
    return acc


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
    local_defs = {k: v for k, v in local_defs.items() if counts.get(k) == 1 and k not in tids}
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
    return {"tids": tids, "locals": local_defs, "reads": reads, "writes": writes, "calls": calls, "rng": rng,
            "rmw": sorted(rmw)}


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
    env = {}  # local -> (act, vals)
    need = set()

    class Unknown(Exception):
        pass

    def ev(n):
        """(active, vals: array paths whose values flow into n)."""
        if isinstance(n, ast.Constant):
            return False, frozenset()
        if isinstance(n, ast.Name):
            if n.id in env:
                return env[n.id]
            if n.id in aliases:  # a scalar argument or an array used whole
                return aliases[n.id] in active, frozenset()
            return False, frozenset()
        if isinstance(n, ast.Subscript):
            base, idx = _subscript_chain(n)
            for i in idx:
                _, iv = ev(i)
                need.update(iv)  # an index read from an array: its value decides what is read
            r = _root_path(base, aliases)
            if r is not None:
                return r in active, frozenset([r])
            a, v = ev(base)
            return a, v
        if isinstance(n, ast.Attribute):
            r = _root_path(n, aliases)
            if r is not None:
                return r in active, frozenset()
            return ev(n.value)
        if isinstance(n, ast.UnaryOp):
            return ev(n.operand)
        if isinstance(n, ast.BinOp):
            a, va = ev(n.left)
            b, vb = ev(n.right)
            if isinstance(n.op, (ast.Add, ast.Sub)):
                pass
            elif isinstance(n.op, ast.Mult):
                if b:
                    need.update(va)
                if a:
                    need.update(vb)
            elif isinstance(n.op, ast.Div):  # d/da = 1/b, d/db = -a/b^2
                if a:
                    need.update(vb)
                if b:
                    need.update(va | vb)
            else:  # ** % // @: the derivative reads both operands
                if a or b:
                    need.update(va | vb)
            return a or b, va | vb
        if isinstance(n, (ast.Compare, ast.BoolOp)):
            vals = frozenset()
            for c in ([n.left] + n.comparators) if isinstance(n, ast.Compare) else n.values:
                vals |= ev(c)[1]
            need.update(vals)  # a branch decided by these values
            return False, vals
        if isinstance(n, ast.IfExp):
            _, vt = ev(n.test)
            need.update(vt)
            a, va = ev(n.body)
            b, vb = ev(n.orelse)
            return a or b, va | vb
        if isinstance(n, ast.Call):
            name, _ = _func_name(n)
            res = [ev(x) for x in list(n.args) + [k.value for k in n.keywords]]
            act = any(r[0] for r in res)
            vals = frozenset().union(*[r[1] for r in res]) if res else frozenset()
            if name in ("tid",):
                return False, frozenset()
            if name in _LINEAR_CALLS:
                return act, vals
            if name and (name.startswith(_ATOMIC_PREFIXES) or name in _TILE_WRITES):
                return act, vals
            if act:
                need.update(vals)  # a nonlinear (or unknown) function of an active value
            return act, vals
        if isinstance(n, (ast.Tuple, ast.List)):
            res = [ev(x) for x in n.elts]
            return any(r[0] for r in res), frozenset().union(*[r[1] for r in res]) if res else frozenset()
        raise Unknown(type(n).__name__)

    def run(body):
        for st in body:
            if isinstance(st, ast.Assign):
                a, v = ev(st.value)
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        env[t.id] = (a, v)
                    elif isinstance(t, (ast.Tuple, ast.List)):
                        for e in t.elts:
                            if isinstance(e, ast.Name):
                                env[e.id] = (a, v)
                    else:
                        inner = t
                        while isinstance(inner, ast.Attribute):
                            inner = inner.value
                        if isinstance(inner, ast.Subscript):
                            base, idx = _subscript_chain(inner)
                            for i in idx:
                                need.update(ev(i)[1])
            elif isinstance(st, ast.AugAssign):
                fake = ast.BinOp(left=st.target if not isinstance(st.target, ast.Name) else st.target,
                                 op=st.op, right=st.value)
                a, v = ev(fake)
                if isinstance(st.target, ast.Name):
                    env[st.target.id] = (a, v)
            elif isinstance(st, ast.AnnAssign) and st.value is not None:
                if isinstance(st.target, ast.Name):
                    env[st.target.id] = ev(st.value)
            elif isinstance(st, ast.Expr):
                ev(st.value)
            elif isinstance(st, ast.If):
                need.update(ev(st.test)[1])
                run(st.body)
                run(st.orelse)
            elif isinstance(st, (ast.For, ast.While)):
                if isinstance(st, ast.For):
                    need.update(ev(st.iter)[1])
                else:
                    need.update(ev(st.test)[1])
                run(st.body)
                run(st.body)  # loop-carried locals
            elif isinstance(st, (ast.Pass, ast.Continue, ast.Break, ast.Return)):
                if isinstance(st, ast.Return) and st.value is not None:
                    ev(st.value)
            else:
                raise Unknown(type(st).__name__)

    try:
        run(fdef.body)
    except (Unknown, RecursionError):
        return None
    return need


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
# recorder
# ----------------------------------------------------------------------------


def _is_array(v):
    return isinstance(v, wp.array)


def _is_struct(v):
    try:
        return bool(wp.types.is_struct(v))
    except Exception:
        return False


def _struct_fields(v):
    names = []
    for attr in ("_cls", "cls"):  # the warp Struct (holds .vars); public name first where it has them
        cls = getattr(v, attr, None)
        if isinstance(getattr(cls, "vars", None), dict):
            names = list(cls.vars)
            break
    return [(n, getattr(v, n, None)) for n in names]


def _is_float_dtype(dtype):
    scalar = getattr(dtype, "_wp_scalar_type_", dtype)
    return scalar in (wp.float16, wp.float32, wp.float64)


def _scalar_value(v):
    """A JSON value standing for a non-array launch argument (numbers, Warp scalars and vectors)."""
    if isinstance(v, (bool, int, float)) or v is None:
        return v
    inner = getattr(v, "value", None)
    if isinstance(inner, (bool, int, float)):
        return inner
    try:
        if len(v) <= 16:
            return [float(c) for c in v]
    except Exception:
        pass
    return type(v).__name__


def _dtype_name(dtype):
    return getattr(dtype, "__name__", None) or str(dtype)


class _Recorder:
    def __init__(self, params, digests, max_digest_bytes, result_rtol, max_snapshot_bytes=256 << 20):
        self.digests = digests
        self.max_digest_bytes = int(max_digest_bytes)
        self.result_rtol = float(result_rtol)
        self.events = []
        self.arrays = {}  # id -> record (with "_obj")
        self.tapes = {}  # id -> {"label", "created", "epoch", "_obj"}
        self.kernels = {}
        self._by_kernel = {}
        self.by_label = {}
        self.struct_refs = {}  # launch seq -> [(arg, struct instance)]
        self.launch_ctx = {}  # launch seq -> (kernel info, dims, scalar args)
        self.snaps = {}  # (launch seq, array label) -> contents before the launch
        self.snap_bytes = 0
        self.max_snapshot_bytes = int(max_snapshot_bytes)
        self.snapshots_complete = True
        self.errors = []
        self.pre_grads = {}  # param name -> .grad contents when the call's first backward started
        self.adjoint_launches = 0
        self.params = {}
        self.busy = 0
        self.host_depth = 0
        self.launch_depth = 0
        self.backward_depth = 0
        self.active = []
        self.current_launch = None
        self.current_host = None
        self.backward_count = 0
        self.post_grads = []  # per backward: {name: ndarray copy}
        self._grad_get = None
        for name, a in (params or {}).items():
            if _is_array(a):
                self.params[name] = self.array(a, param=name)

    # -- helpers --------------------------------------------------------------
    def note(self, where, exc):
        """Remember an exception raised while recording (the user's call goes on untraced there)."""
        if len(self.errors) < 20:
            self.errors.append(f"{where}: {type(exc).__name__}: {exc}")

    def array(self, a, param=None, grad_of=None):
        rec = self.arrays.get(id(a))
        if rec is None:
            try:
                shape = [int(s) for s in a.shape]
            except Exception:
                shape = []
            rec = {
                "label": f"A{len(self.arrays)}",
                "shape": shape,
                "dtype": _dtype_name(a.dtype),
                "float": bool(_is_float_dtype(a.dtype)),
                "size": int(getattr(a, "size", 0) or 0),
                "requires_grad": bool(getattr(a, "requires_grad", False)),
                "param": param,
                "grad_of": grad_of,
                "_obj": a,
            }
            self.arrays[id(a)] = rec
            self.by_label[rec["label"]] = a
        else:
            if param is not None:
                rec["param"] = param
            if grad_of is not None and rec["grad_of"] is None:
                rec["grad_of"] = grad_of
        return rec["label"]

    def grad_of(self, a):
        self.busy += 1
        try:
            return self._grad_get(a)
        except Exception:
            return None
        finally:
            self.busy -= 1

    def summary(self, a):
        if not self.digests or a is None:
            return None
        self.busy += 1
        try:
            arr = np.ascontiguousarray(a.numpy())
            flat = arr.reshape(-1).view(np.uint8)
            if flat.size > self.max_digest_bytes > 0:
                step = int(math.ceil(flat.size / self.max_digest_bytes))
                sample = flat[::step]
            else:
                sample = flat
            h = hashlib.blake2b(sample.tobytes(), digest_size=8)
            h.update(str(arr.shape).encode())
            try:
                s = float(np.sum(arr, dtype=np.float64))
            except Exception:
                s = None
            return {"digest": h.hexdigest(), "sum": s, "size": int(arr.size)}
        except Exception:
            return None
        finally:
            self.busy -= 1

    def contents(self, a):
        self.busy += 1
        try:
            return np.array(a.numpy(), dtype=np.float64, copy=True)
        except Exception:
            return None
        finally:
            self.busy -= 1

    def tape(self, t):
        rec = self.tapes.get(id(t))
        if rec is None:
            rec = {"label": f"T{len(self.tapes)}", "created": None, "epoch": 0, "_obj": t}
            self.tapes[id(t)] = rec
        return rec

    def event(self, kind, **kw):
        ev = {"seq": len(self.events), "kind": kind}
        ev.update(kw)
        self.events.append(ev)
        return ev

    def kernel_info(self, kernel):
        cached = self._by_kernel.get(id(kernel))
        if cached is not None:
            return cached[1], cached[2]
        key = str(getattr(kernel, "key", None) or getattr(kernel, "__name__", "kernel"))
        if key in self.kernels:  # two kernel objects with one key: keep them apart
            key = f"{key}#{len(self.kernels)}"
        hit = _KERNEL_CACHE.get(id(kernel))
        if hit is not None and hit[0] is kernel:
            info = dict(hit[1])
            self.kernels[key] = info
            self._by_kernel[id(kernel)] = (kernel, key, info)
            return key, info
        pyfunc = getattr(kernel, "func", None)
        try:
            lines, start = inspect.getsourcelines(pyfunc)
            span = [int(start), int(start + len(lines) - 1)]
            fname = os.path.realpath(inspect.getsourcefile(pyfunc) or "")
        except (OSError, TypeError):
            span, fname = None, None
        opts = getattr(kernel, "options", None) or {}
        eb = opts.get("enable_backward")
        if eb is None:
            mod = getattr(kernel, "module", None)
            eb = (getattr(mod, "options", None) or {}).get("enable_backward")
        if eb is None:
            eb = getattr(wp.config, "enable_backward", True)
        try:
            argnames = list(inspect.signature(pyfunc).parameters)
        except (TypeError, ValueError):
            argnames = []
        access = _analyse_function(pyfunc) if pyfunc is not None else None
        index = _index_info(pyfunc) if pyfunc is not None else None
        mod_opts = getattr(getattr(kernel, "module", None), "options", None) or {}
        info = {
            "name": getattr(pyfunc, "__name__", key),
            "module": getattr(getattr(kernel, "module", None), "name", None),
            "file": fname,
            "lines": span,
            "enable_backward": bool(eb),
            "access": access,
            "kernel_option": opts.get("enable_backward"),
            "module_option": mod_opts.get("enable_backward"),
            "calls": list((index or {}).get("calls", [])),
            "rng": bool((index or {}).get("rng")),
            "rmw": list((index or {}).get("rmw", [])),
            "_argnames": argnames,
            "_index": index,
        }
        self.kernels[key] = info
        self._by_kernel[id(kernel)] = (kernel, key, info)
        _KERNEL_CACHE[id(kernel)] = (kernel, dict(info))
        return key, info

    # -- launches ----------------------------------------------------------
    def begin_launch(self, kernel, dim, inputs, outputs, record_tape, tiled):
        key, info = self.kernel_info(kernel)
        argnames = info["_argnames"]
        access = info["access"]
        args, reads, writes, structs = [], [], [], []

        def add_array(arg, field, a, role):
            path = field or arg
            fl = (access or {}).get(path)
            if access is None:
                fl = {"reads": True, "writes": True, "accumulates": False}
            elif fl is None:
                fl = {"reads": False, "writes": False, "accumulates": False}
            w = bool(fl["writes"]) or role == "output"
            label = self.array(a)
            entry = {
                "arg": arg,
                "field": field,
                "array": label,
                "role": role,
                "reads": bool(fl["reads"]),
                "writes": w,
                "accumulates": bool(fl["accumulates"]) and not (role == "output" and not fl["writes"]),
                "pre": self.summary(a),
            }
            if entry["reads"] and self.digests and (len(self.events), label) not in self.snaps:
                nbytes = int(getattr(a, "capacity", 0) or 0) or 8 * max(1, entry["pre"]["size"] if entry["pre"] else 1)
                if self.snap_bytes + nbytes <= self.max_snapshot_bytes:
                    c = self.contents(a)
                    if c is not None:
                        self.snaps[(len(self.events), label)] = c
                        self.snap_bytes += c.nbytes
                else:
                    self.snapshots_complete = False
            args.append(entry)
            if entry["reads"] and label not in reads:
                reads.append(label)
            if w and label not in writes:
                writes.append(label)

        def add_struct(arg, path, s, role, depth=0):
            for fname, fv in _struct_fields(s):
                p = f"{path}.{fname}"
                if _is_array(fv):
                    add_array(arg, p, fv, role)
                elif _is_struct(fv) and depth < 4:
                    add_struct(arg, p, fv, role, depth + 1)
                else:
                    args.append({"arg": arg, "field": p, "value": _scalar_value(fv)})

        values = [(v, "input") for v in (inputs or [])] + [(v, "output") for v in (outputs or [])]
        for i, (v, role) in enumerate(values):
            arg = argnames[i] if i < len(argnames) else f"arg{i}"
            if _is_array(v):
                add_array(arg, None, v, role)
            elif _is_struct(v):
                add_struct(arg, arg, v, role)
                structs.append((arg, v))
            else:
                args.append({"arg": arg, "value": _scalar_value(v)})
        try:
            dims = [int(d) for d in dim] if isinstance(dim, (list, tuple)) else [int(dim)]
        except Exception:
            dims = [str(dim)]
        ev = self.event(
            "launch",
            kernel=key,
            dim=dims,
            tiled=bool(tiled),
            record_tape=bool(record_tape),
            tape=None,
            epoch=None,
            active_tape=self.active[-1] if self.active else None,
            after_loss=None,
            args=args,
            reads=reads,
            writes=writes,
        )
        if structs:
            self.struct_refs[ev["seq"]] = structs
        scalars = {e["arg"]: e["value"] for e in args if "value" in e and e.get("field") is None}
        self.launch_ctx[ev["seq"]] = (info, dims, scalars)
        active = frozenset((e["field"] or e["arg"]) for e in args if "array" in e
                           and self.arrays[id(self.by_label[e["array"]])]["requires_grad"])
        ck = (id(kernel), active)
        if ck not in _NEEDS_CACHE:
            pyfunc = getattr(kernel, "func", None)
            needs = _values_needed(pyfunc, active) if pyfunc is not None else None
            _NEEDS_CACHE[ck] = (kernel, sorted(needs) if needs is not None else None)
        ev["needs"] = _NEEDS_CACHE[ck][1]
        return ev

    def end_launch(self, ev):
        """Forget the snapshots of a launch that no tape recorded."""
        if ev["tape"] is None:
            for e in ev["args"]:
                c = self.snaps.pop((ev["seq"], e.get("array")), None)
                if c is not None:
                    self.snap_bytes -= c.nbytes

    def read_changes(self, ev, now_cache):
        """{array label: {"changed", "read", "self_overlap"}} for the arrays launch ``ev`` read:
        how many of the elements it read differ now from when it ran (None without a
        snapshot), how many it read, and whether it also stored to elements it read."""
        info, dims, scalars = self.launch_ctx.get(ev["seq"], (None, [], {}))
        index = (info or {}).get("_index")
        out = {}
        for e in ev["args"]:
            if "array" not in e or not e["reads"]:
                continue
            A = e["array"]
            path = e["field"] or e["arg"]
            shape = self.arrays[id(self.by_label[A])]["shape"]
            snap = self.snaps.get((ev["seq"], A))
            rec = {"changed": None, "read": None, "self_overlap": None}
            try:
                if index is not None and path in index["reads"]:
                    rmask = _access_mask(shape, dims, index["reads"][path], index["tids"], scalars, index["locals"])
                else:
                    rmask = np.ones(tuple(shape), dtype=bool)
                rec["read"] = int(rmask.sum())
                if index is not None and e["writes"]:
                    if path in index["writes"]:
                        wmask = _access_mask(shape, dims, index["writes"][path], index["tids"], scalars, index["locals"])
                        rec["self_overlap"] = bool(np.any(wmask & rmask))
                elif index is not None:
                    rec["self_overlap"] = False
                if snap is not None:
                    now = now_cache.get(A)
                    if now is None:
                        now = now_cache[A] = self.contents(self.by_label[A])
                    if now is not None and now.shape == snap.shape:
                        diff = ~((now == snap) | (np.isnan(now) & np.isnan(snap)))
                        if diff.ndim > len(shape):
                            diff = diff.reshape(tuple(shape) + (-1,)).any(axis=-1)
                        rec["changed"] = int(np.count_nonzero(diff & rmask))
                        nz = snap != 0
                        if nz.ndim > len(shape):
                            nz = nz.reshape(tuple(shape) + (-1,)).any(axis=-1)
                        rec["changed_set_before"] = int(np.count_nonzero(diff & rmask & nz))
            except Exception:
                pass
            out[A] = rec
        return out

    def struct_bindings(self, arg, s, path=None, depth=0):
        """{field path: array label} of a struct instance now."""
        out = {}
        for fname, fv in _struct_fields(s):
            p = f"{path or arg}.{fname}"
            if _is_array(fv):
                out[p] = self.array(fv)
            elif _is_struct(fv) and depth < 4:
                out.update(self.struct_bindings(arg, fv, p, depth + 1))
        return out

    # -- finishing -----------------------------------------------------------
    def document(self, wall, error, result, coverage, functions):
        for ev in self.events:
            if ev["kind"] == "launch":
                ev["after_loss"] = None
        backwards = [e for e in self.events if e["kind"] == "backward"]
        for b in backwards:
            targets = {s["target"] for s in b["seeds"]}
            last = _last_write(self.events, targets, b["seq"])
            for ev in self.events[: b["seq"]]:
                if ev["kind"] == "launch" and ev["after_loss"] is None and ev["tape"] == b["tape"]:
                    ev["after_loss"] = last is not None and ev["seq"] > last
        arrays = {}
        for rec in self.arrays.values():
            arrays[rec["label"]] = {k: v for k, v in rec.items() if not k.startswith("_")}
        kernels = {k: {kk: vv for kk, vv in v.items() if not kk.startswith("_")} for k, v in self.kernels.items()}
        if coverage is not None:
            for info in kernels.values():
                f, span = info.get("file"), info.get("lines")
                if f in coverage and span:
                    coverage[f] = sorted(set(coverage[f]) | set(range(span[0], span[1] + 1)))
        return {
            "version": 1,
            "warp": str(getattr(wp.config, "version", "")),
            "python": sys.version.split()[0],
            "wall_s": wall,
            "error": error,
            "digests": bool(self.digests),
            "snapshots_complete": bool(self.snapshots_complete),
            "trace_errors": list(self.errors),
            "params": dict(self.params),
            "arrays": arrays,
            "kernels": kernels,
            "tapes": {r["label"]: {"created": r["created"]} for r in self.tapes.values()},
            "events": self.events,
            "result": self.result_check(result),
            "aliases": _aliasing.returned_aliases(result, self, rtol=self.result_rtol),
            "coverage": coverage,
            "functions": functions,
        }

    def result_check(self, result):
        if not isinstance(result, dict):
            return {"grads": None}
        out = {}
        last = self.post_grads[-1] if self.post_grads else {}
        for name in self.params:
            if name not in result:
                continue
            try:
                r = np.asarray(result[name], dtype=np.float64)
            except Exception:
                continue
            match = None
            for i, snap in enumerate(self.post_grads):
                s = snap.get(name)
                if s is not None and s.shape == r.shape and np.allclose(r, s, rtol=self.result_rtol, atol=0.0,
                                                                                 equal_nan=True):
                    match = i
            ratio = None
            s = last.get(name)
            if s is not None and s.shape == r.shape and np.any(s != 0) and np.all(np.isfinite(s)):
                c = float(np.vdot(r.ravel(), s.ravel()) / np.vdot(s.ravel(), s.ravel()))
                if np.allclose(r, c * s, rtol=self.result_rtol, atol=self.result_rtol * float(np.max(np.abs(s)))):
                    ratio = c
            pre = self.pre_grads.get(name)
            out[name] = {
                "matches_pre_backward": bool(pre is not None and pre.shape == r.shape and np.any(pre != 0)
                                             and np.allclose(r, pre, rtol=self.result_rtol, atol=0.0)
                                             and not (s is not None and np.allclose(r, s, rtol=self.result_rtol,
                                                                                    atol=0.0))),
                "sum": float(np.sum(r)),
                "size": int(r.size),
                "matches_backward": match,
                "ratio": ratio,
                "returned_zero": bool(not np.any(r != 0)),
                "backward_nonzero": bool(s is not None and np.any(s != 0)),
            }
        return {"grads": out}


def _last_write(events, targets, before):
    last = None
    for ev in events[:before]:
        if ev["kind"] == "launch" and set(ev["writes"]) & targets:
            last = ev["seq"]
        elif ev["kind"] == "host" and ev.get("dest") in targets:
            last = ev["seq"]
    return last


# ----------------------------------------------------------------------------
# wrappers
# ----------------------------------------------------------------------------


def _bind(names, args, kwargs):
    """The launch arguments by name (``names``: wp.launch's parameter names, in order)."""
    if len(args) > len(names) or "kernel" not in names:
        return None
    out = dict(zip(names, args))
    out.update(kwargs)
    if "kernel" not in out or "dim" not in out:
        return None
    return out


def _wrap_launch(orig, tiled, launch_sig):
    def launch(*args, **kwargs):
        st = _ACTIVE
        if st is None or st.busy or st.launch_depth:
            return orig(*args, **kwargs)
        if st.backward_depth or st.host_depth:
            if st.backward_depth:
                st.adjoint_launches += 1
            return orig(*args, **kwargs)
        a = _bind(launch_sig, args, kwargs)
        if a is None or a.get("adjoint"):
            return orig(*args, **kwargs)
        try:
            ev = st.begin_launch(a["kernel"], a["dim"], a.get("inputs"), a.get("outputs"),
                                 a.get("record_tape", True), tiled)
        except Exception as exc:  # noqa: BLE001 - tracing never breaks the user's launch
            st.note("launch", exc)
            return orig(*args, **kwargs)
        st.launch_depth += 1
        st.current_launch = ev
        try:
            return orig(*args, **kwargs)
        finally:
            st.launch_depth -= 1
            st.current_launch = None
            try:
                st.end_launch(ev)
            except Exception as exc:  # noqa: BLE001
                st.note("launch", exc)

    launch.__wrapped__ = orig
    return launch


def _host_op(op, orig):
    def wrapper(*args, **kwargs):
        st = _ACTIVE
        if st is None or st.busy or st.host_depth or st.backward_depth or st.launch_depth:
            return orig(*args, **kwargs)
        try:
            ev, dest = _begin_host(st, op, args, kwargs)
        except Exception as exc:  # noqa: BLE001 - tracing never breaks the user's call
            st.note(op, exc)
            return orig(*args, **kwargs)
        st.host_depth += 1
        prev, st.current_host = st.current_host, ev
        try:
            res = orig(*args, **kwargs)
        finally:
            st.host_depth -= 1
            st.current_host = prev
        try:
            if op == "clone" and _is_array(res):
                ev["dest"] = st.array(res)
                dest = res
            if _is_array(dest):
                ev["post"] = st.summary(dest)
        except Exception as exc:  # noqa: BLE001
            st.note(op, exc)
        return res

    wrapper.__wrapped__ = orig
    return wrapper


def _begin_host(st, op, args, kwargs):
    """Record a host write (before it runs); returns (event, destination array)."""
    dest = src = None
    value = None
    if op in ("zero_", "fill_", "assign"):
        dest = args[0]
        if op == "fill_":
            v = args[1] if len(args) > 1 else kwargs.get("value", 0)
            try:
                value = float(v)
            except (TypeError, ValueError):
                value = None
        if op == "assign":
            s = args[1] if len(args) > 1 else kwargs.get("src")
            src = s if _is_array(s) else None
    elif op == "copy":
        dest = args[0] if args else kwargs.get("dest")
        s = args[1] if len(args) > 1 else kwargs.get("src")
        src = s if _is_array(s) else None
    elif op == "clone":
        s = args[0] if args else kwargs.get("src")
        src = s if _is_array(s) else None
    ev = st.event(
        "host",
        op=op,
        dest=st.array(dest) if _is_array(dest) else None,
        src=st.array(src) if src is not None else None,
        value=value,
        active_tape=st.active[-1] if st.active else None,
        tape=None,
        epoch=None,
        pre=st.summary(dest) if _is_array(dest) else None,
        post=None,
    )
    return ev, dest


def _install(st):
    """Wrap the public API; return a list of (owner, name, original) to restore."""
    saved = []

    def patch(owner, name, new):
        had = name in owner.__dict__ if isinstance(owner, type) else hasattr(owner, name)
        saved.append((owner, name, owner.__dict__[name] if isinstance(owner, type) and had else getattr(owner, name, None), had))
        setattr(owner, name, new)

    orig_launch = wp.launch
    launch_sig = [p for p in inspect.signature(orig_launch).parameters]
    patch(wp, "launch", _wrap_launch(orig_launch, False, launch_sig))
    if hasattr(wp, "launch_tiled"):
        patch(wp, "launch_tiled", _wrap_launch(wp.launch_tiled, True, launch_sig))
    patch(wp, "copy", _host_op("copy", wp.copy))
    patch(wp, "clone", _host_op("clone", wp.clone))
    A = wp.array
    for op in ("zero_", "fill_", "assign"):
        if op in A.__dict__:
            patch(A, op, _host_op(op, A.__dict__[op]))

    if "numpy" in A.__dict__:
        o_numpy = A.__dict__["numpy"]

        def numpy(self, *a, **k):
            s = _ACTIVE
            if s is not None and not (s.busy or s.host_depth or s.launch_depth or s.backward_depth):
                rec = s.arrays.get(id(self))
                if rec is not None and rec["grad_of"] is not None:
                    s.event("grad_numpy", array=rec["grad_of"], grad=rec["label"],
                            before_backward=s.backward_count == 0)
            return o_numpy(self, *a, **k)

        patch(A, "numpy", numpy)

    prop = A.__dict__.get("grad")
    if isinstance(prop, property) and prop.fget is not None:
        fget = prop.fget
        st._grad_get = fget

        def grad_get(self):
            g = fget(self)
            s = _ACTIVE
            if s is None or s.busy or s.host_depth or s.launch_depth or s.backward_depth or g is None:
                return g
            try:
                owner = s.array(self)
                s.array(g, grad_of=owner)
                s.event("grad_read", array=owner, grad=s.array(g), before_backward=s.backward_count == 0)
            except Exception as exc:  # noqa: BLE001
                s.note("grad", exc)
            return g

        fset = prop.fset

        def grad_set(self, value):
            fset(self, value)
            s = _ACTIVE
            if s is None or s.busy or s.host_depth or s.launch_depth or s.backward_depth or not _is_array(value):
                return
            try:
                owner = s.array(self)
                s.event("grad_assign", array=owner, grad=s.array(value, grad_of=owner),
                        before_backward=s.backward_count == 0)
            except Exception as exc:  # noqa: BLE001
                s.note("grad", exc)

        patch(A, "grad", property(grad_get, grad_set if fset is not None else None, prop.fdel, prop.__doc__))
    else:
        st._grad_get = lambda a: getattr(a, "grad", None)

    T = wp.Tape
    o_init, o_enter, o_exit = T.__dict__["__init__"], T.__dict__["__enter__"], T.__dict__["__exit__"]
    o_rl, o_rf = T.__dict__["record_launch"], T.__dict__["record_func"]
    o_bw, o_zero, o_reset = T.__dict__["backward"], T.__dict__["zero"], T.__dict__["reset"]

    def __init__(self, *a, **k):
        o_init(self, *a, **k)
        s = _ACTIVE
        if s is not None and not s.busy:
            r = s.tape(self)
            r["created"] = len(s.events)
            s.event("tape_init", tape=r["label"])

    def __enter__(self, *a, **k):
        res = o_enter(self, *a, **k)
        s = _ACTIVE
        if s is not None and not s.busy:
            r = s.tape(self)
            s.active.append(r["label"])
            s.event("tape_enter", tape=r["label"])
            _tape_sessions.on_enter(r, self)
        return res

    def __exit__(self, *a, **k):
        try:
            return o_exit(self, *a, **k)
        finally:
            s = _ACTIVE
            if s is not None and not s.busy:
                r = s.tape(self)
                if r["label"] in s.active:
                    s.active.remove(r["label"])
                s.event("tape_exit", tape=r["label"])

    def record_launch(self, *a, **k):
        s = _ACTIVE
        if s is not None and not s.busy and not s.backward_depth:
            r = s.tape(self)
            if s.current_launch is not None:
                s.current_launch["tape"] = r["label"]
                s.current_launch["epoch"] = r["epoch"]
            elif s.current_host is not None:
                s.current_host["tape"] = r["label"]
                s.current_host["epoch"] = r["epoch"]
        if s is not None:
            s.busy += 1
        try:
            return o_rl(self, *a, **k)
        finally:
            if s is not None:
                s.busy -= 1

    def record_func(self, backward, arrays, *a, **k):
        s = _ACTIVE
        if s is not None and not s.busy and not s.backward_depth:
            r = s.tape(self)
            labels = [s.array(x) for x in (arrays or []) if _is_array(x)]
            host = s.current_host
            if host is not None:
                host["tape"] = r["label"]
                host["epoch"] = r["epoch"]
            s.event("record_func", tape=r["label"], epoch=r["epoch"], arrays=labels,
                    host=host["seq"] if host is not None else None)
        if s is not None:
            s.busy += 1
        try:
            return o_rf(self, backward, arrays, *a, **k)
        finally:
            if s is not None:
                s.busy -= 1

    def _tape_op(kind, orig):
        def op(self, *a, **k):
            s = _ACTIVE
            if s is None or s.busy or s.host_depth or s.backward_depth:
                return orig(self, *a, **k)
            r = s.tape(self)
            labels = []
            for key in list(getattr(self, "gradients", {}) or {}):
                if _is_array(key):
                    labels.append(s.array(key))
            s.event(kind, tape=r["label"], arrays=labels)
            s.host_depth += 1
            try:
                return orig(self, *a, **k)
            finally:
                s.host_depth -= 1
                if kind == "tape_reset":
                    r["epoch"] += 1

        return op

    def backward(self, loss=None, grads=None, *a, **k):
        s = _ACTIVE
        if s is None or s.busy or s.backward_depth or s.host_depth or s.launch_depth:
            return o_bw(self, loss, grads, *a, **k)
        try:
            r = s.tape(self)
            ev = _begin_backward(s, r, loss, grads)
            _tape_sessions.on_backward(s, r, self, ev)  # launches carried over from an earlier recording
        except Exception as exc:  # noqa: BLE001 - tracing never breaks the user's backward
            s.note("backward", exc)
            return o_bw(self, loss, grads, *a, **k)
        s.backward_count += 1
        s.backward_depth += 1
        s.adjoint_launches = 0
        try:
            return o_bw(self, loss, grads, *a, **k)
        finally:
            s.backward_depth -= 1
            try:
                _end_backward(s, ev)
            except Exception as exc:  # noqa: BLE001
                s.note("backward", exc)

    patch(T, "__init__", __init__)
    patch(T, "__enter__", __enter__)
    patch(T, "__exit__", __exit__)
    patch(T, "record_launch", record_launch)
    patch(T, "record_func", record_func)
    patch(T, "backward", backward)
    patch(T, "zero", _tape_op("tape_zero", o_zero))
    patch(T, "reset", _tape_op("tape_reset", o_reset))
    return saved


def _end_backward(s, ev):
    """After a backward: adjoint launch count, params' .grad and the seed buffers."""
    ev["adjoint_launches"] = s.adjoint_launches
    snaps, post = {}, {}
    for name, label in s.params.items():
        p = _obj(s, label)
        g = s.grad_of(p) if p is not None else None
        if g is not None:
            snaps[name] = s.contents(g)
            post[name] = s.summary(g)
    s.post_grads.append(snaps)
    ev["post_grads"] = post
    for seed in ev["seeds"]:
        buf = _obj(s, seed["seed"]) if seed.get("seed") else None
        summ = s.summary(buf) if buf is not None else None
        seed["post_sum"] = summ["sum"] if summ else None


def _obj(st, label):
    return st.by_label.get(label)


def _seed_entry(st, mode, target, seed_arr, constant_one=False):
    tsum = st.summary(target) if target is not None else None
    tc = st.contents(target) if target is not None else None
    entry = {"mode": mode, "target": st.array(target) if target is not None else None,
             "seed": st.array(seed_arr) if seed_arr is not None else None,
             "target_sum": float(np.sum(tc)) if tc is not None else (tsum or {}).get("sum"),
             "target_mean": float(np.mean(tc)) if tc is not None and tc.size else None,
             "target_size": int(tc.size) if tc is not None else None}
    if constant_one:
        n = int(getattr(target, "size", 1) or 1)
        entry.update(size=n, sum=float(n), min=1.0, max=1.0, all_ones=True, constant=1.0)
        return entry
    sc = st.contents(seed_arr) if seed_arr is not None else None
    if sc is None or sc.size == 0:
        entry.update(size=0, sum=None, min=None, max=None, all_ones=False, constant=None)
        return entry
    mn, mx = float(np.min(sc)), float(np.max(sc))
    entry.update(size=int(sc.size), sum=float(np.sum(sc)), min=mn, max=mx,
                 all_ones=bool(mn == 1.0 and mx == 1.0), constant=mn if mn == mx else None)
    return entry


def _begin_backward(st, r, loss, grads):
    label, epoch = r["label"], r["epoch"]
    on_tape = []
    for ev in st.events:
        if ev["kind"] == "launch" and ev["tape"] == label and ev["epoch"] == epoch:
            for e in ev["args"]:
                if "array" in e and e["array"] not in on_tape:
                    on_tape.append(e["array"])
    seeds = []
    if loss is not None and _is_array(loss):
        seeds.append(_seed_entry(st, "loss", loss, None, constant_one=True))
    if grads:
        for a, g in grads.items():
            if _is_array(a):
                seeds.append(_seed_entry(st, "grads", a, g if _is_array(g) else None))
    if st.backward_count == 0:
        for name, lab in st.params.items():
            g = st.grad_of(_obj(st, lab))
            if g is not None:
                st.pre_grads[name] = st.contents(g)
    grad_nonzero, req = {}, {}
    for rec in list(st.arrays.values()):
        a = rec["_obj"]
        req[rec["label"]] = bool(getattr(a, "requires_grad", False))
        if rec["grad_of"] is not None:
            continue
        g = st.grad_of(a)
        if g is not None:
            st.array(g, grad_of=rec["label"])
            c = st.contents(g)
            grad_nonzero[rec["label"]] = bool(c is not None and np.any(c != 0))
    if loss is None and not grads:
        attached = {e["array"] for e in st.events if e["kind"] == "grad_assign"}
        for lab in on_tape:
            a = _obj(st, lab)
            if st.arrays[id(a)]["param"] is None and (grad_nonzero.get(lab) or lab in attached):
                seeds.append(_seed_entry(st, "preset", a, st.grad_of(a)))
    pre = {lab: st.summary(_obj(st, lab)) for lab in on_tape}
    rebound = []
    for ev in st.events:
        if ev["kind"] != "launch" or ev["tape"] != label or ev["epoch"] != epoch:
            continue
        then = {e["field"]: e["array"] for e in ev["args"] if e.get("field") and "array" in e}
        for arg, sobj in st.struct_refs.get(ev["seq"], []):
            for path, now in st.struct_bindings(arg, sobj).items():
                if path in then and then[path] != now:
                    rebound.append({"launch": ev["seq"], "field": path, "then": then[path], "now": now})
    first_read, writers = {}, {}
    for ev in st.events:
        if ev["kind"] == "launch" and ev["tape"] == label and ev["epoch"] == epoch:
            for lab in ev["reads"]:
                first_read.setdefault(lab, ev["seq"])
    for ev in st.events:
        if ev["kind"] == "launch":
            written, how = ev["writes"], ("recorded launch" if ev["tape"] == label and ev["epoch"] == epoch
                                          else "unrecorded launch")
        elif ev["kind"] == "host" and ev.get("dest"):
            written, how = [ev["dest"]], ("recorded host call" if ev.get("tape") == label else "host call")
        else:
            continue
        for lab in written:
            if lab in first_read and ev["seq"] >= first_read[lab]:
                writers.setdefault(lab, []).append({"event": ev["seq"], "by": how})
    now_cache, read_changes = {}, {}
    for ev in st.events:
        if ev["kind"] == "launch" and ev["tape"] == label and ev["epoch"] == epoch:
            read_changes[str(ev["seq"])] = st.read_changes(ev, now_cache)
    return st.event("backward", tape=label, epoch=epoch, rebound=rebound, read_changes=read_changes,
                    writers=writers,
                    loss=st.array(loss) if _is_array(loss) else None, seeds=seeds, pre=pre,
                    grad_nonzero=grad_nonzero, requires_grad=req, adjoint_launches=0, post_grads=None)


# ----------------------------------------------------------------------------
# coverage
# ----------------------------------------------------------------------------


class _Coverage:
    """Executed lines of .py files under one folder, with sys.monitoring or settrace."""

    def __init__(self, root):
        self.root = os.path.realpath(str(root)) + os.sep
        self.lines = {}
        self.functions = {}
        self._inside = {}
        self._mon = None
        self._old = None
        self._old_thread = None

    def _under(self, filename):
        r = self._inside.get(filename)
        if r is None:
            real = os.path.realpath(filename) if filename and not filename.startswith("<") else ""
            r = real if real.startswith(self.root) and real.endswith(".py") else ""
            self._inside[filename] = r
        return r

    def _enter(self, code, line):
        f = self._under(code.co_filename)
        if not f:
            return None
        name = getattr(code, "co_qualname", code.co_name)
        self.functions.setdefault((f, name, code.co_firstlineno), None)
        return f

    def start(self):
        mon = getattr(sys, "monitoring", None)
        if mon is not None:
            for tool in (3, 4, 5):  # 0-2 are reserved for debuggers, coverage and profilers
                try:
                    mon.use_tool_id(tool, "defects4warp-trace")
                except ValueError:
                    continue
                self._mon = tool
                break
        if self._mon is not None:
            mon = sys.monitoring
            E = mon.events

            def py_start(code, offset):
                if self._enter(code, code.co_firstlineno) is None:
                    return mon.DISABLE
                return None

            def line(code, lineno):
                f = self._under(code.co_filename)
                if not f:
                    return mon.DISABLE
                self.lines.setdefault(f, set()).add(lineno)
                return None

            mon.register_callback(self._mon, E.PY_START, py_start)
            mon.register_callback(self._mon, E.LINE, line)
            mon.set_events(self._mon, E.PY_START | E.LINE)
            return
        self._old = sys.gettrace()
        self._old_thread = getattr(threading, "gettrace", lambda: None)()

        def local(frame, event, arg):
            if event == "line":
                self.lines.setdefault(self._under(frame.f_code.co_filename), set()).add(frame.f_lineno)
            return local

        def glob(frame, event, arg):
            if event != "call":
                return None
            f = self._enter(frame.f_code, frame.f_lineno)
            if f is None:
                return None
            return local

        self._glob = glob
        threading.settrace(glob)
        sys.settrace(glob)
        # frames already running (the caller's) are not traced; fn's own frame is new

    def stop(self):
        if self._mon is not None:
            mon = sys.monitoring
            mon.set_events(self._mon, 0)
            mon.register_callback(self._mon, mon.events.PY_START, None)
            mon.register_callback(self._mon, mon.events.LINE, None)
            mon.free_tool_id(self._mon)
            mon.restart_events()
            return
        sys.settrace(self._old)
        threading.settrace(self._old_thread)

    def result(self):
        cov = {f: sorted(v) for f, v in self.lines.items() if f}
        funcs = [{"file": f, "name": n, "line": ln} for (f, n, ln) in sorted(self.functions)]
        return cov, funcs


# ----------------------------------------------------------------------------
# public entry points
# ----------------------------------------------------------------------------



def restore_patches(saved) -> None:
    """Undo attribute patches recorded as ``(owner, name, original, had_attribute)``
    tuples, newest first: the original is set back, or the attribute removed
    where the owner had none (shared with :mod:`defects4warp.capture`)."""
    for owner, name, orig, had in reversed(saved):
        if had:
            setattr(owner, name, orig)
        else:
            try:
                delattr(owner, name)
            except AttributeError:
                pass


def trace_call(fn, *, params=None, digests=True, coverage_root=None, max_digest_bytes=1 << 20,
               max_snapshot_bytes=256 << 20, reraise=True, result_rtol=1e-6):
    """Run ``fn()`` with Warp's public API wrapped and return its result and a trace.

    Parameters
    ----------
    fn : callable
        Called with no arguments, e.g. ``problem.gradient``.
    params : dict[str, wp.array], optional
        The problem's ``params``; they get the first array labels and mark the
        sources of the param->loss dataflow path.
    digests : bool, default True
        Digest array contents (blake2b-64 of the bytes) before every launch,
        around every host write and before every ``backward()``, and keep the
        element snapshots. Without them write-after-read findings rely on
        write events alone (a trajectory array extended step by step is then
        reported, measured on tests/programs/trace_trajectory) and
        ``seed_accumulated`` cannot be told from ``seed_scale``.
    coverage_root : str or path, optional
        When a folder, record executed lines of ``.py`` files under it
        (``sys.monitoring`` on Python >= 3.12, ``sys.settrace`` and
        ``threading.settrace`` before) and the Python functions entered.
    max_digest_bytes : int, default 1 MiB
        Above this many bytes an array is digested on an evenly strided
        sample of this many bytes (its float64 sum is still exact).
    max_snapshot_bytes : int, default 256 MiB
        Budget for full copies of the arrays each recorded launch reads, taken
        just before it runs; with them a write-after-read counts only when an
        element the launch read (its index expressions evaluated with the
        launch's dim and integer arguments) differs at ``backward()``. Past the
        budget the whole-array digest decides (``trace["snapshots_complete"]``
        is then False).
    reraise : bool, default True
        Re-raise an exception of ``fn`` after restoring Warp (the trace is
        attached to it as ``exc.trace``); when False return ``(None, trace)``
        with ``trace["error"]`` set.
    result_rtol : float, default 1e-6
        Relative tolerance (``np.allclose``) for comparing returned gradients
        with the ``.grad`` contents each ``backward()`` left.

    Returns
    -------
    tuple
        ``(fn(), trace)``; ``trace`` is the document described in the module
        docstring.

    Raises
    ------
    RuntimeError
        If a trace is already in progress in this process.
    Exception
        Whatever ``fn`` raised, when ``reraise``.
    """
    global _ACTIVE
    with _LOCK:
        if _ACTIVE is not None:
            raise RuntimeError("trace_call: a trace is already in progress in this process")
        st = _Recorder(params, digests, max_digest_bytes, result_rtol, max_snapshot_bytes)
        _ACTIVE = st
    saved = []
    cov = None
    error = None
    result = None
    exc = None
    t0 = time.perf_counter()
    try:
        saved = _install(st)
        if coverage_root is not None and os.path.isdir(str(coverage_root)):
            cov = _Coverage(coverage_root)
            cov.start()
        try:
            result = fn()
        finally:
            if cov is not None:
                cov.stop()
    except BaseException as e:  # noqa: BLE001 - restored below, re-raised on request
        exc = e
        error = f"{type(e).__name__}: {e}"
    finally:
        restore_patches(saved)
        with _LOCK:
            _ACTIVE = None
    wall = time.perf_counter() - t0
    coverage, functions = cov.result() if cov is not None else (None, [])
    doc = st.document(wall, error, result if exc is None else None, coverage, functions)
    if exc is not None:
        if reraise or not isinstance(exc, Exception):
            try:
                exc.trace = doc
            except Exception:
                pass
            raise exc
        return None, doc
    return result, doc


# ----------------------------------------------------------------------------
# findings
# ----------------------------------------------------------------------------


def _edges(events, before):
    """Dataflow edges (event, reads, writes) of launches and host ops before ``before``."""
    out = []
    for ev in events[:before]:
        if ev["kind"] == "launch":
            out.append((ev, set(ev["reads"]), set(ev["writes"])))
        elif ev["kind"] == "host" and ev.get("dest") is not None:
            reads = {ev["src"]} if ev.get("src") else set()
            out.append((ev, reads, {ev["dest"]}))
    return out


def _path(trace, b):
    """On-path events and arrays for backward event ``b``."""
    params = set(trace["params"].values())
    sinks = {s["target"] for s in b["seeds"] if s["target"]}
    edges = _edges(trace["events"], b["seq"])
    tainted, t_before = set(params), {}
    for ev, r, w in edges:
        t_before[ev["seq"]] = r & tainted
        if r & tainted:
            tainted |= w
    needed, n_after = set(sinks), {}
    for ev, r, w in reversed(edges):
        hit = (w & needed) - params
        n_after[ev["seq"]] = hit
        if hit:
            needed |= r
    on, arrays = [], set()
    for ev, r, w in edges:
        tb, na = t_before[ev["seq"]], n_after[ev["seq"]]
        if tb and na:
            on.append(ev)
            arrays |= tb | na
    return on, arrays


def _launch_signature(ev):
    """Kernel, dim, argument identities/values and the digests of what the launch read."""
    args = tuple((e["arg"], e.get("field"), e.get("array"), repr(e.get("value"))) for e in ev["args"])
    reads = tuple((e["array"], (e.get("pre") or {}).get("digest")) for e in ev["args"] if "array" in e and e["reads"])
    return (ev["kernel"], tuple(ev["dim"]), args, reads)


def _release(version):
    try:
        return tuple(int(x) for x in str(version).split(".")[:2])
    except ValueError:
        return (99, 0)


def _label_key(label):
    try:
        return int(str(label)[1:])
    except ValueError:
        return 0


def _close(a, b, rtol):
    return a is not None and b is not None and abs(a - b) <= rtol * max(abs(a), abs(b), 1e-300)


def _finding(fid, detail, **data):
    return {"id": fid, "classes": list(FINDING_CLASSES[fid]), "detail": detail, "data": data}


def trace_findings(trace, *, objective=None, rtol=1e-4):
    """Direct evidence in a trace document, as a list of findings.

    Parameters
    ----------
    trace : dict
        The document returned by :func:`trace_call`.
    objective : float, optional
        ``problem.objective()`` at the same params; needed for ``seed_scale``
        (a constant seed of c over N > 1 elements is consistent only when the
        objective equals c times the seeded array's sum).
    rtol : float, default 1e-4
        Relative tolerance when matching the objective with a reduction of
        the seeded array (the candidate reductions differ by a factor N >= 2,
        so the tolerance only has to absorb float32 summation order).

    Returns
    -------
    list of dict
        ``{"id", "classes", "detail", "data"}`` per finding (ids and classes in
        the module docstring), sorted by id then detail; ``[]`` when nothing
        fires. Every finding is a fact measured in this run.
    """
    events = trace["events"]
    arrays = trace["arrays"]
    kernels = trace["kernels"]
    params = trace["params"]
    plabel = {v: k for k, v in params.items()}
    found = {}

    def add(f, key):
        found.setdefault((f["id"], key), f)

    def kname(ev):
        return kernels.get(ev["kernel"], {}).get("name", ev["kernel"])

    def where(ev):
        info = kernels.get(ev["kernel"], {})
        if info.get("file") and info.get("lines"):
            return f"{os.path.basename(info['file'])}:{info['lines'][0]}"
        return "?"

    def writer_name(ev):
        if ev["kind"] == "launch":
            return f"launch of {kname(ev)} (event {ev['seq']})"
        return f"{ev['op']} (event {ev['seq']})"

    def writer_label(ev):
        return f"launch of {kname(ev)}" if ev["kind"] == "launch" else f"{ev['op']}()"

    def producer_name(on, A):
        for ev in on:
            if ev["kind"] == "launch":
                for e in ev["args"]:
                    if e.get("array") == A and e["writes"]:
                        return f"array {A} ({kname(ev)}.{e['field'] or e['arg']})"
        return f"array {A}"

    groups_war = {}

    def consumed_grad(a, after):
        """Whether the .grad of array a is read (property, .numpy(), copied) after event ``after``."""
        for ev in events[after + 1:]:
            if ev["kind"] in ("grad_read", "grad_numpy") and ev["array"] == a:
                return True
            if ev["kind"] == "host" and ev.get("src") and arrays.get(ev["src"], {}).get("grad_of") == a:
                return True
        return False

    def group(fid, key, how, A, reader, writer, **data):
        """Aggregate one instance (array A read at event reader, written at event writer)."""
        g = groups_war.get((fid, key))
        if g is None:
            g = groups_war[(fid, key)] = _finding(fid, how, arrays=[], readers=[], writers=[], count=0, **data)
        d = g["data"]
        d["count"] += 1
        for k, v in (("arrays", A), ("readers", reader), ("writers", writer)):
            if v is not None and v not in d[k] and len(d[k]) < 20:
                d[k].append(v)

    backwards = [e for e in events if e["kind"] == "backward"]
    paths = {b["seq"]: _path(trace, b) for b in backwards}
    release = _release(trace.get("warp"))

    def zeroed(p, lo, hi):
        """Whether param label p had its grad zeroed by an event in (lo, hi)."""
        for ev in events[lo + 1 : hi]:
            if ev["kind"] in ("tape_zero", "tape_reset") and p in ev["arrays"]:
                return True
            if ev["kind"] == "host" and ev.get("dest") and arrays.get(ev["dest"], {}).get("grad_of") == p:
                if ev["op"] in ("zero_", "fill_", "assign"):
                    return True
        return False

    for b in backwards:
        on, path_arrays = paths[b["seq"]]
        T, E = b["tape"], b["epoch"]
        on_rec = [e for e in on if e["kind"] == "launch" and e["tape"] == T and e["epoch"] == E]
        loss_seq = _last_write(events, {s["target"] for s in b["seeds"]}, b["seq"])

        # write-after-read
        for L in on_rec:
            for entry in L["args"]:
                if "array" not in entry or not entry["reads"]:
                    continue
                A = entry["array"]
                if any(s["target"] == A for s in b["seeds"]):
                    continue
                needs = L.get("needs")
                if needs is not None and (entry["field"] or entry["arg"]) not in needs and release >= (1, 13):
                    continue  # the adjoint does not read this value (affine use with constant coefficients)
                pre_then = entry.get("pre")
                pre_now = (b.get("pre") or {}).get(A)
                rc = ((b.get("read_changes") or {}).get(str(L["seq"])) or {}).get(A) or {}
                if rc.get("changed") is not None:
                    if rc["changed"] == 0:
                        continue  # every element it read is as it was
                elif trace["digests"]:
                    if not pre_then or not pre_now or pre_then["digest"] == pre_now["digest"]:
                        continue
                self_store = any(e2.get("array") == A and e2["writes"] and not e2["accumulates"]
                                 for e2 in L["args"])
                if rc.get("self_overlap") is not None:
                    self_store = self_store and rc["self_overlap"]
                if (self_store and rc.get("changed_set_before") == 0
                        and (entry["field"] or entry["arg"]) not in kernels.get(L["kernel"], {}).get("rmw", [])):
                    # it stored into elements that held zeros before it ran (a buffer it fills, e.g. a
                    # prefix product re-reading its own stores): not a read of old contents
                    self_store = False
                writers = []
                if self_store:
                    writers.append(L)
                for W in events[L["seq"] + 1 : b["seq"]]:
                    if W["kind"] == "launch" and A in W["writes"]:
                        writers.append(W)
                    elif W["kind"] == "host" and W.get("dest") == A:
                        writers.append(W)
                if not writers:
                    continue
                W = writers[0]
                name = entry["field"] or entry["arg"]
                if W is L:
                    fid = "struct_write_after_read" if entry["field"] else "inplace_read_write"
                    how = (f"kernel {kname(L)} ({where(L)}) reads and stores {name} in one launch; the contents "
                           f"at backward differ from those it read")
                elif (W.get("tape") == T and W.get("epoch") == E) or W.get("active_tape") == T:
                    # recorded on T, or a host write / record_tape=False launch inside T's recording
                    # (e.g. zero_() of a force buffer at each substep): part of the forward pass
                    if entry["field"] or (W["kind"] == "launch" and any(
                            e2.get("array") == A and e2.get("field") for e2 in W["args"])):
                        fid = "struct_write_after_read"
                    elif loss_seq is not None and W["seq"] > loss_seq:
                        fid = "write_after_loss"
                    else:
                        fid = "write_after_read"
                    rec_word = "recorded" if W.get("tape") == T else f"unrecorded (inside the recording of {T})"
                    how = (f"{name} read by {kname(L)} ({where(L)}) on tape {T} is written by a later {rec_word} "
                           f"{writer_label(W)}" + (" after the loss was produced" if fid == "write_after_loss" else "")
                           + " before backward")
                else:
                    fid = "offtape_write_after_read"
                    how = (f"{name} read by {kname(L)} ({where(L)}) on tape {T} is changed by an unrecorded "
                           f"{writer_label(W)} before backward")
                if not arrays.get(A, {}).get("float", True) and kernels.get(L["kernel"], {}).get("rng"):
                    fid = "rng_state_overwrite"
                    how = (f"random-number state {name} ({arrays[A].get('dtype')}) read by {kname(L)} ({where(L)}) "
                           f"on tape {T} is overwritten before backward (by {writer_label(W)}), so the replay "
                           f"draws other random numbers")
                group(fid, (kname(L), name, writer_label(W)), how, A, L["seq"], W["seq"],
                      field=entry["field"], tape=T, kernel=kname(L), writer_kind=W["kind"],
                      inplace=W is L, loss_event=loss_seq, writer_recorded=W.get("tape") == T)
                g = groups_war[(fid, (kname(L), name, writer_label(W)))]["data"]
                if rc.get("changed") is not None:
                    g["changed_elements"] = g.get("changed_elements", 0) + rc["changed"]

        # struct fields rebound on the host after a recorded launch
        on_seqs = {e["seq"] for e in on_rec}
        for r in b.get("rebound") or []:
            L = events[r["launch"]]
            if r["launch"] not in on_seqs and not (set(L["reads"]) & path_arrays):
                continue
            group("struct_field_rebound", (kname(L), r["field"]),
                  f"struct field {r['field']} passed to {kname(L)} ({where(L)}) on tape {T} was rebound on the host "
                  f"to another array after the launch was recorded, so backward replays it with the new array",
                  r["then"], r["launch"], None, field=r["field"], tape=T, kernel=kname(L), now=r["now"])

        # requires_grad on the path, for arrays the tape's own launches touch (upstream of the tape
        # is the business of forward_outside_tape / window_handoff)
        on_tape_arrays = {a for e in on_rec for a in e["reads"] + e["writes"]}
        for A in sorted(path_arrays & on_tape_arrays, key=_label_key):
            rec = arrays.get(A, {})
            if rec.get("float") and not b["requires_grad"].get(A, rec.get("requires_grad")):
                who = producer_name(on, A)
                group("missing_requires_grad", (who.split("(")[-1],),
                      f"{who} lies on the dataflow path from the params to the seeded array but has "
                      f"requires_grad=False at backward", A, None, None)

        # launches on the path outside the tape / on other tapes. The tape's entry arrays are the
        # path arrays its launches read but no launch of it wrote; when the user consumes their .grad
        # after this backward (carry = wp.clone(start.grad), grads={end: carry}), the adjoint is
        # carried by hand (checkpointed windows) and the part before the tape is not lost.
        written_on_T = {a for e in on_rec for a in e["writes"]}
        entries = {a for e in on_rec for a in e["reads"] if a in path_arrays and a not in written_on_T
                   and a not in plabel}
        carried = bool(entries) and all(consumed_grad(a, b["seq"]) for a in entries)
        several_tapes = len({(x["tape"], x["epoch"]) for x in backwards}) > 1
        other = {}
        for ev in on:
            if ev["kind"] != "launch":
                continue
            if ev["tape"] is None and carried:
                continue
            if ev["tape"] is None and several_tapes:
                # windows on their own tapes, the state between them recomputed or handed over off-tape
                other.setdefault((None, None), []).append(ev["seq"])
            elif ev["tape"] is None:
                key = ("forward_outside_tape", kname(ev))
                if key not in found:
                    add(_finding("forward_outside_tape",
                                 f"launch of {kname(ev)} ({where(ev)}, event {ev['seq']}) lies on the param->loss path "
                                 f"but was recorded on no tape (record_tape={ev['record_tape']}, active tape "
                                 f"{ev['active_tape']}); backward on {T} (event {b['seq']}) does not reach it",
                                 launches=[], kernel=kname(ev), record_tape=ev["record_tape"],
                                 active_tape=ev["active_tape"], backward=b["seq"]), kname(ev))
                ls = found[key]["data"]["launches"]
                if ev["seq"] not in ls and len(ls) < 20:
                    ls.append(ev["seq"])
            elif (ev["tape"], ev["epoch"]) != (T, E):
                other.setdefault((ev["tape"], ev["epoch"]), []).append(ev["seq"])
            kinfo = kernels.get(ev["kernel"], {})
            if (ev["tape"] == T and ev["epoch"] == E and kinfo.get("enable_backward", True)
                    and kinfo.get("module_option") is False and kinfo.get("calls")
                    and _release(trace.get("warp")) < (1, 18)):
                add(_finding("backward_disabled",
                             f"kernel {kname(ev)} ({where(ev)}) enables backward but its module disables it; before "
                             f"Warp 1.18 the kernel option does not reach the functions it calls "
                             f"({', '.join(kinfo['calls'][:3])}), so they have no adjoint on Warp {trace.get('warp')}",
                             kernel=kname(ev), launch=ev["seq"], functions=kinfo["calls"]), ev["kernel"])
            if ev["tape"] == T and ev["epoch"] == E and not kinfo.get("enable_backward", True):
                add(_finding("backward_disabled",
                             f"kernel {kname(ev)} ({where(ev)}) lies on the param->loss path on tape {T} but was "
                             f"built with enable_backward=False",
                             kernel=kname(ev), launch=ev["seq"]), ev["kernel"])
        for (U, EU), seqs in sorted(other.items(), key=lambda kv: str(kv[0])):
            later = [x for x in backwards if x["tape"] == U and x["epoch"] == EU and x["seq"] > b["seq"]]
            if later or carried:
                continue
            handoff = sorted({a for s in seqs for a in events[s]["writes"] if a in path_arrays}, key=_label_key)
            if ("window_handoff", "all") in found:
                d = found[("window_handoff", "all")]["data"]
                d["pairs"].append([T, U])
                continue
            add(_finding("window_handoff",
                         f"the param->loss path of backward on {T} (event {b['seq']}) starts in launches recorded on "
                         + (f"tape {U}" if U is not None else "no tape (the state between the windows)")
                         + (f" (before its reset {EU})" if U == T else "") +
                         f" (events {seqs[:5]}); no later backward carries the adjoint of the state handed "
                         f"over ({handoff[:5]}) into them",
                         tape=T, other_tape=U, other_epoch=EU, launches=seqs[:20], handoff=handoff[:20],
                         backward=b["seq"], pairs=[[T, U]]),
                "all")

        # duplicate recordings
        groups = {}
        for ev in on_rec:
            groups.setdefault(_launch_signature(ev), []).append(ev["seq"])
        for sig, seqs in groups.items():
            if len(seqs) > 1 and ("duplicate_launch", sig[0]) not in found:
                add(_finding("duplicate_launch",
                             f"launch of {kernels.get(sig[0], {}).get('name', sig[0])} with the same arrays and the same "
                             f"input contents is recorded {len(seqs)} times on tape {T} (events {seqs})",
                             kernel=sig[0], launches=seqs, tape=T), sig[0])

        # a backward whose every seed is zero
        if b["seeds"] and all(x["constant"] == 0.0 for x in b["seeds"]):
            add(_finding("zero_seed",
                         f"backward (event {b['seq']}) on tape {T} is seeded only with zeros "
                         f"({', '.join(str(x['seed'] or x['target']) for x in b['seeds'])}): a seed buffer zeroed "
                         f"earlier (consumed by a backward from Warp 1.13, or by tape.zero()) and not refilled "
                         f"gives a zero gradient",
                         seeds=[x["seed"] for x in b["seeds"]], targets=[x["target"] for x in b["seeds"]],
                         modes=[x["mode"] for x in b["seeds"]], backward=b["seq"]), b["seq"])

        # seeds
        for s in b["seeds"]:
            buf = s["seed"]
            acc = None
            if buf is not None:
                for ev in events[: b["seq"]]:
                    if ev["kind"] == "launch":
                        for e in ev["args"]:
                            if e.get("array") == buf and e["writes"] and e["accumulates"]:
                                pre = e.get("pre") or {}
                                if pre.get("sum"):
                                    acc = (ev["seq"], pre["sum"])
                    if acc:
                        break
            factor = None
            red = None
            if s["constant"] and (s["target_size"] or 0) > 1 and objective is not None:
                c, S, M = s["constant"], s["target_sum"], s["target_mean"]
                if not _close(c * S, objective, rtol):
                    if _close(M, objective, rtol):
                        red, factor = "mean", c * S / objective
                    elif _close(S, objective, rtol):
                        red, factor = "sum", c
            if acc is not None:
                add(_finding("seed_accumulated",
                             f"seed buffer {buf} for array {s['target']} is added to by launch event {acc[0]} while "
                             f"it already held a sum of {acc[1]:g} (accumulated, not filled)",
                             seed=buf, target=s["target"], launch=acc[0], prior_sum=acc[1],
                             constant=s["constant"], factor=factor), buf)
            elif factor is not None:
                add(_finding("seed_scale",
                             f"backward (event {b['seq']}) seeds array {s['target']} ({s['target_size']} elements) "
                             f"with the constant {s['constant']:g} while the objective equals its {red}; the "
                             f"gradient is {factor:g} times the objective's",
                             target=s["target"], seed=buf, constant=s["constant"], size=s["target_size"],
                             reduction=red, factor=factor, objective=objective), s["target"])

    # missing zero before the first backward; multiple backwards
    if backwards:
        b0 = backwards[0]
        rec_on_T = set()
        for ev in events[: b0["seq"]]:
            if ev["kind"] == "launch" and ev["tape"] == b0["tape"] and ev["epoch"] == b0["epoch"]:
                rec_on_T |= set(ev["reads"])
        seeded = {x["target"] for x in b0["seeds"]}
        stale_mid = [a for a in sorted(paths[b0["seq"]][1], key=_label_key)
                     if a not in plabel and a not in seeded and b0["grad_nonzero"].get(a)
                     and not zeroed(a, -1, b0["seq"])]
        if stale_mid:
            add(_finding("grad_nonzero_at_backward",
                         f"{len(stale_mid)} intermediate array(s) on the param->loss path ({', '.join(stale_mid[:5])}) "
                         f"hold a nonzero .grad when backward (event {b0['seq']}) starts and nothing in the call "
                         f"zeroed them; their old adjoints flow into the params",
                         arrays=stale_mid, backward=b0["seq"]), "intermediates")
        for name, p in params.items():
            if b0["grad_nonzero"].get(p) and p in rec_on_T and not zeroed(p, -1, b0["seq"]):
                add(_finding("grad_nonzero_at_backward",
                             f"param {name} ({p}) has a nonzero .grad when backward (event {b0['seq']}) starts and "
                             f"nothing in the call zeroed it (no .grad.zero_(), tape.zero() or tape.reset())",
                             param=name, array=p, backward=b0["seq"]), p)
        def replayed(bw):
            """On-path launches recorded on the backward's own tape: {signature: params they read}."""
            out = {}
            for ev in paths[bw["seq"]][0]:
                if ev["kind"] == "launch" and ev["tape"] == bw["tape"] and ev["epoch"] == bw["epoch"]:
                    out.setdefault(_launch_signature(ev), set()).update(ev["reads"])
            return out

        for b1, b2 in zip(backwards, backwards[1:]):
            r1, r2 = replayed(b1), replayed(b2)
            # the same launch (same kernel, arrays and input contents) replayed by both backwards
            twice = set()
            for sig in set(r1) & set(r2):
                twice |= r1[sig]
            for name, p in params.items():
                if p in twice and not zeroed(p, b1["seq"], b2["seq"]):
                    add(_finding("multiple_backward",
                                 f"backward runs on tape {b1['tape']} (event {b1['seq']}) and again on tape "
                                 f"{b2['tape']} (event {b2['seq']}) in one call; both replay the same launch reading "
                                 f"param {name}, whose .grad is not zeroed in between",
                                 param=name, backwards=[b1["seq"], b2["seq"]], tapes=[b1["tape"], b2["tape"]]),
                        (p, b2["seq"]))

    # gradient contents consumed before this call's backward
    if backwards:
        b0 = backwards[0]
        rec0 = {a for ev in paths[b0["seq"]][0] if ev["kind"] == "launch" and ev["tape"] == b0["tape"]
                for a in ev["reads"]}
        for ev in events[: b0["seq"]]:
            if ev["kind"] == "grad_numpy" and ev["array"] in plabel and ev["array"] in rec0:
                name = plabel[ev["array"]]
                add(_finding("stale_gradient_read",
                             f"the .grad of param {name} is read (.numpy(), event {ev['seq']}) before this call's "
                             f"backward (event {b0['seq']}) writes it: what is read is a previous iteration's gradient",
                             param=name, read=ev["seq"], backward=b0["seq"]), name)

    # returned grads
    grads = (trace.get("result") or {}).get("grads") or {}
    reads_before = [e["seq"] for e in events if e["kind"] == "grad_read" and e["before_backward"]
                    and e["array"] in plabel]
    for name, r in grads.items():
        if backwards:
            # only a return that is demonstrably old counts: zeros where the backward wrote a gradient,
            # or the .grad as it was before this call's backward. Any other difference (a gradient
            # routed through another framework, a user-side transform) is not evidence.
            stale = (r["returned_zero"] and r["backward_nonzero"]) or r.get("matches_pre_backward")
            if not stale or r["matches_backward"] is not None:
                continue
            add(_finding("stale_gradient_read",
                         f"the gradient returned for {name} is not what this call's backward wrote into its .grad "
                         f"(returned sum {r['sum']:g}" + (", all zeros" if r["returned_zero"] else "") + ")",
                         param=name, returned_zero=r["returned_zero"], grad_reads_before_backward=reads_before), name)
        elif any(e["kind"] == "grad_read" and e["array"] == params.get(name) for e in events):
            add(_finding("stale_gradient_read",
                         f"the gradient returned for {name} was read from .grad but no backward ran in this call",
                         param=name, returned_zero=r["returned_zero"], grad_reads_before_backward=reads_before), name)

    for f in _aliasing.alias_findings(trace):  # a returned view of a .grad buffer overwritten after backward
        add(f, f["data"]["param"])
    for f in _tape_sessions.rerecord_findings(trace):  # a tape recorded again without reset()
        add(f, f["data"]["tape"])

    for g in groups_war.values():
        d = g["data"]
        arr = ", ".join(d["arrays"][:3]) + (f" and {len(d['arrays']) - 3} more" if len(d["arrays"]) > 3 else "")
        if d["readers"]:
            g["detail"] += f" (arrays {arr}; {d['count']} instance(s), first read at event {d['readers'][0]}"
            g["detail"] += f", first write at event {d['writers'][0]})" if d["writers"] else ")"
        else:
            g["detail"] += f" ({d['count']} array(s): {arr})"
        found[(g["id"], id(g))] = g
    return sorted(found.values(), key=lambda f: (f["id"], f["detail"]))
