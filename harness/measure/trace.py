"""Runtime trace of one ``gradient()`` call, and the direct evidence it holds.

Three modules do the work; this one keeps their public names (and the
private ones other modules and tests use) importable from one place:

* :mod:`defects4warp.measure.recorder`: :func:`trace_call` (wraps the API,
  records the document below), :func:`restore_patches`; what the trace has
  recorded so far lives in :mod:`defects4warp.measure.trace_state`;
* :mod:`defects4warp.kernel_access`: the kernel access analysis the recorder
  reads (shared with the source rules, :mod:`defects4warp.rules`, one layer
  below both; its names are not re-exported here);
* :mod:`defects4warp.measure.detectors`: :func:`trace_findings`, one registered
  detector per mechanism (:func:`defects4warp.measure.detectors.detector`).

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
property (getter and setter), plus ``wp.types.is_struct`` (before 1.11, where
it is missing: ``isinstance(v, warp.codegen.StructInstance)``) and, read-only,
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
label}``. ``start``: seq of the first event of the measured call (0, or where
a script captured at iteration k > 1 begins iteration k after replaying the
earlier ones: ``_Recorder.mark_start``); the detectors read only the backwards
from there, and paths only through events from there.

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
  ``site`` (``[file, line]`` of the program's ``wp.launch`` call: the
  innermost frame outside Warp and the harness, or ``None``; absent from
  traces recorded before it existed),
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

Each finding is ``{"id", "detail", "data"}``. A finding names no class: the
engine cites it as evidence ``trace:<id>`` and the evidence table
(``harness/engines/evidence_table.yaml``) says which classes that supports
(:func:`defects4warp.engines.evidence.finding_classes` reads the table). The ids, the detector
(:mod:`defects4warp.measure.detectors`) that emits each, and the class the
table's row names at the time of writing:

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
(counters, picking, housekeeping) never produce findings. ``missing_requires_grad``
further needs the array's *values* to depend on a param: each launch carries its kernel's
value flows (``flows``: written array -> arrays whose values reach it, from
:func:`defects4warp.kernel_access._value_flows`; indices and branch conditions carry
none), so an array a param-reading launch writes with values from elsewhere is not flagged.
"""

from __future__ import annotations

# the capture reaches measure/ through this module only (tests/test_oracle.py): it sorts and walks events with these
from .dataflow import _edges, _label_key  # noqa: F401
from .detectors import DETECTORS, FINDING_IDS, _finding, detector, trace_findings  # noqa: F401
from .patches import Patches, active, restore_patches  # noqa: F401
from .recorder import _Coverage, trace_call  # noqa: F401

__all__ = ["trace_call", "trace_findings", "restore_patches", "Patches", "active"]
