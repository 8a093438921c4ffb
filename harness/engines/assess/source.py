"""Source evidence, only from code that ran during gradient().

The source rules (:mod:`defects4warp.rules`) read every ``.py`` file of
the variant; a user's folder also holds the training loop, data generation
and plotting, which never run inside ``gradient()`` and are full of normal
patterns (a fresh tape per iteration, ``backward()`` in a loop, NumPy random
draws). This assessor keeps a finding only when

* its line executed during the traced first gradient() call (line coverage
  from :mod:`defects4warp.probes.trace`), or
* it sits in a kernel launched during that call, or in a ``@wp.func`` such a
  kernel calls (transitively), since kernel bodies run natively and have no
  Python line coverage, or
* it is a module-level ``enable_backward=False`` option that ran at import in
  the file of a launched kernel whose adjoint it reaches
  (:func:`import_time_statement`; adapters only);

and when its rule's release gate (:data:`RELEASE_GATES`, declared with the
rule in :mod:`defects4warp.rules`) contains the Warp
release measured. Without coverage (the trace failed or did not run) findings
count at :data:`NO_COVERAGE_WEIGHT` of their specificity.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ... import rules
from ...paths import program_files
from . import AssessContext, Assessment, assessor

#: Source rules that only point at a class on some Warp releases, read from
#: the rule declarations (:mod:`defects4warp.rules`; Warp changelog 1.13.0,
#: 1.14.0, 1.17.0): component writes to array elements were fixed in 1.14,
#: copy/clone adjoints in 1.17, output adjoints are consumed by backward()
#: from 1.13.
RELEASE_GATES = {name: SpecifierSet(spec) for name, spec in rules.gates().items()}

#: Fraction of a finding's specificity counted when no coverage is available.
NO_COVERAGE_WEIGHT = 0.5

#: Rules about taping behaviour the runtime trace observes directly (who
#: wrote an array after it was read, what was launched outside a tape, how
#: many backward passes ran, whether gradients were zeroed, which arrays lack
#: requires_grad on the path): the rules declared ``observed=True`` in
#: :mod:`defects4warp.rules`. Where the trace ran, its findings replace these
#: rules: a pattern in the code that the run did not show is not evidence.
#: Rules about what happens inside a kernel body (``*=``, a component
#: assigned twice, a dynamic loop, a custom adjoint, singular builtins) stay:
#: the trace cannot see inside the generated adjoint.
OBSERVED_RULES = rules.observed_rules()


#: Source rules whose pattern harms the gradient only through the adjoint Warp generates for the kernel it sits
#: in (an in-place update or a read-and-write of an array, a local component assigned twice or after its
#: construction, a component or struct-field write to an array, an atomic's return used as an index, a dynamic
#: loop, both sides of a ``wp.where``, a kernel compiled with ``enable_backward=False``). A kernel the traced call launched but no tape recorded (an optimiser's
#: update kernel after ``backward()``) never has its adjoint run, so such a finding in it is not counted
#: (:func:`off_tape_kernels`). Rules about the forward itself (a rounding, a random draw, a nonsmooth op) are not
#: among them: the forward of an untaped kernel still shapes the objective.
ADJOINT_RULES = ("inplace_array_op", "kernel_read_write", "component_reassign", "component_write_after_init",
                 "array_component_write", "struct_array_write", "atomic_index", "dynamic_loop", "where_overflow",
                 "backward_disabled")


def off_tape_kernels(doc: dict) -> set:
    """Kernel function names the traced call launched (:func:`launched_kernels`) that no tape recorded in it.

    The recorded ones are the kernels of the ``launches`` probe's document (``doc["launches"]["kernels"]``:
    every distinct kernel a ``wp.Tape`` recorded during the first gradient() call, the traced one, listed even
    when over that probe's kernel limit). Empty when that probe did not run (nothing is known to be off tape).
    """
    la = doc.get("launches")
    if not isinstance(la, dict) or not isinstance(la.get("kernels"), list):
        return set()
    recorded = {_norm_kernel(k["kernel"]) for k in la["kernels"] if isinstance(k, dict) and k.get("kernel")}
    return launched_kernels(doc) - recorded


def release_ok(rule: str, warp_version) -> bool:
    """True when ``rule`` applies on ``warp_version`` (see :data:`RELEASE_GATES`)."""
    gate = RELEASE_GATES.get(rule)
    if gate is None or not warp_version:
        return True
    try:
        return gate.contains(Version(warp_version), prereleases=True)
    except InvalidVersion:
        return True


def _norm_kernel(name: str) -> str:
    return re.sub(r"_[0-9a-f]{6,}$", "", str(name).split(".")[-1])


def launched_kernels(doc: dict) -> set:
    """Function names of the kernels the traced call launched (``doc["trace"]["kernels"]``;
    module prefixes and Warp's hash suffixes stripped)."""
    out = set()
    for k in (doc.get("trace") or {}).get("kernels") or []:
        if isinstance(k, dict):
            out.update(_norm_kernel(k[key]) for key in ("name", "func", "key") if k.get(key))
        else:
            out.add(_norm_kernel(k))
    return out


def coverage_of(doc: dict, path) -> tuple:
    """Lines that ran and kernels launched during the traced call.

    Returns
    -------
    (lines, kernels, available)
        ``lines``: ``{file relative to path: set of line numbers}``;
        ``kernels``: set of kernel function names; ``available``: whether the
        trace recorded coverage at all.
    """
    tr = doc.get("trace") or {}
    cov = tr.get("coverage")
    root = str(Path(path).resolve())
    lines = {}
    if isinstance(cov, dict):
        files = cov.get("files", cov) if isinstance(cov.get("files", None), dict) else cov
        for f, ls in files.items():
            if not isinstance(ls, (list, tuple, set)):
                continue
            fp = str(Path(f).resolve()) if os.path.isabs(f) else os.path.join(root, f)
            try:
                rel = os.path.relpath(fp, root)
            except ValueError:
                continue
            if rel.startswith(".."):
                rel = os.path.basename(f)
            lines.setdefault(rel, set()).update(int(x) for x in ls if isinstance(x, (int, float)))
    kernels = launched_kernels(doc)
    return lines, kernels, isinstance(cov, dict)


def function_defs(path, files=None) -> dict:
    """Every function defined in the variant's ``.py`` files:
    ``{name: (file name, ast.FunctionDef)}`` (first definition wins; files
    that do not parse are skipped).

    ``files``: relative paths (as ``doc["capture"]["files"]``) to read instead of every file, so a
    captured script's kernels are not matched with same-named functions of sibling scripts in its
    folder that never ran (default None: all)."""
    out = {}
    keep = None if files is None else {str(Path(f)) for f in files}
    for f in program_files(path):
        if keep is not None and os.path.relpath(f, path) not in keep and f.name not in keep:
            continue
        try:
            tree = ast.parse(f.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.FunctionDef):
                out.setdefault(n.name, (f.name, n))
    return out


def called_names(node) -> set:
    """Names of everything ``node`` calls (``wp.sqrt(...)`` -> ``sqrt``)."""
    out = set()
    for c in ast.walk(node):
        if isinstance(c, ast.Call):
            fn = c.func
            out.add(fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", ""))
    return out


def ran_functions(path, kernels: set, defs: dict | None = None) -> set:
    """Kernels launched plus every function they call by name within the
    variant's files, transitively (``@wp.func`` helpers), and the
    ``@wp.func_grad``/``@wp.func_replay`` functions attached to those."""
    defs = function_defs(path) if defs is None else defs
    edges = {}
    for name, (_, n) in defs.items():
        edges.setdefault(name, set()).update(called_names(n))
        # @wp.func_grad(f) / @wp.func_replay(f): the adjoint runs wherever f runs
        for d in n.decorator_list:
            if isinstance(d, ast.Call) and (getattr(d.func, "attr", None) or getattr(d.func, "id", None)) in \
                    ("func_grad", "func_replay"):
                for arg in d.args:
                    target = arg.attr if isinstance(arg, ast.Attribute) else getattr(arg, "id", None)
                    if target:
                        edges.setdefault(target, set()).add(name)
    out, todo = set(), list(kernels)
    while todo:
        k = todo.pop()
        if k in out:
            continue
        out.add(k)
        todo.extend(c for c in edges.get(k, ()) if c in defs)
    return out


def scan(path, doc: dict) -> tuple:
    """All findings of the variant and the subset that ran. For a captured script
    (``doc["capture"]["files"]``) only findings in the files that ran are kept.

    Returns
    -------
    (findings, ran, available)
        Finding dicts (:meth:`defects4warp.rules.Finding.to_dict`), the
        list of those in code that ran, and whether coverage was available.
    """
    findings = [f.to_dict() for f in rules.scan(path)]
    ran_files = (doc.get("capture") or {}).get("files")
    if isinstance(ran_files, list) and ran_files:
        # a captured script: only its own files that ran (the entry and the modules it loaded), not sibling
        # scripts that never ran or vendored package copies next to it
        keep = set(ran_files)
        findings = [f for f in findings if f["file"] in keep]
    lines, kernels, available = coverage_of(doc, path)
    if not available:
        return findings, findings, False
    # a captured script's gradient() re-runs the whole script under the trace: its import-time lines
    # are in the coverage already, and a line that is not did not run (or ran after the launches)
    captured = bool(doc.get("capture"))
    defs = function_defs(path, files=ran_files if isinstance(ran_files, list) and ran_files else None)
    funcs = ran_functions(path, kernels, defs)
    ran = []
    for f in findings:
        header = on_definition_header(f, defs)
        if (f["line"] in lines.get(f["file"], ()) and not header) or (f.get("scope") and f["scope"] in funcs) \
                or (not captured and import_time_statement(f, path, kernels, defs, doc.get("warp_version"))):
            ran.append(f)
    return findings, ran, True


#: The rules whose module-level statements configure how the module's kernels are compiled
#: (:func:`import_time_statement`): only these count as run at import.
IMPORT_TIME_RULES = ("backward_disabled",)

#: First release where a kernel-level ``enable_backward=True`` reaches the ``@wp.func`` it calls
#: (the evidence table's ``release_changes["1.18.0"]``, ``harness/engines/evidence_table.yaml``).
KERNEL_OPTION_REACHES_FUNCS = Version("1.18.0")


def import_time_statement(finding: dict, path, kernels: set, defs: dict, warp_version=None) -> bool:
    """Whether a module-level ``backward_disabled`` finding (:data:`IMPORT_TIME_RULES`: a
    ``wp.set_module_options({"enable_backward": False})`` or ``wp.config.enable_backward = False``
    statement) ran at import and disabled the adjoint of a kernel that ran.

    Such a statement runs when the program imports the module, before the traced gradient()
    call, so line coverage of that call never sees it. It counts when it is a plain top-level
    statement (not under ``if``/``for``/``with``/``try``: ``if __name__ == "__main__":`` is not
    known to have run) of a file that defines a launched kernel (a ``@wp.func`` is compiled with its
    caller's module options, so a file of functions alone does not count) whose adjoint the option
    reaches: a kernel without its own ``enable_backward=True``, or, before Warp 1.18.0, one with it
    that calls a function (the kernel option did not reach called functions then). The
    ``wp.config`` form counts only above the file's first function definition (Warp reads it when
    the module object is created); ``wp.set_module_options`` anywhere (compilation is lazy).
    Measured by a reviewer on 1.1.0-1.18.0 (2026-12-02). Not for captured scripts (their coverage
    includes import time). Functions are matched by name and file by base name
    (:func:`function_defs`).

    Parameters
    ----------
    finding : dict
        A finding dict with ``rule``, ``file`` (relative to ``path``), ``line`` and optional ``scope``.
    path : path-like
        The variant folder.
    kernels : set of str
        Kernels launched during the traced call (:func:`coverage_of`).
    defs : dict
        :func:`function_defs` of the variant.
    warp_version : str, optional
        The release measured (default: treated as 1.18.0 or newer).
    """
    if finding.get("scope") or finding.get("rule") not in IMPORT_TIME_RULES:
        return False
    base = os.path.basename(str(finding.get("file", "")))
    try:
        tree = ast.parse((Path(path) / str(finding["file"])).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, KeyError):
        return False
    line = int(finding.get("line", 0))
    stmt = next((st for st in tree.body if st.lineno <= line <= (st.end_lineno or st.lineno)), None)
    if not isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return False
    first_def = min((n.lineno for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))), default=None)
    if isinstance(stmt, ast.Assign) and first_def is not None and stmt.lineno > first_def:
        return False
    try:
        old = warp_version is not None and Version(str(warp_version)) < KERNEL_OPTION_REACHES_FUNCS
    except InvalidVersion:
        old = False
    for name in kernels:
        if name not in defs or defs[name][0] != base:
            continue
        node = defs[name][1]
        own = any(isinstance(d, ast.Call) and any(k.arg == "enable_backward" and isinstance(k.value, ast.Constant)
                                                  and k.value.value is True for k in d.keywords)
                  for d in node.decorator_list)
        calls = any(isinstance(c, ast.Call) and (c.func.id if isinstance(c.func, ast.Name) else
                                                 getattr(c.func, "attr", None)) in defs
                    for c in ast.walk(node))
        if not own or (old and calls):
            return True
    return False


def on_definition_header(finding: dict, defs: dict) -> bool:
    """Whether a finding sits on the header (decorators, ``def`` line) of the function it is scoped to.

    Python runs a header once, when the module defines the function: its line coverage says the module was
    loaded, not that the function ran during gradient(). Such a finding (``@wp.kernel(enable_backward=False)``
    on an update kernel launched outside the tape, as in Warp's example_spring_cage.py) ran only if its
    function did (:func:`ran_functions`).

    Parameters
    ----------
    finding : dict
        A finding dict with ``file``, ``line`` and optional ``scope`` (a function name).
    defs : dict
        :func:`function_defs` of the variant.

    Returns
    -------
    bool
        False where the finding has no scope or the scope is not a function of the finding's file.
    """
    d = defs.get(finding.get("scope") or "")
    if d is None or d[0] != os.path.basename(str(finding.get("file", ""))):
        return False
    n = d[1]
    first = min([n.lineno] + [x.lineno for x in n.decorator_list])
    body = n.body[0].lineno if n.body else n.lineno + 1
    return first <= int(finding.get("line", 0)) < body


@assessor("source", cites=("rule:*",))
def assess(doc: dict, ctx: AssessContext | None = None, *, no_coverage_weight: float = NO_COVERAGE_WEIGHT,
           observed=OBSERVED_RULES, adjoint_rules=ADJOINT_RULES) -> Assessment:
    """Evidence entries for every finding in the variant's files (``ctx.path``; none without it)
    counted or not, and why, and the structured evidence ``rule:<name>`` of each rule with a
    counted finding (strength 1, or ``no_coverage_weight`` without line coverage; the evidence
    table holds its class weights). Where the runtime trace ran, findings of the ``observed``
    rules (:data:`OBSERVED_RULES`) are reported but not counted, and so are findings of the
    ``adjoint_rules`` (:data:`ADJOINT_RULES`) in a kernel no tape recorded (:func:`off_tape_kernels`). Findings given in
    ``ctx.findings`` are used instead of a scan (:func:`assess_given`).
    Facts: ``rules`` (counted), ``inplace_scopes``, ``piecewise_scopes``."""
    ctx = ctx or AssessContext()
    if ctx.findings is not None:
        return assess_given(ctx.findings, ctx.warp_version)
    path, warp_version = ctx.path, ctx.warp_version
    a = Assessment()
    if path is None:
        return a
    findings, ran, available = scan(path, doc)
    traced = available and "findings" in (doc.get("trace") or {})
    ran_ids = {id(f) for f in ran}
    untaped = off_tape_kernels(doc) if available else set()
    counted = []
    for f in findings:
        live = release_ok(f["rule"], warp_version)
        did_run = id(f) in ran_ids
        why = "" if did_run else " (not in code that ran during gradient())"
        if did_run and f["rule"] in adjoint_rules and f.get("scope") in untaped:
            did_run = False
            why = f" (kernel {f['scope']} ran outside any tape: its adjoint never ran)"
        if not live:
            why += f" (not on Warp {warp_version})"
        seen = traced and f["rule"] in observed
        if seen and did_run:
            why += " (taping behaviour: the runtime trace observes it instead)"
        ok = did_run and live and not seen
        a.add("source", False, f"{f['file']}:{f['line']}: {f['detail']}{why}",
              {"rule": f["rule"], "classes": f["classes"], "counted": ok})
        if ok:
            counted.append(f)
    if not findings:
        a.add("source", True, "no source pattern found", None)
    elif available:
        a.add("source", True, f"{len(counted)} of {len(findings)} source finding(s) counted: in code that ran "
              "(line coverage of gradient() and the kernels it launched, adjoint patterns only in kernels a tape recorded), "
              "on this release, and not taping behaviour the runtime trace observes instead", None)
    scale = 1.0 if available else no_coverage_weight
    for rule in sorted({f["rule"] for f in counted}):
        # structured evidence: the rule's class weights are the rows rule:<name> of the evidence table
        a.cite(f"rule:{rule}", "source", f"source rule {rule} in code that ran", {"rule": rule}, strength=scale)
    a.facts["rules"] = sorted({f["rule"] for f in counted})
    a.facts["inplace_scopes"] = sorted({f.get("scope") for f in counted if f["rule"] == "inplace_array_op"})
    a.facts["piecewise_scopes"] = sorted({str(f.get("scope")) for f in counted if f["rule"] == "piecewise_constant_op"})
    return a


def assess_given(findings: list, warp_version) -> Assessment:
    """An assessment from explicitly given source findings (a list of
    :meth:`defects4warp.rules.Finding.to_dict`; tests; no coverage gating, release gates applied)."""
    a = Assessment()
    live = [f for f in findings if release_ok(f["rule"], warp_version)]
    for f in findings:
        gated = f not in live
        a.add("source", False, f"{f['file']}:{f['line']}: {f['detail']}" + (f" (not on Warp {warp_version})" if gated else ""),
              {"rule": f["rule"], "classes": f["classes"], "counted": not gated})
    if not findings:
        a.add("source", True, "no source pattern found", None)
    for rule in sorted({f["rule"] for f in live}):
        a.cite(f"rule:{rule}", "source", f"source rule {rule}", {"rule": rule})
    a.facts["rules"] = sorted({f["rule"] for f in live})
    a.facts["inplace_scopes"] = sorted({f.get("scope") for f in live if f["rule"] == "inplace_array_op"})
    return a
