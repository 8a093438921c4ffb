"""The builtins' assessment: launched kernel code that calls a builtin Warp's adjoint gets wrong.

A launched kernel that calls a builtin (or uses an access pattern) the conformance suite
(:mod:`defects4warp.builtins`, ``docs/builtins.md``) measured ``wrong`` or ``zero`` on the running
release is direct evidence of ``warp_adjoint_bug``, with the measured numbers, unless every kernel
that reaches it agrees with finite differences in isolation (the per-launch check): then it is
reported, not counted. Read in the parent from the document (the kernels the trace saw launched)
and the variant's files; nothing is measured here.
"""

from __future__ import annotations

import ast
import re

from ...builtins import load as load_builtins, lookup as lookup_builtins
from ..release import _v
from . import AssessContext, Assessment, assessor
from .source import called_names, function_defs, launched_kernels, ran_functions


#: The evidence id a measured defect of a builtin or access pattern is cited under (default
#: ``builtin_adjoint_defect``); the evidence table says which class each supports (``y[i].x *= ...``
#: is the taxonomy's ``inplace_math``, not a defect of Warp's adjoint).
BUILTIN_EVIDENCE = {"[component_mul]": "builtin_component_mul_defect"}


#: Parameter annotations of a value type (vectors, matrices, quaternions, transforms): Warp passes
#: them by value, so writing a component of such a parameter is a write to a local.
_VALUE_ANNOTATION = re.compile(r"\b(vec|mat|quat|transform|spatial_)\w*")


#: ``dtype=`` of an array annotation, and the element types Warp builds in (scalars, vec2-4,
#: matrices up to 4x4, quaternions, transforms, spatial types): any other is a user-defined type.
_ARRAY_DTYPE = re.compile(r"dtype\s*=\s*([\w.]+)")
_BUILTIN_DTYPE = re.compile(r"^(wp\.)?(float(16|32|64)?|u?int(8|16|32|64)?|bool|vec[234][hfdbsilu]?[bsil]?|"
                            r"mat(22|33|44|23|32|34|43)[hfd]?|quat[hfd]?|transform[hfd]?|spatial_(vector|matrix)[hfd]?)$")


def is_warp_function(node) -> bool:
    """Whether ``node`` is decorated as Warp kernel code (``@wp.kernel``, ``@wp.func``,
    ``@wp.func_grad(...)``, ``@kernel(...)``, ...): host functions are never looked up."""
    for d in getattr(node, "decorator_list", ()):
        f = d.func if isinstance(d, ast.Call) else d
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if name in ("kernel", "func", "func_grad", "func_replay", "func_native"):
            return True
    return False


def access_patterns(node) -> set:
    """Access patterns of the conformance suite (``ACCESS`` in :mod:`defects4warp.builtins.suite`)
    that the function ``node`` uses.

    Array elements: ``[component_write]`` (``y[i].x = ...``), ``[component_add]``
    (``y[i].x += ...``), ``[component_mul]`` (``y[i].x *= ...``). Components of a local vector or
    matrix: ``[local_component_write]`` (``v[1] = ...``), ``[local_component_add]`` (``v[1] += ...``,
    ``v[1] -= ...``, ``v.x += ...``), ``[local_attribute_write]`` (``v.x = ...``; attributes ``x``,
    ``y``, ``z``, ``w`` only: other names are struct fields), ``[local_matrix_write]``
    (``m[0, 1] = ...``) and ``[local_matrix_add]`` (``m[0, 1] += ...``). A local copied by a plain
    assignment from another local (``w = u``): ``[local_alias]``; a conditional expression with a
    plain array load as a branch (``a[i] / b[i] if flag else a[i]``): ``[ternary_load]``. An in-place
    add or subtract on an array element (``a[i] += ...``): ``[element_write_add]``, and
    ``[vec9_element_add_twice]`` as well when the array's element type is not one of Warp's
    built-in scalar, vector or matrix types (a ``wp.types.vector`` of another length: Warp lowered
    those in-place ops differently before 1.5.0). A local is any name but a
    parameter annotated with another than a value type (an array, a struct) and a name bound to
    such a parameter (``a = out``); a vector or matrix parameter is passed by value, so it counts.
    """
    params = set()
    custom = set()  # array parameters whose element type is not a Warp built-in type
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = node.args
        for x in a.posonlyargs + a.args + a.kwonlyargs:
            ann = ast.unparse(x.annotation) if x.annotation is not None else ""
            if "array" in ann or not _VALUE_ANNOTATION.search(ann):
                params.add(x.arg)
            m = _ARRAY_DTYPE.search(ann)
            if "array" in ann and m and not _BUILTIN_DTYPE.match(m.group(1)):
                custom.add(x.arg)
    # names bound to a parameter (or to such a name) are views of it, not locals
    grew = True
    while grew:
        grew = False
        for n in ast.walk(node):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in params:
                for t in n.targets:
                    if isinstance(t, ast.Name) and t.id not in params:
                        params.add(t.id)
                        grew = True
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.IfExp) and any(isinstance(b, ast.Subscript) and isinstance(b.value, ast.Name)
                                            and b.value.id in params for b in (n.body, n.orelse)):
            out.add("[ternary_load]")
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id not in params \
                and any(isinstance(t, ast.Name) for t in n.targets):
            out.add("[local_alias]")
        if isinstance(n, ast.AugAssign) and isinstance(n.op, (ast.Add, ast.Sub)) and isinstance(n.target, ast.Subscript) \
                and isinstance(n.target.value, ast.Name) and n.target.value.id in params:
            out.add("[element_write_add]")
            if n.target.value.id in custom:
                out.add("[vec9_element_add_twice]")
        tgts = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
        write = isinstance(n, ast.Assign)
        add = isinstance(n, ast.AugAssign) and isinstance(n.op, (ast.Add, ast.Sub))
        for t in tgts:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Subscript):
                if write:
                    out.add("[component_write]")
                elif add and isinstance(n.op, ast.Add):
                    out.add("[component_add]")
                elif isinstance(n.op, ast.Mult):
                    out.add("[component_mul]")
            elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id not in params \
                    and t.attr in ("x", "y", "z", "w"):
                if write:
                    out.add("[local_attribute_write]")
                elif add:
                    out.add("[local_component_add]")
            elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id not in params:
                matrix = isinstance(t.slice, ast.Tuple) and len(t.slice.elts) == 2
                if write:
                    out.add("[local_matrix_write]" if matrix else "[local_component_write]")
                elif add:
                    out.add("[local_matrix_add]" if matrix else "[local_component_add]")
    return out


def _describe(cells: list) -> str:
    parts = []
    for c in cells[:3]:
        if c["state"] == "zero":
            parts.append(f"{c['id']} zero" + (" (declared not differentiable)" if c.get("differentiable") is False
                                              else ""))
        else:
            parts.append(f"{c['id']} wrong (relative error {c['rel_err']:.3g})" if c.get("rel_err") is not None
                         else f"{c['id']} non-zero where finite differences are 0")
    more = f" and {len(cells) - 3} more" if len(cells) > 3 else ""
    return "; ".join(parts) + more


def agreeing_kernels(records: list) -> set:
    """Names of the kernels the per-launch check found to agree with finite differences in
    isolation (``ok`` True in :mod:`defects4warp.probes.launches`' records), under their Warp key
    (``make__locals__inner`` for a kernel defined in a function) and their plain name (``inner``),
    the two forms :func:`kernel_names` holds. A name that a kernel not found to agree also has (a
    failing or unchecked kernel, one of the same name in another file) is left out."""
    def plain(k):
        return str(k).split("__")[-1]

    ok = {r["kernel"] for r in records if r.get("ok") is True and r.get("kernel")}
    other = {r["kernel"] for r in records if r.get("ok") is not True and r.get("kernel")}
    return (ok | {plain(k) for k in ok}) - other - {plain(k) for k in other}


def builtin_findings(path, kernels: list, warp_version: str | None, *, device: str = "cpu", lookup=None,
                     agreeing=()) -> Assessment:
    """Builtins called by a launched kernel (or a ``@wp.func`` it calls, transitively, within the variant's
    files) that the conformance suite measured ``wrong`` or ``zero`` on this release.

    A function reached only from kernels that agree with finite differences in isolation
    (``agreeing``, the per-launch check's passing kernels) is reported but not counted
    (``data["counted"]`` False): its defective builtin does not move that kernel's adjoint (e.g. a
    local vector component written from constants, on a release where such writes have no adjoint).

    Parameters
    ----------
    path : path-like
        The variant folder.
    kernels : list[str]
        Names of the kernels launched during gradient() (from the trace).
    agreeing : iterable of str
        Kernels the per-launch check (:mod:`defects4warp.probes.launches`) found to agree with
        finite differences in isolation (default none).
    warp_version : str
    device : str
        Device of the run (committed data is CPU; other devices fall back to it).
    lookup : callable, optional
        ``lookup(release, device, names) -> list[dict]``; default :func:`defects4warp.builtins.lookup`
        (the committed results in harness/data/builtins).

    Returns
    -------
    Assessment
        One ``release`` finding per (function, builtin) with the measured overloads and numbers;
        its ``data["evidence"]`` is the id the engine cites it under (:data:`BUILTIN_EVIDENCE`,
        default ``builtin_adjoint_defect``; the evidence table's rows give the classes).
    """
    a = Assessment()
    if _v(warp_version) is None or not kernels:
        return a
    if lookup is None:
        lookup = lookup_builtins
        doc = load_builtins(str(warp_version), device) or load_builtins(str(warp_version), "cpu")
        totals = {}
        for c in (doc or {}).get("cells", {}).values():
            totals[c["builtin"]] = totals.get(c["builtin"], 0) + 1
    else:
        totals = None
    defs = function_defs(path)
    live = ran_functions(path, set(kernels) - set(agreeing), defs)
    for name in sorted(ran_functions(path, set(kernels), defs)):
        fname, node = defs[name] if name in defs else (None, None)
        if node is None:
            continue
        names = called_names(node) | (access_patterns(node) if is_warp_function(node) else set())
        cells = lookup(str(warp_version), device, names)
        by = {}
        for c in cells:
            by.setdefault(c["builtin"], []).append(c)
        for b, cs in sorted(by.items()):
            n = (totals or {}).get(b, len(cs))
            what = f"wp.{b}" if not b.startswith("[") else f"the access pattern {b}"
            on = (f"Warp {warp_version}" if not cs[0].get("bracket") else
                  f"Warp {cs[0]['bracket'][0]} and {cs[0]['bracket'][1]}, the measured releases around {warp_version}")
            counted = name in live
            a.add("release", False, f"{fname}:{node.lineno}: kernel code {name} uses {what}, whose adjoint the "
                  f"builtins conformance suite measured defective on {on} ({len(cs)} of {n} "
                  f"overloads: {_describe(cs)}; docs/builtins.md)"
                  + ("" if counted else "; every kernel that reaches it agrees with finite differences in "
                     "isolation, so it is not counted"),
                  {"builtin": b, "function": name, "overloads": [c["id"] for c in cs], "counted": counted,
                   "evidence": BUILTIN_EVIDENCE.get(b, "builtin_adjoint_defect")})
    return a


def kernel_names(doc: dict) -> list:
    """Names of the kernels launched during call 1 (trace, else the per-launch record)."""
    names = launched_kernels(doc) or {k["kernel"] for k in (doc.get("launches") or {}).get("kernels", [])}
    return sorted(n for n in names if n)


@assessor("builtins", cites=("builtin_adjoint_defect", *BUILTIN_EVIDENCE.values()), probe="release")
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """The builtins' assessment: :func:`builtin_findings` of the kernels ``doc`` launched (none
    without ``ctx.path``), those the per-launch check found agreeing (``ctx.assessed["launches"]``)
    not counted, and per evidence id (``builtin_adjoint_defect``, :data:`BUILTIN_EVIDENCE`) one
    structured evidence naming the counted builtins, of strength their number."""
    ctx = ctx or AssessContext()
    if ctx.path is None:
        return Assessment()
    agreeing = agreeing_kernels(ctx.facts("launches").get("kernels") or [])
    a = builtin_findings(ctx.path, kernel_names(doc), ctx.warp_version, agreeing=agreeing)
    per_id = {}
    for e in a.evidence:
        if not e["clean"] and (e.get("data") or {}).get("counted", True):
            eid = (e.get("data") or {}).get("evidence", "builtin_adjoint_defect")
            per_id.setdefault(eid, []).append((e.get("data") or {}).get("builtin"))
    for eid, names in sorted(per_id.items()):
        a.cite(eid, "release", "", names, strength=float(len(names)))
    return a
