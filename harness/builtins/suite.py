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
with a noise model for float32 overloads, see
:func:`defects4warp.builtins.check.compare`). This module enumerates the specs
and writes their kernels; :mod:`defects4warp.builtins.check` samples the
inputs and measures them.
"""

from __future__ import annotations

import importlib.util
import os
import sys

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
