"""A private Warp kernel cache for a measuring worker on releases whose CPU
cache names object files without a content hash.

Neutral ground: the engine's worker (``probes/worker.py``) and the oracle's
(``oracle/worker.py``) both import it, and it imports nothing of the package,
so the oracle still shares no module with the engine.
"""

from __future__ import annotations

#: Releases whose shared CPU kernel cache can serve one program another program's module.
#: Warp 1.0.x and 1.1.x name a module's object file after the module alone (``wp_<module>.o``, no
#: content hash): two workers building same-named modules at once (every script is ``__main__``,
#: every adapter ``problem``) overwrite each other's object file, and the loser crashes loading it
#: ("The file was not recognized as a valid object file", then SIGSEGV; measured on 1.0.2 and 1.1.0).
#: Warp 1.2.x hashes the module, but the hash leaves out ``@wp.func_replay`` functions: the buggy and
#: fixed variants of hodoscope-strip-timing-offsets (which differ by a replay function only) both
#: build ``wp_detector_e3b6674``, and whichever compiled first serves both (measured 2026-12-02 on
#: 1.2.2: run in one cache, both variants give a zero gradient, or both the right one, by order; in
#: private caches the fixed variant is right and the buggy zero, as on 1.1.0 and 1.3.3, where the
#: two modules differ).
SHARED_CACHE_BEFORE = (1, 3)


def private_kernel_cache():
    """On a release older than :data:`SHARED_CACHE_BEFORE`, point Warp's kernel cache at a fresh
    temporary folder for this worker (before the program's ``wp.init()``) and return it, a
    ``tempfile.TemporaryDirectory`` (the caller calls ``cleanup()``); on newer releases, or
    without Warp, or with a version string that is not ``major.minor...``, do nothing and return
    None. Costs one compile of each module per worker on those releases."""
    import tempfile

    try:
        import warp
    except Exception:  # noqa: BLE001 - no Warp: the program's import reports it
        return None
    try:
        ver = tuple(int(x) for x in str(warp.config.version).split(".")[:2])
    except ValueError:
        return None
    if ver >= SHARED_CACHE_BEFORE:
        return None
    d = tempfile.TemporaryDirectory(prefix="d4w-kcache-")
    warp.config.kernel_cache_dir = d.name
    return d
