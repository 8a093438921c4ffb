"""Enumerating Warp's builtins and measuring their adjoints (runs in the per-release interpreter).

Nothing here imports the rest of the harness: this module is imported by
:mod:`defects4warp.builtins.worker` inside a per-release virtual environment that
holds only NumPy and ``warp-lang`` (see :mod:`defects4warp.envs`).

An *overload spec* is a JSON-able dict::

    {"id": "add(vec3f,vec3f)", "builtin": "add", "family": "vector",
     "args": [["a", "vec3f"], ["b", "vec3f"]], "ret": "vec3f",
     "dtype": "float32", "differentiable": True | False | None,
     "template": "call" | "<access pattern>" | "tile:<reduction>" | "tile_write:<write>"}

Each is measured by generating one kernel that applies the builtin at ``P``
random points of its domain (:data:`DOMAINS`), seeding the output adjoint
with random weights ``w`` (loss = sum of w * output), and comparing the
tape's adjoint of every float input with central finite differences of the
same forward (float64 arithmetic for float64 overloads; the float32 forward
with a noise model for float32 overloads, see :func:`compare`).
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
import tempfile
import time
import traceback

import numpy as np

#: Builtins never measured: side effects, randomness, printing, array or
#: handle arguments, or no float input to differentiate.
EXCLUDED = frozenset({
    "print", "printf", "tid", "select", "where", "expect_eq", "expect_neq", "expect_near", "assign",
    "rand_init", "randf", "randi", "randn", "sample_cdf", "sample_triangle", "sample_unit_ring", "sample_unit_disk",
    "sample_unit_sphere_surface", "sample_unit_sphere", "sample_unit_hemisphere_surface", "sample_unit_hemisphere",
    "sample_unit_square", "sample_unit_cube", "poisson", "atomic_add", "atomic_sub", "atomic_min", "atomic_max",
    "isnan", "isinf", "isfinite", "len", "bit_and", "bit_or", "bit_xor", "lshift", "rshift", "invert",
    "unot", "breakpoint", "static", "func", "zeros", "ones", "identity", "vector", "matrix", "quaternion",
    "transformation", "spatial_vector", "spatial_matrix", "vec2", "vec3", "vec4", "mat22", "mat33", "mat44",
    "quat", "transform", "quat_identity", "transform_identity", "int32", "int8", "uint8", "int16", "uint16",
    "uint32", "int64", "uint64", "float16", "bool", "svd3", "svd2", "qr3", "eig3", "matrix_from_cols",
    "matrix_from_rows", "argmin", "argmax",
})

#: Domain of each builtin's float inputs. Keys are builtin names; values
#: ``(low, high)`` sample every scalar uniformly in that interval. Builtins
#: not listed use :func:`default_value` (magnitudes in [0.5, 1.5] with a
#: random sign, so nothing sits on the kinks at 0 of abs/sign/min/max or on a
#: zero denominator; square matrices as I + 0.3 U(-1, 1), well conditioned;
#: unit quaternions). Sources: the mathematical domains of the functions.
DOMAINS = {
    "log": (0.3, 2.0), "log2": (0.3, 2.0), "log10": (0.3, 2.0), "sqrt": (0.3, 2.0), "cbrt": (0.3, 2.0),
    "pow": (0.3, 2.0), "asin": (-0.8, 0.8), "acos": (-0.8, 0.8), "atanh": (-0.8, 0.8), "erfinv": (-0.8, 0.8),
    "erfcinv": (0.3, 1.7), "acosh": (1.2, 2.5), "tan": (-1.2, 1.2),
    "noise": (0.1, 3.9), "pnoise": (0.1, 3.9), "curlnoise": (0.1, 3.9),
}

#: Per-argument intervals for builtins whose arguments play different roles.
ARG_DOMAINS = {
    ("clamp", 1): (-1.5, -0.6), ("clamp", 2): (0.6, 1.5), ("clamp", 0): (-2.0, 2.0),
    ("smoothstep", 0): (-1.5, -0.6), ("smoothstep", 1): (0.6, 1.5), ("smoothstep", 2): (-0.5, 0.5),
    ("lerp", 2): (0.1, 0.9), ("curlnoise", 3): (1.5, 2.5), ("curlnoise", 4): (0.3, 0.7),
}

#: Value of constant (non-differentiable) integer/bool arguments.
CONSTANTS = {"int32": "2", "uint32": "wp.uint32(1)", "bool": "True"}

#: Builtins whose square-matrix inputs are drawn as I + 0.3 U(-1, 1) (well conditioned, near a rotation)
#: instead of entries of magnitude [0.5, 1.5].
NEAR_IDENTITY = frozenset({"inverse", "inverse_approx", "determinant", "quat_from_matrix", "transform_from_matrix"})

# ---------------------------------------------------------------- types


def _wp():
    import warp as wp

    return wp


def types_module():
    """``warp._src.types`` on new releases, ``warp.types`` on old ones."""
    try:
        from warp._src import types as T  # noqa: F401

        return T
    except ImportError:
        import warp.types as T

        return T


def registry():
    """Warp's dict of builtins, name -> Function (``warp._src.context`` on new releases, ``warp.context`` on old)."""
    try:
        from warp._src import context as C

        return C.builtin_functions
    except ImportError:
        import warp.context as C

        return C.builtin_functions


def _scalar_name(t):
    T = types_module()
    for n in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64"):
        if getattr(T, n, None) is t:
            return n
    if t is bool or t is getattr(T, "bool", None):
        return "bool"
    if t is float:
        return "float32"
    if t is int:
        return "int32"
    return None


def type_str(t):
    """Structural name of a concrete Warp type: ``float32``, ``vec3d``,
    ``mat33f``, ``quatf``, ``transformd``, ``int32``, ``uint32``, ``bool``; None otherwise."""
    s = _scalar_name(t)
    if s:
        return s
    g = getattr(t, "_wp_generic_type_str_", None)
    st = _scalar_name(getattr(t, "_wp_scalar_type_", None))
    if st not in ("float32", "float64"):
        return None
    c = "f" if st == "float32" else "d"
    if g == "vec_t":
        n = getattr(t, "_length_", None)
        return f"vec{n}{c}" if isinstance(n, int) and n > 0 else None
    if g == "mat_t":
        sh = getattr(t, "_shape_", None)
        return f"mat{sh[0]}{sh[1]}{c}" if sh and all(isinstance(x, int) and x > 0 for x in sh) else None
    if g == "quat_t":
        return f"quat{c}"
    if g == "transform_t":
        return f"transform{c}"
    return None


def parse_type(s):
    """(kind, shape, scalar) of a :func:`type_str` name: kind in scalar/vec/mat/quat/transform/const."""
    if s in CONSTANTS:
        return "const", (), s
    if s in ("float32", "float64"):
        return "scalar", (), s
    sc = "float32" if s.endswith("f") else "float64"
    if s.startswith("vec"):
        return "vec", (int(s[3:-1]),), sc
    if s.startswith("mat"):
        return "mat", (int(s[3]), int(s[4])), sc
    if s.startswith("quat"):
        return "quat", (4,), sc
    if s.startswith("transform"):
        return "transform", (7,), sc
    raise ValueError(s)


def size_of(s):
    """Number of float scalars in a value of type name ``s``."""
    k, sh, _ = parse_type(s)
    return int(np.prod(sh)) if sh else 1


def type_expr(s):
    """Python source for the Warp type named ``s`` (valid on every release)."""
    k, sh, sc = parse_type(s)
    if k == "const":
        return {"int32": "wp.int32", "uint32": "wp.uint32", "bool": "bool"}[s]
    d = f"wp.{sc}"
    if k == "scalar":
        return d
    if k == "vec":
        return f"wp.types.vector(length={sh[0]}, dtype={d})"
    if k == "mat":
        return f"wp.types.matrix(shape=({sh[0]}, {sh[1]}), dtype={d})"
    if k == "quat":
        return f"wp.types.quaternion(dtype={d})"
    return f"wp.types.transformation(dtype={d})"


def family(name, strs):
    if "noise" in name:
        return "noise"
    if name.startswith("tile_"):
        return "tile"
    if name.startswith("closest_point") or name in ("intersect_tri_tri",):
        return "geometry"
    kinds = {parse_type(s)[0] for s in strs}
    for k in ("transform", "quat", "mat", "vec"):
        if k in kinds:
            return {"transform": "transform", "quat": "quaternion", "mat": "matrix", "vec": "vector"}[k]
    return "scalar"


# ---------------------------------------------------------------- enumeration


def _overloads(f):
    return list(getattr(f, "overloads", None) or [f])


def _instantiate(t, dtype):
    """Concrete type for a generic input type (Float/Scalar, vector/matrix/quat/transform of a generic
    dtype or length), with vectors of length 3 and 3x3 matrices; None when not instantiable."""
    T = types_module()
    wp = _wp()
    sc = getattr(wp, dtype)
    if t in (getattr(T, "Float", None), getattr(T, "Scalar", None)):
        return sc
    if type_str(t) is not None:
        return t
    g = getattr(t, "_wp_generic_type_str_", None)
    if g is None:
        return None
    st = getattr(t, "_wp_scalar_type_", None)
    if st not in (getattr(T, "Float", None), getattr(T, "Scalar", None), T.float32, T.float64):
        return None
    if st in (T.float32, T.float64):
        sc = st
    try:
        if g == "vec_t":
            n = t._length_ if isinstance(getattr(t, "_length_", None), int) and t._length_ > 0 else 3
            return T.vector(length=n, dtype=sc)
        if g == "mat_t":
            sh = getattr(t, "_shape_", (3, 3))
            sh = tuple(x if isinstance(x, int) and x > 0 else 3 for x in sh)
            return T.matrix(shape=sh, dtype=sc)
        if g == "quat_t":
            return T.quaternion(dtype=sc)
        if g == "transform_t":
            return T.transformation(dtype=sc)
    except Exception:
        return None
    return None


def _value_type(o, concrete: dict):
    vt = getattr(o, "value_type", None)
    if vt is not None:
        return vt
    vf = getattr(o, "value_func", None)
    if vf is None:
        return None
    for call in (lambda: vf(concrete, {}), lambda: vf(list(concrete.values()), {}, []),
                 lambda: vf(list(concrete.values()), {}, {})):
        try:
            return call()
        except Exception:
            continue
    return None


def _cap(specs: dict, cap: int) -> dict:
    """At most ``cap`` overloads per builtin, spread over argument shapes: overloads are grouped by
    their signature with the float width removed (``add(vec3?,vec3?)``), and groups are taken evenly
    over the registry order, each with its float32 and float64 members."""
    by = {}
    for sid, sp in specs.items():
        key = sid.replace("float32", "float?").replace("float64", "float?")
        key = "".join("?" if (c in "fd" and i + 1 < len(key) and key[i + 1] in ",)") else c
                      for i, c in enumerate(key))
        by.setdefault(sp["builtin"], {}).setdefault(key, []).append(sid)
    keep = set()
    for name, groups in by.items():
        gl = list(groups.values())
        n = sum(len(g) for g in gl)
        if n <= cap:
            keep.update(s for g in gl for s in g)
            continue
        per = max(1, max(len(g) for g in gl))
        k = max(1, cap // per)
        idx = sorted({round(i * (len(gl) - 1) / max(k - 1, 1)) for i in range(k)}) if k > 1 else [0]
        for i in idx:
            keep.update(gl[i])
    return {s: sp for s, sp in specs.items() if s in keep}


def enumerate_specs(*, max_per_builtin: int = 12):
    """Every measurable overload of this release's builtins, plus the access-pattern and tile templates.

    Parameters
    ----------
    max_per_builtin : int
        Cap on the overloads kept per builtin (default 12: compile time, about
        1 s per kernel with its adjoint on one CPU core on 1.19.0, is the cost;
        ``mul`` alone has 70 concrete float overloads there). See :func:`_cap`.

    Returns
    -------
    list[dict]
        Overload specs (module docstring), sorted by id; ids are unique.
    """
    reg = registry()
    out = {}
    counts = {}
    for name, f in reg.items():
        if name in EXCLUDED or name.startswith("adj_") or name.startswith("tile") or name.startswith("mesh_") \
                or name.startswith("bvh_") or name.startswith("hash_grid") or name.startswith("volume_"):
            continue
        for o in _overloads(f):
            if all(getattr(x, "hidden", False) for x in _overloads(f)):  # exported concrete overloads are
                continue  # hidden while the generic one of a public builtin is not
            items = list((getattr(o, "input_types", None) or {}).items())
            if not items or getattr(o, "variadic", False):
                continue
            cands = []
            if getattr(o, "value_type", None) is not None:
                cands.append({k: t for k, t in items})
            else:
                for dt in ("float32", "float64"):
                    inst = {k: _instantiate(t, dt) for k, t in items}
                    if all(v is not None or _scalar_name(t) in CONSTANTS for (k, t), v in zip(items, inst.values())):
                        cands.append({k: (v if v is not None else t) for (k, t), v in zip(items, inst.values())})
            for conc in cands:
                strs = [type_str(t) for t in conc.values()]
                if any(s is None for s in strs):
                    continue
                if not any(s not in CONSTANTS for s in strs):
                    continue
                if any(s in ("int8", "int16", "int64", "uint8", "uint16", "uint64", "float16") for s in strs):
                    continue
                rt = _value_type(o, conc)
                rs = type_str(rt) if rt is not None else None
                if rs is None or rs in CONSTANTS:
                    continue
                dts = {parse_type(s)[2] for s in strs if s not in CONSTANTS}
                sid = f"{name}({','.join(strs)})"
                if sid in out:
                    continue
                diff = getattr(o, "is_differentiable", None)
                out[sid] = {"id": sid, "builtin": name, "family": family(name, strs),
                            "args": [[k, s] for k, s in zip(conc.keys(), strs)], "ret": rs,
                            "dtype": "float64" if dts == {"float64"} else "float32",
                            "differentiable": None if diff is None else bool(diff), "template": "call"}
    out = _cap(out, max_per_builtin)
    for spec in template_specs(reg):
        out[spec["id"]] = spec
    return [out[k] for k in sorted(out)]


#: Access patterns (kernel body lines, ``x`` a float array, ``y`` a vec3 array, or the type of
#: :data:`ACCESS_RET`; ``R`` is ``y``'s element type): name -> body. The ``local_*`` patterns assign
#: a component of a kernel-local vector or matrix (``v[1] = ...``, ``v[2] += ...``, ``v.x = ...``,
#: ``m[0, 1] = ...``, ``m[1, 1] += ...``), once each: measured zero on 1.0.2-1.3.3 (Warp drops the
#: adjoint of every local component write there, whatever the program does; 2026-12-02, the mechanism
#: behind lidar-patch-shape-weights' and harbour-buoy-ballast-drift's old-release labels).
ACCESS = {
    "component_write": ["y[i].x = 2.0 * x[i]", "y[i].y = 3.0 * x[i]", "y[i].z = 4.0 * x[i]"],
    "component_add": ["y[i].x += x[i]", "y[i].z += 2.0 * x[i]"],
    "component_mul": ["y[i].y *= x[i]"],
    "element_add": ["y[i] += x[i] * v"],
    "local_component_write": ["v = R()", "v[1] = 2.0 * x[i]", "y[i] = v"],
    "local_component_add": ["v = R()", "v[2] += 3.0 * x[i]", "y[i] = v"],
    "local_attribute_write": ["v = R()", "v.x = 4.0 * x[i]", "y[i] = v"],
    "local_matrix_write": ["m = R()", "m[0, 1] = 2.0 * x[i]", "y[i] = m"],
    "local_matrix_add": ["m = R()", "m[1, 1] += 3.0 * x[i]", "y[i] = m"],
    # a local copied by plain assignment (``w = u``) and then reassigned in both branches of a
    # condition on the copy (as in Warp's test_grad.py power kernel): the adjoint must reach ``u``
    "local_alias": ["u = x[i]", "w = u", "if w > u - u:", "    w = u * u", "else:", "    w = u * u * u",
                    "y[i] = w"],
    # a conditional expression whose taken branch is a plain array load (the inputs lie in [0.5, 1.5])
    "ternary_load": ["y[i] = 2.0 * x[i] if x[i] > 3.0 * 3.0 else x[i]"],
    # an in-place add on an element the kernel wrote first: the written value's adjoint must count once
    "element_write_add": ["y[i] = x[i]", "y[i] += 2.0 * x[i]"],
    # two in-place adds on an element of a vector type outside Warp's atomic types (length 9)
    "vec9_element_add_twice": ["y[i] += R(" + ", ".join(["x[i]"] * 9) + ")",
                               "y[i] += R(" + ", ".join(["2.0 * x[i]"] * 9) + ")"],
    # a slice taken inside the kernel (``x`` has more than one dimension, :data:`ACCESS_ARRAY`) and
    # read by element: the slice is a view whose adjoint must reach ``x`` (the row of a 2-D array,
    # the plane of a 3-D array read with two indices, the line of a 3-D array taken with two indices)
    "slice_row_read": ["s = x[i]", "y[i] = s[0] * s[0] + 3.0 * s[1]"],
    "slice_plane_read": ["s = x[i]", "y[i] = s[0, 1] * s[1, 0] + 2.0 * s[1, 1] + 3.0 * s[0, 0]"],
    "slice_line_read": ["s = x[i, 1]", "y[i] = s[0] * s[0] + 3.0 * s[1]"],
}
#: Trailing shape of ``x`` for the access patterns whose input has more than one dimension (``x``
#: is then ``wp.array(dtype=<float>, ndim=1 + len(shape))`` of shape ``(points,) + shape``; every
#: element is a coordinate of the finite differences).
ACCESS_ARRAY = {"slice_row_read": (2,), "slice_plane_read": (2, 2), "slice_line_read": (2, 2)}
#: Element type of ``y`` of an access pattern, without its scalar suffix (default ``vec3``;
#: ``scalar``: ``y`` is an array of the pattern's float type, written without reading it first).
ACCESS_RET = {"local_matrix_write": "mat22", "local_matrix_add": "mat22", "local_alias": "scalar",
              "ternary_load": "scalar", "element_write_add": "scalar", "vec9_element_add_twice": "vec9",
              "slice_row_read": "scalar", "slice_plane_read": "scalar", "slice_line_read": "scalar"}
#: Family of an access pattern in the tables (default: ``local component`` for ``local_*``,
#: ``array access`` otherwise).
ACCESS_FAMILY = {"local_alias": "local variable"}

#: Tile templates: name -> (reduction expression over ``t``, output is a 1-tile).
TILES = {
    "tile_sum": "wp.tile_sum(t)",
    "tile_reduce(add)": "wp.tile_reduce(wp.add, t)",
    "tile_max": "wp.tile_max(t)",
    "tile_min": "wp.tile_min(t)",
    "tile_map(sin)+tile_sum": "wp.tile_sum(wp.tile_map(wp.sin, t))",
}
TILE_N = 8
#: Tile element writes: name -> (element type of the tile without its scalar suffix, or ``scalar``;
#: the write). Each kernel loads a tile of ``TILE_N`` elements from ``m``, replaces one scalar of its
#: first element with ``3 x[0]`` (``x`` a float array of the tile's scalar type) and stores the
#: tile to ``y``: the replaced input entry must get no adjoint, ``x[0]`` three times its weight.
#: Measured in float32 and float64 where the release has tiles (``tile_sum``); a release whose
#: tiles take no element write records ``build_error``.
TILE_WRITES = {
    "tile_element_write": ("scalar", "t[0] = 3.0 * x[0]"),
    "tile_vector_component_write": ("vec3", "t[0][1] = 3.0 * x[0]"),
    "tile_matrix_element_write": ("mat22", "t[0][0, 1] = 3.0 * x[0]"),
}
#: Smallest gap between two elements of a tile input. The selecting reductions (``tile_max``,
#: ``tile_min``, ``tile_argmax`` ...) have a kink wherever two elements tie, and the float32
#: central difference of a coordinate straddles such a kink when the gap is below twice its step
#: (``STEPS["float32"] * max(1, |x|)`` <= 0.015 for |x| <= 1.5): 0.3 is ten times that span.
TILE_GAP = 0.3


def tile_values(rng) -> np.ndarray:
    """Input of a tile template, shape ``(1, TILE_N)``, float64 values in [-1.5, 1.5].

    A shuffled grid of ``TILE_N`` evenly spaced values over [-1.4, 1.4] (spacing 0.4) with a
    uniform jitter of +-0.05 each, so every pair of elements is at least :data:`TILE_GAP` apart:
    no coordinate of a max/min/argmax reduction sits within the finite-difference step of a tie.
    (Uniform draws put the top two of 8 values within 0.02 of each other in about one draw in
    ten; the committed ``tile_max`` cells were inconclusive for that reason.)
    """
    grid = np.linspace(-1.4, 1.4, TILE_N)
    vals = rng.permutation(grid) + rng.uniform(-0.05, 0.05, size=TILE_N)
    return vals.reshape(1, TILE_N)


def template_specs(reg):
    """Specs of the access-pattern templates (always) and the tile templates and tile element writes
    (:data:`TILES`, :data:`TILE_WRITES`; when ``tile_sum`` exists)."""
    out = []
    for pat in ACCESS:
        for dt in ("float32", "float64"):
            c = "f" if dt == "float32" else "d"
            ret = dt if ACCESS_RET.get(pat) == "scalar" else ACCESS_RET.get(pat, "vec3") + c
            family = ACCESS_FAMILY.get(pat, "local component" if pat.startswith("local_") else "array access")
            out.append({"id": f"[{pat}]({ret})", "builtin": f"[{pat}]", "family": family,
                        "args": [["x", dt]], "ret": ret, "dtype": dt, "differentiable": None,
                        "template": pat})
    if "tile_sum" in reg:
        for name in TILES:
            base = name.split("(")[0].split("+")[0]
            diff = None
            f = reg.get(base)
            if f is not None:
                flags = [getattr(o, "is_differentiable", None) for o in _overloads(f)]
                diff = None if any(x is None for x in flags) else all(flags)
            out.append({"id": f"{name}(tile{TILE_N}f)", "builtin": base, "family": "tile",
                        "args": [["t", "float32"]], "ret": "float32", "dtype": "float32", "differentiable": diff,
                        "template": "tile:" + name})
        for name, (elem, _) in TILE_WRITES.items():
            for dt in ("float32", "float64"):
                ret = dt if elem == "scalar" else elem + ("f" if dt == "float32" else "d")
                out.append({"id": f"[{name}]({ret})", "builtin": f"[{name}]", "family": "tile",
                            "args": [["m", ret], ["x", dt]], "ret": ret, "dtype": dt, "differentiable": None,
                            "template": "tile_write:" + name})
    return out


# ---------------------------------------------------------------- code generation


def kernel_source(j: int, spec: dict) -> list:
    """Source lines of kernel ``k{j}`` for ``spec`` (module-level type aliases included)."""
    lines = []
    tpl = spec["template"]
    dt = spec["dtype"]
    if tpl.startswith("tile:"):
        expr = TILES[tpl[5:]]
        lines += [
            "@wp.kernel",
            f"def k{j}(a0: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32)):",
            f"    t = wp.tile_load(a0, shape={TILE_N})",
            f"    s = {expr}",
            "    wp.tile_store(y, s)",
        ]
        return lines
    if tpl.startswith("tile_write:"):
        elem, stmt = TILE_WRITES[tpl[len("tile_write:"):]]
        rt = f"T{j}_r"
        lines += [f"{rt} = {type_expr(spec['ret'])}", "@wp.kernel",
                  f"def k{j}(a0: wp.array(dtype={rt}), a1: wp.array(dtype=wp.{dt}), y: wp.array(dtype={rt})):",
                  f"    t = wp.tile_load(a0, shape={TILE_N})",
                  "    " + stmt.replace("3.0", f"wp.{dt}(3.0)").replace("x[0]", "a1[0]"),
                  "    wp.tile_store(y, t)"]
        return lines
    if tpl in ACCESS:
        rt = f"T{j}_r"
        # the bodies read a0 directly: an array alias (x = a0) does not build with its adjoint on
        # 1.1.0-1.8.1 (no array_t += in the adjoint: every access cell there was a build_error until
        # 2026-12-02), so each cell measures its access pattern alone
        lines += [f"{rt} = {type_expr(spec['ret'])}", "@wp.kernel",
                  f"def k{j}(a0: wp.array(dtype=wp.{dt}{_ndim(tpl)}), y: wp.array(dtype={rt})):",
                  "    i = wp.tid()"]
        if tpl == "element_add":
            lines.append(f"    v = {rt}(wp.{dt}(1.0), wp.{dt}(2.0), wp.{dt}(3.0))")
        lines += ["    " + b.replace("2.0", f"wp.{dt}(2.0)").replace("3.0", f"wp.{dt}(3.0)").replace("4.0", f"wp.{dt}(4.0)")
                  .replace("R(", f"{rt}(").replace("x[i]", "a0[i]").replace("x[i, ", "a0[i, ")
                  for b in ACCESS[tpl]]
        return lines
    params, call = [], []
    for a, (k, s) in enumerate(spec["args"]):
        if s in CONSTANTS:
            call.append(CONSTANTS[s])
        else:
            lines.append(f"T{j}_{a} = {type_expr(s)}")
            params.append(f"a{a}: wp.array(dtype=T{j}_{a})")
            call.append(f"a{a}[i]")
    lines.append(f"T{j}_r = {type_expr(spec['ret'])}")
    params.append(f"y: wp.array(dtype=T{j}_r)")
    lines += ["@wp.kernel", f"def k{j}({', '.join(params)}):", "    i = wp.tid()",
              f"    y[i] = wp.{spec['builtin']}({', '.join(call)})"]
    return lines


def _ndim(tpl: str) -> str:
    """``, ndim=N`` for an access pattern whose input has :data:`ACCESS_ARRAY` dimensions, else ``""``."""
    return f", ndim={1 + len(ACCESS_ARRAY[tpl])}" if tpl in ACCESS_ARRAY else ""


def module_source(specs: list) -> str:
    lines = ["import warp as wp", ""]
    for j, s in enumerate(specs):
        lines += kernel_source(j, s) + [""]
    return "\n".join(lines) + "\n"


def load_module(src: str, folder: str, name: str):
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- inputs


def _unit_quats(rng, n):
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q


def sample_arg(rng, builtin: str, index: int, s: str, points: int) -> np.ndarray:
    """Values (points, size_of(s)) of argument ``index`` of ``builtin`` inside its domain (see :data:`DOMAINS`)."""
    k, sh, _ = parse_type(s)
    n = size_of(s)
    dom = ARG_DOMAINS.get((builtin, index)) or DOMAINS.get(builtin)
    if dom is not None and k in ("scalar", "vec"):
        return rng.uniform(dom[0], dom[1], size=(points, n))
    if k == "quat":
        return _unit_quats(rng, points)
    if k == "transform":
        p = rng.uniform(0.5, 1.5, size=(points, 3)) * rng.choice([-1.0, 1.0], size=(points, 3))
        return np.concatenate([p, _unit_quats(rng, points)], axis=1)
    if k == "mat" and sh[0] == sh[1] and builtin in NEAR_IDENTITY:
        m = np.eye(sh[0])[None] + 0.3 * rng.uniform(-1, 1, size=(points,) + sh)
        return m.reshape(points, n)
    if dom is not None:
        return rng.uniform(dom[0], dom[1], size=(points, n))
    return rng.uniform(0.5, 1.5, size=(points, n)) * rng.choice([-1.0, 1.0], size=(points, n))


# ---------------------------------------------------------------- measurement


class Case:
    """One overload's kernel with its inputs; ``forward`` and ``adjoint`` evaluate it."""

    def __init__(self, spec, kernel, rng, points, device):
        self.spec, self.kernel, self.device = spec, kernel, device
        tpl = spec["template"]
        self.tiled = tpl.startswith("tile:")
        # a tile element write launches one block of TILE_N threads: one point per tile element
        self.tile_write = tpl.startswith("tile_write:")
        self.points = 1 if self.tiled else TILE_N if self.tile_write else points
        # trailing shape of the input array of a multi-dimensional access pattern (ACCESS_ARRAY)
        self.trailing = ACCESS_ARRAY.get(tpl)
        self.np_dt = np.float32 if spec["dtype"] == "float32" else np.float64
        self.args = []  # (index, type_str, values[points, n])
        for a, (k, s) in enumerate(spec["args"]):
            if s in CONSTANTS:
                continue
            if self.tiled:
                vals = tile_values(rng)
            elif self.trailing:
                k = int(np.prod(self.trailing))
                vals = rng.uniform(0.5, 1.5, size=(self.points, k)) * rng.choice([-1.0, 1.0], size=(self.points, k))
            else:
                vals = sample_arg(rng, spec["builtin"], a, s, self.points)
            self.args.append((a, s, vals))
        self.ret = spec["ret"]
        m = TILE_N if False else (1 if self.tiled else size_of(self.ret))
        self.W = rng.uniform(0.5, 1.5, size=(self.points, m)) * rng.choice([-1.0, 1.0], size=(self.points, m))
        self.y0 = None
        if tpl in ACCESS and not tpl.startswith("local_") and ACCESS_RET.get(tpl) != "scalar":
            self.y0 = rng.uniform(0.5, 1.5, size=(self.points, size_of(self.ret)))

    def _wp_arrays(self, vals_list, requires_grad):
        wp = _wp()
        out = []
        for (a, s, _), vals in zip(self.args, vals_list):
            if self.tiled:
                arr = wp.array(vals.reshape(-1).astype(np.float32), dtype=wp.float32, device=self.device,
                               requires_grad=requires_grad)
            else:
                T = eval(type_expr(s), {"wp": wp})
                trail = self.trailing or (() if size_of(s) == 1 else _shape(s))
                arr = wp.array(vals.astype(self.np_dt).reshape((self.points,) + tuple(trail)),
                               dtype=T, device=self.device, requires_grad=requires_grad)
            out.append(arr)
        return out

    def _y(self, requires_grad):
        wp = _wp()
        if self.tiled:
            return wp.zeros(1, dtype=wp.float32, device=self.device, requires_grad=requires_grad)
        T = eval(type_expr(self.ret), {"wp": wp})
        if self.y0 is not None:
            return wp.array(self.y0.astype(self.np_dt), dtype=T, device=self.device, requires_grad=requires_grad)
        return wp.zeros(self.points, dtype=T, device=self.device, requires_grad=requires_grad)

    def _launch(self, ins, y):
        wp = _wp()
        if self.tiled or self.tile_write:
            wp.launch_tiled(self.kernel, dim=[1], inputs=ins + [y], block_dim=TILE_N, device=self.device)
        else:
            wp.launch(self.kernel, dim=self.points, inputs=ins + [y], device=self.device)

    def losses(self, vals_list) -> np.ndarray:
        """Per-point loss sum_j W[i, j] * y[i, j] (float64), shape (points,), and sum |W y| per point."""
        ins = self._wp_arrays(vals_list, False)
        y = self._y(False)
        self._launch(ins, y)
        Y = y.numpy().astype(np.float64).reshape(self.points, -1)
        return (self.W * Y).sum(axis=1), np.abs(self.W * Y).sum(axis=1)

    def adjoint(self):
        wp = _wp()
        ins = self._wp_arrays([v for (_, _, v) in self.args], True)
        y = self._y(True)
        tape = wp.Tape()
        with tape:
            self._launch(ins, y)
        if self.tiled:
            seed = wp.array(self.W.reshape(-1).astype(np.float32), dtype=wp.float32, device=self.device)
        else:
            T = eval(type_expr(self.ret), {"wp": wp})
            seed = wp.array(self.W.astype(self.np_dt).reshape((self.points,) + (() if size_of(self.ret) == 1 else
                                                                                 _shape(self.ret))),
                            dtype=T, device=self.device)
        tape.backward(grads={y: seed})
        return [a.grad.numpy().astype(np.float64).reshape(self.points, -1) for a in ins]


def _shape(s):
    k, sh, _ = parse_type(s)
    return sh if k in ("vec", "mat") else (size_of(s),)


#: Relative tolerance of the adjoint against FD beyond the noise estimate:
#: float64 overloads 1e-6, float32 ones 1e-3 (float32 rounding of the adjoint itself is ~1e-6 relative;
#: 1e-3 leaves room for cancellation in a correct formula).
RTOL = {"float64": 1e-6, "float32": 1e-3}
#: Relative FD steps (times max(1, |x|)): (h1, h2 = h1/2). float64 1e-5 (truncation ~1e-10, rounding ~1e-11);
#: float32 1e-2 (rounding noise eps32/h ~1e-5, truncation ~1e-4 bounded by the two-step difference).
STEPS = {"float64": 1e-5, "float32": 1e-2}
EPS = {"float64": np.finfo(np.float64).eps, "float32": float(np.finfo(np.float32).eps)}


def compare(case: Case) -> dict:
    """Tape adjoint against central finite differences for one overload.

    For every float input coordinate ``c`` (perturbed at all points at once:
    points are independent threads), ``fd_h = (L(x + h e_c) - L(x - h e_c)) / 2h``
    at ``h`` and ``h/2``. The uncertainty of ``fd_{h/2}`` is
    ``|fd_h - fd_{h/2}|`` (truncation) plus ``4 eps |L|_abs / h`` (rounding
    of the forward: float32 for float32 overloads). A coordinate whose two
    steps differ by more than 10% of the larger is on or near a kink and is
    left out (``skipped``).

    Returns
    -------
    dict
        ``state`` (``agrees``, ``wrong`` or ``zero``), ``rel_err`` (max over
        coordinates of |ad - fd| / scale, scale = max |fd|), ``noise`` (the
        largest uncertainty / scale), ``coords``/``skipped`` counts and
        ``points`` (up to two of the worst: inputs, ad, fd).
    """
    dt = case.spec["dtype"]
    ads = case.adjoint()
    base = [v.copy() for (_, _, v) in case.args]
    fds, uncs, ok = [], [], []
    for ai, (a, s, v) in enumerate(case.args):
        fd = np.zeros_like(v)
        un = np.zeros_like(v)
        good = np.ones_like(v, dtype=bool)
        for c in range(v.shape[1]):
            est = []
            for h_rel in (STEPS[dt], STEPS[dt] / 2):
                h = h_rel * np.maximum(1.0, np.abs(v[:, c]))
                p = [b.copy() for b in base]
                m = [b.copy() for b in base]
                p[ai][:, c] += h
                m[ai][:, c] -= h
                lp, ap = case.losses(p)
                lm, am = case.losses(m)
                est.append(((lp - lm) / (2 * h), np.maximum(ap, am) / h))
            (f1, _), (f2, a2) = est
            fd[:, c] = f2
            un[:, c] = np.abs(f1 - f2) + 4 * EPS[dt] * a2
            good[:, c] = np.abs(f1 - f2) <= 0.1 * np.maximum(np.abs(f1), np.abs(f2)) + 8 * EPS[dt] * a2
        fds.append(fd)
        uncs.append(un)
        ok.append(good)
    AD = np.concatenate([g.reshape(case.points, -1) for g in ads], axis=1)
    FD = np.concatenate(fds, axis=1)
    UN = np.concatenate(uncs, axis=1)
    OK = np.concatenate(ok, axis=1)
    res = {"coords": int(OK.size), "skipped": int((~OK).sum())}
    if not OK.any():
        res.update(state="inconclusive", rel_err=None, noise=None, points=[])
        return res
    scale = float(np.max(np.abs(FD[OK])))
    tol = 4 * UN + RTOL[dt] * max(scale, 1e-30)
    with np.errstate(invalid="ignore"):
        err = np.where(OK, np.abs(AD - FD), 0.0)
        bad = OK & ~(err <= tol)  # NaN adjoints count as bad
    denom = max(scale, 1e-30)
    res["noise"] = float(np.max(np.where(OK, UN, 0.0)) / denom) if scale > 0 else 0.0
    finite_err = err[np.isfinite(err)]
    res["rel_err"] = float(np.max(finite_err) / denom) if finite_err.size and scale > 0 else (
        0.0 if scale == 0 and not bad.any() else None)
    if not bad.any():
        res["state"] = "agrees"
        res["points"] = []
        return res
    res["state"] = "zero" if np.all(AD[OK] == 0) else "wrong"
    if np.any(~np.isfinite(AD[OK])):
        res["nonfinite"] = True
    worst = np.argsort(-np.nan_to_num(np.where(bad, err, -1.0), nan=np.inf).max(axis=1))[:2]
    pts = []
    for i in worst:
        pts.append({"inputs": [np.round(v[i], 6).tolist() for (_, _, v) in case.args],
                    "ad": np.round(AD[i], 6).tolist(), "fd": np.round(FD[i], 6).tolist()})
    res["points"] = pts
    return res


def measure(specs: list, *, device: str = "cpu", points: int = 3, seed: int = 0, workdir: str | None = None,
            name: str = "d4w_builtins_batch", log=None) -> dict:
    """Compile ``specs`` as one module and measure each; returns id -> cell dict.

    A build failure of the module is bisected down to the overloads that fail
    (``build_error`` with Warp's message). Seeds: ``seed`` plus the spec's
    position in the sorted id list, so a cell does not depend on its batch.
    """
    wp = _wp()
    workdir = workdir or tempfile.mkdtemp(prefix="d4w-builtins-")
    out = {}

    def run(group, tag):
        src = module_source(group)
        try:
            mod = load_module(src, workdir, f"{name}_{tag}")
            # the first launch builds the whole module (a codegen or compile error of any kernel fails it)
            Case(group[0], getattr(mod, "k0"), np.random.default_rng(0), points, device).losses(
                [v for (_, _, v) in Case(group[0], getattr(mod, "k0"), np.random.default_rng(0), points,
                                         device).args])
        except Exception as exc:
            msg = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300]
            if len(group) == 1:
                out[group[0]["id"]] = {"state": "build_error", "message": msg}
                return
            h = len(group) // 2
            run(group[:h], tag + "a")
            run(group[h:], tag + "b")
            return
        for j, spec in enumerate(group):
            t0 = time.time()
            try:
                rng = np.random.default_rng([seed, _stable_hash(spec["id"])])
                case = Case(spec, getattr(mod, f"k{j}"), rng, points, device)
                cell = compare(case)
            except Exception as exc:
                msg = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300]
                cell = {"state": "build_error", "message": msg}
                if log:
                    log(traceback.format_exc())
            cell["seconds"] = round(time.time() - t0, 3)
            out[spec["id"]] = cell

    run(specs, "m")
    return out


def _stable_hash(s: str) -> int:
    import hashlib

    return int(hashlib.sha256(s.encode()).hexdigest()[:8], 16)
