"""The harness's import graph runs one way: the declared layers, read from the source.

Every import statement of every module under ``harness/`` counts, at any depth
of the file (a function-local import is an edge like any other), with relative
imports resolved. Modules are grouped into units: a top-level module or
subpackage (``defects4warp.X``; ``__init__`` is the package itself), except in
the rooms of :data:`ROOMS` (``corpus``, ``run``, ``report``: folders that group
modules by what they are about), where each module or subpackage is a unit of
its own (``report.html``, ``report.pages``; the room's ``__init__``, a
docstring, is the unit ``report``). Each unit sits in one layer of
:data:`LAYERS`, lowest first. A unit may import units of its own layer or of
lower ones; an edge into a higher layer fails, and so does any cycle between
units (also inside one layer or one room). A new module at the top or in a
room must be given a layer here.

The layers (docs/engines.md, "Layers", says the same, with the rooms):

``base``        utilities every layer uses: paths, JSON, provenance digests,
                the taxonomy, the process sandbox, the evidence table's reader;
                the rooms' ``__init__`` (a docstring each)
``kernel_ast``  static analysis of kernel and program source (the kernel access
                analysis, the source rules)
``worker``      what runs inside a measured process or measures: the Problem
                protocol, the runtime trace, the capture, the probes, the
                oracle, the builtins conformance suite
``program``     cases, stored results and where they run: ``corpus.case``,
                ``run.store``, environments, isolation, ``run.executors``,
                ``run.history``, and the corpus's keeping that runs no engine
                (``corpus.support``, ``corpus.scaffold``)
``engines``     interpretation: engines, the probes' assessors (``engines/assess``), the
                evidence fold, the release differential
``runs``        ``run.runner``, validation, ``run.matrix``, ``run.scoring``,
                ``run.preflight``; ``corpus.conversion`` and ``corpus.mutate``
                (they run the capture, the oracle or the runner)
``reports``     ``report.*``, the program audit, ``corpus.index`` (renders
                corpus/INDEX.md)
``commands``    the command line

Code that runs inside a measured process (:data:`WORKER_ENTRIES` and what they
import at module level) imports only the standard library, NumPy, Warp and
harness modules of the worker layer or below (a function-local import of
anything else runs only on the parent's side or on demand).

:data:`INDEPENDENT` adds one rule inside a layer: the oracle is the ground
truth the engine is scored against, so it imports nothing that measures for
the engine, with no exception (:data:`EXCEPTIONS` is empty: a script variant
reaches the oracle as a replay record, data the capture writes, and the oracle
replays the script with its own instrumentation, harness/oracle/replay.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import defects4warp

ROOT = Path(defects4warp.__file__).resolve().parent
PKG = "defects4warp"

#: Folders whose modules (and subpackages) are units of their own: a room groups what belongs together
#: (the corpus kept, the runs, the rendered results), a layer says what may import what.
ROOMS = ("corpus", "run", "report")

#: (layer, units) from the lowest layer to the highest.
LAYERS = (
    ("base", {"__init__", "paths", "jsonio", "provenance", "taxonomy", "machine", "progress", "sandbox",
              "kernel_cache", "blind", "evidence_table", *ROOMS}),
    ("kernel_ast", {"kernel_access", "rules"}),
    ("worker", {"problem", "measure", "capture", "probes", "oracle", "builtins", "program_gradient"}),
    ("program", {"envs", "isolation", "corpus.case", "corpus.support", "corpus.scaffold",
                 "run.store", "run.executors", "run.history"}),
    ("engines", {"engines"}),
    ("runs", {"validate", "run.runner",
              "corpus.conversion", "corpus.mutate", "run.matrix", "run.scoring", "run.preflight"}),
    ("reports", {"program_audit", "corpus.index",
                 "report.markdown", "report.html", "report.engine_matrix", "report.pages", "report.builtins_page",
                 "report.export", "report.capture_table", "report.program_audit_report"}),
    ("commands", {"commands", "cli", "__main__"}),
)

#: unit -> units it must not import (even in its own layer), apart from :data:`EXCEPTIONS`.
INDEPENDENT = {
    "oracle": {"measure", "capture", "probes", "rules", "kernel_access", "engines", "isolation"},
}

#: (importing module, imported unit) -> why the edge stays. Empty: issue 31 removed the last one (the oracle's
#: worker building a script variant's Problem through the capture).
EXCEPTIONS = {}


#: Modules a measured process starts from: the measurement worker and the probes it loads by name
#: (``probes.MODULES``, and ``probes.REQUESTED`` when a probe asks for one), the capture and trace it runs, the capture's replay-record writer, the oracle's
#: worker and its replay, the builtins worker and the program audit's child.
WORKER_ENTRIES = ("probes.worker", "capture.core", "capture.record", "measure.trace", "oracle.worker",
                  "oracle.replay", "builtins.worker", "program_gradient")
#: Third-party packages a worker-side module may import at module level.
WORKER_THIRD_PARTY = {"numpy", "warp"}


def _modules(root: Path = ROOT) -> dict:
    """Dotted module name (relative to the package, ``""`` for the package) -> (file, is package)."""
    out = {}
    for p in sorted(root.rglob("*.py")):
        parts = list(p.relative_to(root).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (p, is_pkg)
    return out


def _resolve(mods: dict, name: str, is_pkg: bool, node) -> list:
    """Harness modules one import statement names (relative to the package)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
        found = []
        for n in names:
            if n == PKG or n.startswith(PKG + "."):
                found.append(n[len(PKG) + 1:])
        return [m for m in found if m in mods]
    if node.level:
        here = name.split(".") if name else []
        base = here if is_pkg else here[:-1]
        base = base[: len(base) - (node.level - 1)]
        mod = ".".join(base + (node.module.split(".") if node.module else []))
    elif node.module == PKG or (node.module or "").startswith(PKG + "."):
        mod = node.module[len(PKG) + 1:]
    else:
        return []
    subs = [f"{mod}.{a.name}" if mod else a.name for a in node.names]
    subs = [s for s in subs if s in mods]
    if node.module is None and len(subs) == len(node.names):
        return subs  # ``from . import a, b`` of submodules: only the submodules
    return ([mod] if mod in mods else []) + subs


def import_edges(root: Path = ROOT) -> list:
    """``[(importer, imported, line)]`` over every import statement of every module (lazy ones included)."""
    mods = _modules(root)
    edges = []
    for name, (path, is_pkg) in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _resolve(mods, name, is_pkg, node):
                    edges.append((name, target, node.lineno))
    return edges


def unit(module: str) -> str:
    """The unit of a module: its top-level module or subpackage (``measure.trace`` -> ``measure``; the package
    -> ``__init__``), in a room of :data:`ROOMS` its module or subpackage there (``report.pages.prose`` ->
    ``report.pages``; the room's ``__init__`` -> ``report``)."""
    if not module:
        return "__init__"
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] in ROOMS else parts[0]


def _layer_of() -> dict:
    out = {}
    for i, (_, units) in enumerate(LAYERS):
        for u in units:
            assert u not in out, f"unit {u} is declared in two layers"
            out[u] = i
    return out


def upward_edges(edges: list, layers: tuple = LAYERS) -> list:
    """Messages for the edges from a unit into a unit of a higher layer."""
    rank = {u: i for i, (_, units) in enumerate(layers) for u in units}
    out = []
    for a, b, line in edges:
        ua, ub = unit(a), unit(b)
        if ua != ub and rank[ub] > rank[ua]:
            out.append(f"{a or PKG}:{line} imports {b} ({ua} is in layer {layers[rank[ua]][0]}, "
                       f"{ub} in the higher layer {layers[rank[ub]][0]})")
    return sorted(out)


def unit_cycles(edges: list) -> list:
    """Strongly connected components of more than one unit (Tarjan), each with the edges inside it."""
    graph = {}
    for a, b, line in edges:
        ua, ub = unit(a), unit(b)
        if ua != ub:
            graph.setdefault(ua, {}).setdefault(ub, []).append(f"{a or PKG}:{line}->{b}")
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return [(sorted(c), sorted(e for a in c for b, es in graph.get(a, {}).items() if b in c for e in es))
            for c in comps]


def forbidden_edges(edges: list, independent: dict = INDEPENDENT, exceptions: dict = EXCEPTIONS) -> list:
    """Messages for edges :data:`INDEPENDENT` forbids and :data:`EXCEPTIONS` does not allow."""
    return sorted(f"{a}:{line} imports {b} ({unit(a)} must not import {unit(b)})" for a, b, line in edges
                  if unit(b) in independent.get(unit(a), ()) and (a, unit(b)) not in exceptions)


@pytest.fixture(scope="module")
def edges():
    return import_edges()


def test_every_unit_has_one_layer():
    """A new top-level module or subpackage must be placed in a layer; a layer names no unit that is gone."""
    layer = _layer_of()
    units = {unit(m) for m in _modules()}
    assert sorted(units - set(layer)) == [], "units without a layer in tests/test_layers.py LAYERS"
    assert sorted(set(layer) - units) == [], "layers name units that no longer exist"


def test_the_graph_is_read_from_every_import(edges):
    """The reader sees relative, absolute, package-level and function-local imports (measured on
    the tree: these edges exist, so an empty edge list cannot pass the tests below)."""
    got = {(a, b) for a, b, _ in edges}
    assert ("engines.reference", "engines.release") in got  # from . import release as release_probe
    assert ("probes.trace", "measure.trace") in got  # function-local
    assert ("rules.unit", "kernel_access") in got  # from ..kernel_access import ...
    assert ("cli", "commands._common") in got  # from .commands._common import ... (the verbs: cli.VERBS, by name)
    assert ("oracle.worker", "oracle.replay") in got  # function-local, inside the package
    assert ("validate", "capture.record") in got  # the orchestration makes the replay record
    assert ("report.pages.sources", "run.matrix") in got  # from ...run.matrix import ... (room to room)
    assert ("corpus.mutate.admit", "paths") in got  # from ...paths import ... (a room's subpackage to the root)
    assert len(edges) > 300


def test_a_room_holds_units_of_its_own():
    """Outside the rooms a unit is the top-level module or subpackage; inside one, the module or subpackage
    there, so a room may hold units of several layers."""
    assert [unit(m) for m in ("", "measure.trace", "engines", "report", "report.html", "report.pages.prose",
                              "corpus.mutate.admit", "run.scoring")] == [
        "__init__", "measure", "engines", "report", "report.html", "report.pages", "corpus.mutate", "run.scoring"]


def test_no_edge_runs_up_the_layers(edges):
    assert upward_edges(edges) == []


def test_no_cycle_between_units(edges):
    assert unit_cycles(edges) == []


def test_the_oracle_imports_nothing_that_measures_for_the_engine(edges):
    """No edge from the oracle into measurement code, and no exception to that rule; the oracle's own edges
    are read (so an empty answer is not a reader that saw nothing)."""
    assert EXCEPTIONS == {}
    assert forbidden_edges(edges) == []
    oracle = {(a, b) for a, b, _ in edges if unit(a) == "oracle"}
    assert ("oracle.worker", "problem") in oracle and ("oracle.replay", "paths") in oracle
    assert not {b for _, b in oracle} & {"capture", "measure", "probes", "engines", "isolation", "rules",
                                          "kernel_access"}
    assert not any(unit(b) in INDEPENDENT["oracle"] for _, b in oracle)


def test_the_checks_name_the_offending_edge():
    """An upward edge, a cycle and a forbidden oracle edge (also the oracle's old edge into the capture) are each
    reported with the importing module and line."""
    fake = [("measure.trace", "engines.evidence", 12), ("engines.reference", "measure.trace", 3),
            ("oracle.api", "probes.worker", 7), ("oracle.worker", "capture", 290)]
    assert upward_edges(fake) == ["measure.trace:12 imports engines.evidence (measure is in layer worker, "
                                  "engines in the higher layer engines)"]
    assert unit_cycles(fake) == [(["engines", "measure"], ["engines.reference:3->measure.trace",
                                                           "measure.trace:12->engines.evidence"])]
    assert forbidden_edges(fake) == ["oracle.api:7 imports probes.worker (oracle must not import probes)",
                                     "oracle.worker:290 imports capture (oracle must not import capture)"]


def _module_level_imports(mods: dict, name: str) -> tuple:
    """(harness modules, other top-level packages) that importing ``name`` runs: its module-level
    import statements (inside ``if``/``try`` too, not inside functions or classes), with the
    packages above each harness module."""
    import sys

    path, is_pkg = mods[name]
    harness, other = set(), set()

    def walk(body):
        for n in body:
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                for m in _resolve(mods, name, is_pkg, n):
                    parts = m.split(".")
                    harness.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
                if isinstance(n, ast.Import):
                    other.update(a.name.split(".")[0] for a in n.names)
                elif not n.level:
                    other.add(n.module.split(".")[0])
            elif isinstance(n, (ast.If, ast.Try)):
                for block in (n.body, n.orelse, getattr(n, "finalbody", [])):
                    walk(block)
                for h in getattr(n, "handlers", []):
                    walk(h.body)

    walk(ast.parse(path.read_text(encoding="utf-8")).body)
    other -= set(sys.stdlib_module_names) | {PKG, "__future__"}
    return {m for m in harness if m in mods}, other


def test_the_worker_side_imports_only_the_standard_library_numpy_and_warp():
    """What a measured process imports when it starts (module level, transitively from
    :data:`WORKER_ENTRIES` and every probe module) lies in the worker layer or below and
    needs no third-party package but NumPy and Warp (no PyYAML, no packaging, no click)."""
    from defects4warp.probes import MODULES, REQUESTED

    mods = _modules()
    rank = _layer_of()
    worker = next(i for i, (name, _) in enumerate(LAYERS) if name == "worker")
    seen, todo, bad = set(), [*WORKER_ENTRIES, *(f"probes.{m}" for m in (*MODULES, *REQUESTED))], []
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        harness, other = _module_level_imports(mods, m)
        bad += [f"{m} imports {p} at module level" for p in sorted(other - WORKER_THIRD_PARTY)]
        bad += [f"{m} imports {h} ({unit(h)} lies above the worker layer)" for h in sorted(harness)
                if rank[unit(h)] > worker]
        todo += sorted(harness)
    assert {"measure.recorder", "kernel_access", "probes.launches", "oracle.numerics", "probes.ablation"} <= seen
    assert bad == []
    # the reader sees a third-party import where there is one: the source assessor (parent side,
    # never loaded by the worker) needs packaging
    assert "engines.assess.source" not in seen
    assert _module_level_imports(mods, "engines.assess.source")[1] == {"packaging"}


#: The house issue's size targets for harness/: a module a reader can hold, a function that fits a screen.
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80


def _sizes(root: Path):
    """``(modules over MAX_MODULE_LINES, functions over MAX_FUNCTION_LINES)`` of the ``.py`` files under
    ``root``, each as ``"path:line name (n lines)"``."""
    import ast

    big_modules, big_functions = [], []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(root.parent).as_posix()
        n = len(text.splitlines())
        if n > MAX_MODULE_LINES:
            big_modules.append(f"{rel} ({n} lines)")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    big_functions.append(f"{rel}:{node.lineno} {node.name} ({length} lines)")
    return big_modules, big_functions


def test_no_module_or_function_over_the_size_targets():
    assert len(list(ROOT.rglob("*.py"))) > 100  # the package's source folder, read in full
    assert _sizes(ROOT) == ([], [])


def test_the_size_check_names_what_is_too_long(tmp_path):
    pkg = tmp_path / "harness"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (pkg / "long.py").write_text(f"def short():\n    return 1\n\n\ndef long_one():\n{body}\n")
    (pkg / "big.py").write_text("\n" * (MAX_MODULE_LINES + 1))
    assert _sizes(pkg) == ([f"harness/big.py ({MAX_MODULE_LINES + 1} lines)"],
                           [f"harness/long.py:5 long_one ({MAX_FUNCTION_LINES + 1} lines)"])
