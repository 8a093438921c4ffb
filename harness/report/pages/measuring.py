"""``pages --measure``: fill in, one release at a time, the validation and engine files the pages need
(and the baseline engines' files of docs/engines.md)."""

from __future__ import annotations

import datetime
from pathlib import Path

from ..engine_matrix import (bundle_path, corpus_digest, data_path, engine_identity, measure_release, read,
                             read_bundle, stale_reason, write, write_bundle)
from ...engines import get_engine
from ...envs import ENGINE_MIN_RELEASE, RELEASES
from ...machine import describe
from ...run.runner import plan
from ...run.store import code_digest
from ...validate import validate_releases
from .sources import BASELINE_ENGINES, BASELINE_RELEASE, ROOT, _vkey, baseline_path, engine_docs, validated_releases


def missing_releases(releases=None, root: Path = ROOT) -> list:
    """The releases of ``releases`` (default :data:`defects4warp.envs.RELEASES`) no committed validation covers."""
    have = validated_releases(root)
    return [r for r in (releases or RELEASES) if r not in have]


def unmeasured_releases(releases=None, root: Path = ROOT) -> list:
    """The releases of ``releases`` (default :data:`defects4warp.envs.RELEASES`) with no engine file."""
    have = engine_docs(root)
    return [r for r in (releases or RELEASES) if r not in have]


def older_engine_releases(releases=None, root: Path = ROOT) -> list:
    """The releases of ``releases`` (default :data:`defects4warp.envs.RELEASES`)
    whose engine file was measured with built-in engine code other than this
    checkout's (:func:`defects4warp.run.store.code_digest`)."""
    have, now = engine_docs(root), code_digest()[:16]
    return [r for r in (releases or RELEASES) if r in have
            and (have[r].get("engine") or {}).get("code") not in (None, now)]


def measure_order(releases: list) -> list:
    """The order ``pages --measure`` takes ``releases`` in: the releases the
    engine was built on (:data:`defects4warp.envs.ENGINE_MIN_RELEASE` and
    newer) oldest first, then the older ones newest first, so that a
    measurement cut short keeps the releases that matter most."""
    new = sorted((r for r in releases if _vkey(r) >= _vkey(ENGINE_MIN_RELEASE)), key=_vkey)
    old = sorted((r for r in releases if _vkey(r) < _vkey(ENGINE_MIN_RELEASE)), key=_vkey, reverse=True)
    return new + old


def measure(cases: list, releases: list, root: Path = ROOT, *, engine_name: str = "reference", device: str = "cpu",
            jobs: int = 1, timeout_s: float = 300.0, store=None, fresh: bool = False, executor=None,
            validate: bool = True, programs: str = "auto", selection: str = "*", on_result=None, on_start=None,
            log=None) -> list:
    """Fill in, one release at a time, what the pages need for ``releases``.

    For each release (in the order given): when no committed validation
    covers it and ``validate`` is true, validate ``cases`` with the oracle
    (``docs/data/validation-<release>.json``); then, when its engine file is
    missing or stale (:func:`defects4warp.report.engine_matrix.stale_reason`), run the
    engine and write ``docs/data/engine-<release>.json``. Each file is written
    atomically once its release is complete, so a killed measurement keeps
    whole releases; results in ``store`` are reused (a killed release resumes).
    ``on_start(release, runs)`` is called before each engine run and
    ``on_result(record)`` after each diagnosis (progress); ``log(text)`` gets
    one line per step.

    Returns
    -------
    list[tuple]
        ``(release, what)`` for each file written (``"validation"`` or ``"engine"``).
    """
    log = log or (lambda _m: None)
    ident = engine_identity(get_engine(engine_name, timeout_s=timeout_s))
    digest = corpus_digest(plan(cases, programs=programs))
    done = []
    for rel in releases:
        if validate and rel not in validated_releases(root):
            log(f"Warp {rel}: validating {len(cases)} cases with the oracle (no committed validation)")
            validate_releases(cases, [rel], device=device, jobs=jobs, timeout_s=timeout_s, store=store, fresh=fresh,
                              executor=executor, programs=programs,
                              json_path=str(root / "docs" / "data" / f"validation-{rel}.json"),
                              meta={"machine": describe(), "measured_on": datetime.date.today().isoformat()})
            done.append((rel, "validation"))
        if _measure_file(data_path(root, rel), rel, cases, ident, digest, engine_name=engine_name, device=device,
                         jobs=jobs, timeout_s=timeout_s, store=store, fresh=fresh, executor=executor,
                         programs=programs, selection=selection, on_result=on_result, on_start=on_start, log=log):
            done.append((rel, "engine"))
    return done


def _measure_file(path: Path, rel: str, cases: list, ident: dict, digest: str, *, engine_name: str, device: str,
                  jobs: int, timeout_s: float, store, fresh: bool, executor, programs: str, selection: str,
                  on_result, on_start, log) -> bool:
    """Measure one engine-release file at ``path`` when it is missing or stale
    (:func:`defects4warp.report.engine_matrix.stale_reason`) or ``fresh``; True when written."""
    try:
        old = read(path) if path.is_file() else None
    except Exception as exc:  # noqa: BLE001 - an unreadable file is measured again, saying why
        old, why = None, f"unreadable ({exc})"
    else:
        why = stale_reason(old, ident, digest, device)
    if why is None and not fresh:
        log(f"Warp {rel}: {path.name} is current (engine {ident['name']} {ident['version']}, same corpus); kept")
        return False
    log(f"Warp {rel}: running {ident['name']} {ident['version']} on {len(cases)} cases ({why or '--fresh'})")
    if on_start:
        on_start(rel, len(plan(cases, programs=programs)))
    seed = None
    if bundle_path(path).is_file() and not fresh:
        try:
            seed = read_bundle(bundle_path(path))[1]
        except Exception as exc:  # noqa: BLE001 - an unreadable bundle is measured again, saying why
            log(f"Warp {rel}: {bundle_path(path).name} unreadable ({exc}); measuring every run")
    entries = []
    doc = measure_release(rel, cases, engine_name=engine_name, device=device, jobs=jobs, timeout_s=timeout_s,
                          store=store, fresh=fresh, executor=executor, on_result=on_result, programs=programs,
                          selection=selection, seed=seed, bundle=entries, log=log)
    path.parent.mkdir(parents=True, exist_ok=True)
    if entries:
        write_bundle(bundle_path(path), {"release": rel, "warp_version": doc["warp_version"], "engine": doc["engine"],
                                         "device": device, "corpus": doc["corpus"]}, entries)
    write(path, doc)
    per = f", {doc['cpu_s'] / doc['measured']:.1f} CPU s per diagnosed run" if doc["measured"] else ""
    log(f"Warp {rel}: wrote {path} ({len(doc['runs'])} runs: {doc['measured']} diagnosed, {doc['reused']} reused; "
        f"{doc['wall_s']:.0f} s wall, {doc['cpu_s']:.0f} CPU s{per})")
    return True


def measure_baselines(cases: list, root: Path = ROOT, *, release: str = BASELINE_RELEASE,
                      engines: tuple = BASELINE_ENGINES, device: str = "cpu", jobs: int = 1, timeout_s: float = 300.0,
                      store=None, fresh: bool = False, executor=None, programs: str = "auto", selection: str = "*",
                      on_result=None, on_start=None, log=None) -> list:
    """Measure each baseline engine of ``engines`` on ``release`` into
    ``docs/data/baselines/<engine>-<release>.json`` (:func:`baseline_path`)
    where the file is missing or stale, one engine at a time, as
    :func:`measure` does for the reference engine (same arguments; results in
    ``store`` are reused).

    Returns
    -------
    list[str]
        The engines whose file was written.
    """
    log = log or (lambda _m: None)
    digest = corpus_digest(plan(cases, programs=programs))
    done = []
    for name in engines:
        ident = engine_identity(get_engine(name, timeout_s=timeout_s))
        if _measure_file(baseline_path(root, name, release), release, cases, ident, digest, engine_name=name,
                         device=device, jobs=jobs, timeout_s=timeout_s, store=store, fresh=fresh, executor=executor,
                         programs=programs, selection=selection, on_result=on_result, on_start=on_start, log=log):
            done.append(name)
    return done
