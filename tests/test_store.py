import hashlib

import pytest



def _harness_imports(root, module: str) -> set:
    """Harness modules (dotted, relative to the package) that ``module``'s source
    imports, at any depth of the file (lazy imports in functions included)."""
    import ast

    def file_of(dotted):
        p = root.joinpath(*dotted.split("."))
        return p / "__init__.py" if (p / "__init__.py").is_file() else (p.with_suffix(".py") if p.with_suffix(".py").is_file() else None)

    f = file_of(module)
    pkg = module.split(".") if f.name == "__init__.py" else module.split(".")[:-1]
    out = set()
    for n in ast.walk(ast.parse(f.read_text())):
        if isinstance(n, ast.ImportFrom) and n.level:
            base = pkg[:len(pkg) - (n.level - 1)] + ((n.module or "").split(".") if n.module else [])
        elif isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] in ("defects4warp", "harness"):
            base = n.module.split(".")[1:]
        else:
            continue
        for cand in [".".join(base + [a.name]) for a in n.names] + [".".join(base)]:
            if cand and file_of(cand):
                out.add(cand)
    return out


def _closure(root, starts) -> set:
    seen, todo = set(), list(starts)
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += _harness_imports(root, m)
    return seen


def _covered(module: str, parts) -> bool:
    path = module.replace(".", "/")
    return any(path == p.removesuffix(".py") or path + "/__init__" == p.removesuffix(".py")
               or path.startswith(p.rstrip("/") + "/") for p in parts)


def test_digests_cover_every_module_the_measuring_code_imports():
    """A stored result is keyed by the code that made it: every harness module
    the engine's worker side (engines, probes, measure, rules, isolation) or the
    oracle's worker side (oracle, capture) imports, at any depth, lies inside
    CODE_PARTS or ORACLE_PARTS, so editing it moves the digest. ``paths`` only
    locates the package (tests/test_oracle.py checks that importing the oracle and
    the capture loads no engine module)."""
    from pathlib import Path

    import defects4warp
    from defects4warp.run.store import CODE_PARTS, ORACLE_PARTS

    root = Path(defects4warp.__file__).parent
    engine = _closure(root, ["engines.reference", "probes.worker", "measure", "rules", "isolation"])
    assert {"probes.worker", "measure.trace", "kernel_cache", "problem"} <= engine
    # modules that move no measured value (where the package is, how JSON is written); the engine's side
    # reaches no run planning or storing module since the import graph runs one way (tests/test_layers.py)
    infrastructure = {"paths", "jsonio"}
    # the release probe reads the builtins conformance results through defects4warp.builtins and bisects
    # the releases of envs.RELEASES: both move diagnoses, so both are in the key
    assert _covered("builtins", CODE_PARTS) and _covered("envs", CODE_PARTS)
    assert sorted(m for m in engine if not _covered(m, CODE_PARTS) and m not in infrastructure) == []
    oracle = _closure(root, ["oracle", "oracle.worker", "oracle.api", "capture", "capture.core"])
    assert {"oracle.worker", "capture.core", "measure.recorder"} <= oracle
    assert sorted(m for m in oracle if not _covered(m, ORACLE_PARTS)) == ["paths"]
    assert not any(_covered(m, ORACLE_PARTS) for m in ("engines.reference", "probes.worker", "rules", "isolation"))


def test_validation_key_moves_with_the_oracle_code_not_the_engine_code(tmp_path, monkeypatch):
    """An engine edit keeps every stored validation; an oracle edit re-measures it."""
    import shutil
    from pathlib import Path

    import defects4warp
    from defects4warp.run import store

    src = Path(defects4warp.__file__).parent
    copy = tmp_path / "harness"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = (store.parts_digest(store.CODE_PARTS, root=copy), store.parts_digest(store.ORACLE_PARTS, root=copy))
    (copy / "engines" / "reference.py").write_text((copy / "engines" / "reference.py").read_text() + "\n# edit\n")
    after_engine = (store.parts_digest(store.CODE_PARTS, root=copy), store.parts_digest(store.ORACLE_PARTS, root=copy))
    assert after_engine[0] != before[0] and after_engine[1] == before[1]
    (copy / "oracle" / "numerics.py").write_text((copy / "oracle" / "numerics.py").read_text() + "\n# edit\n")
    after_oracle = (store.parts_digest(store.CODE_PARTS, root=copy), store.parts_digest(store.ORACLE_PARTS, root=copy))
    assert after_oracle[0] != after_engine[0] and after_oracle[1] != after_engine[1]
    # a data file counts like code: the fitted evidence table is part of the engine's key
    table = next(copy.joinpath("engines").glob("*.yaml"))
    table.write_text(table.read_text() + "\n# edit\n")
    assert store.parts_digest(store.CODE_PARTS, root=copy) != after_oracle[0]
    # so are the builtins conformance results the release probe cites (they were left out of the key,
    # so re-measured builtins kept stale diagnoses), and they are not the oracle's
    after_table = (store.parts_digest(store.CODE_PARTS, root=copy), store.parts_digest(store.ORACLE_PARTS, root=copy))
    cells = next(copy.joinpath("data", "builtins").glob("*.json"))
    cells.write_text(cells.read_text() + "\n")
    assert store.parts_digest(store.CODE_PARTS, root=copy) != after_table[0]
    assert store.parts_digest(store.ORACLE_PARTS, root=copy) == after_table[1]
    # caches are not: a stray .pyc changes nothing
    edited = store.parts_digest(store.CODE_PARTS, root=copy)
    (copy / "engines" / "__pycache__").mkdir(exist_ok=True)
    (copy / "engines" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"x")
    assert store.parts_digest(store.CODE_PARTS, root=copy) == edited
    # the package's own key covers its files (store.py moved into run/ once and, reading its own folder, keyed
    # nothing: the digest of no bytes), and a part that is not there is an error, not a smaller key
    assert store.parts_digest(store.CODE_PARTS) == store.parts_digest(store.CODE_PARTS, root=src)
    assert store.parts_digest(store.CODE_PARTS) != hashlib.sha256().hexdigest()
    with pytest.raises(FileNotFoundError, match="no_such_module.py"):
        store.parts_digest(("engines", "no_such_module.py"), root=copy)
