"""Diagnose Warp's own optimisation examples (correct programs) with the shipped engine.

Warp ships differentiable programs in ``warp/examples/optim/``; they are correct, so any
``bug`` verdict on one is a false positive of the engine. This script copies each example
out of the installed release's package (never runs it next to the package), runs
``defects4warp diagnose <example>.py --warp <release> --json ... -- <args>`` on it in a
fresh process, and writes what came back to ``docs/data/warp-examples.json``; ``--render``
prints the Markdown table ``docs/warp-examples.md`` embeds.

Usage::

    python scripts/warp_examples.py [--only NAME ...] [--timeout S] [--out FILE]
    python scripts/warp_examples.py --render [--out FILE]

Each run is bounded by ``--timeout`` seconds (default 900, the engine's own timeout is set
to the same), single process, CPU. The example list (release, file, arguments chosen so one
optimisation step runs and a diagnosis takes minutes) is ``EXAMPLES``; examples that cannot
run here (they import ``pxr`` at module top, or exceed the worker's memory cap) are listed
with the reason in ``CANNOT_RUN`` and not run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "data" / "warp-examples.json"

#: (release, example file stem, arguments after ``--``).
EXAMPLES = [
    ("1.19.0", "example_navier_stokes_perturbation", ["--headless", "--spin-up-steps", "5", "--lead-steps", "4",
                                                      "--train-iters", "3"]),
    ("1.19.0", "example_fluid_checkpoint", ["--headless", "--train-iters", "1", "--num-frames", "4",
                                            "--pressure-iterations", "4"]),
    ("1.19.0", "example_fluid_checkpoint_custom_backward", ["--headless", "--train-iters", "1", "--num-frames", "4",
                                                            "--pressure-iterations", "4"]),
    ("1.9.1", "example_inverse_kinematics", ["--stage_path", "None", "--headless", "--train_iters", "2"]),
    ("1.9.1", "example_trajectory", ["--stage_path", "None", "--headless", "--train_iters", "2", "--num_frames", "20"]),
    ("1.9.1", "example_spring_cage", ["--stage_path", "None", "--headless", "--train_iters", "2", "--num_frames", "10"]),
    ("1.9.1", "example_drone", ["--stage_path", "None", "--headless", "--num_frames", "4", "--num_rollouts", "2"]),
    ("1.9.1", "example_bounce", ["--stage_path", "None", "--headless", "--train_iters", "1"]),
]

#: Examples not run here, with the reason (measured 2026-12-02).
CANNOT_RUN = {
    ("1.19.0", "example_diffray"): "imports pxr (usd-core) at module top; not installed in the per-release environment",
    ("1.19.0", "example_particle_repulsion"): "no Tape.backward(): its kernels are enable_backward=False and it "
                                              "computes the gradient by hand (the capture refuses it, correctly)",
    ("1.0.2", "example_walker"): "imports pxr and opens bear.usd unconditionally",
    ("1.9.1", "example_cloth_throw"): "one re-run costs 9.7 s (7684 launches before the first backward, no flag "
                                      "shortens the rollout): over the time bound",
    ("1.9.1", "example_softbody_properties"): "961 states (fixed in the example) exceed the worker's 16 GiB "
                                              "address-space cap (isolation.DEFAULT_MEMORY_BYTES): MemoryError",
}


def _example_file(release: str, stem: str) -> Path:
    """The example's source in the release's environment (the installed one for the running release)."""
    import importlib.metadata

    if importlib.metadata.version("warp-lang") == release:
        import warp

        return Path(warp.__file__).parent / "examples" / "optim" / f"{stem}.py"
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "defects4warp" / "envs" / f"warp-{release}"
    found = sorted(base.glob(f"lib/python3*/site-packages/warp/examples/optim/{stem}.py"))
    if not found:
        raise FileNotFoundError(f"{stem}.py not found under {base} (create the environment with "
                                f"`defects4warp envs create {release}`)")
    return found[0]


def measure(release: str, stem: str, args: list, timeout: float) -> dict:
    """One diagnosis in a fresh process on a copy of the example; the record written to the JSON."""
    src = _example_file(release, stem)
    with tempfile.TemporaryDirectory(prefix="d4w-example-") as tmp:
        shutil.copy(src, tmp)
        out = Path(tmp) / "diagnosis.json"
        cmd = [sys.executable, "-m", "defects4warp", "diagnose", f"{stem}.py", "--warp", release,
               "--timeout", str(int(timeout)), "--json", str(out), "--", *args]
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=timeout + 120)
            tail = (p.stdout + p.stderr)[-600:]
        except subprocess.TimeoutExpired:
            return {"release": release, "example": stem, "args": args, "verdict": "timeout", "seconds": timeout + 120}
        wall = time.perf_counter() - t0
        rec = {"release": release, "example": stem, "args": args, "seconds": round(wall, 1)}
        if not out.is_file():
            rec.update(verdict="error", error=tail)
            return rec
        d = json.loads(out.read_text())
        rec.update(verdict=d.get("verdict"), signature=d.get("signature"),
                   classes=[[c["id"], c["score"]] for c in (d.get("classes") or [])[:3]],
                   error=d.get("error"), warp_version=d.get("warp_version"))
        return rec


def render(doc: dict) -> str:
    """The Markdown table of ``doc`` (the JSON this script writes)."""
    lines = [f"Measured {doc['measured_on']} with engine code {doc['engine_code']} (commit {doc['commit']}), "
             f"CPU, one process; {doc['machine']}.", "",
             "| example | Warp | verdict | classes (score) | seconds |", "|---|---|---|---|---|"]
    for r in doc["runs"]:
        cls = ", ".join(f"{c} {s:.2f}" for c, s in r.get("classes") or []) or (r.get("error") or "")[:80]
        lines.append(f"| `{r['example']}.py` | {r['release']} | {r['verdict']} | {cls} | {r['seconds']:.0f} |")
    for key, why in sorted(doc["cannot_run"].items()):
        rel, stem = key.split("|")
        lines.append(f"| `{stem}.py` | {rel} | not run | {why} | - |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="example stems to (re)measure; the others are kept from --out")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per diagnosis (default 900)")
    ap.add_argument("--out", type=Path, default=OUT, help=f"JSON file (default {OUT.relative_to(ROOT)})")
    ap.add_argument("--render", action="store_true", help="print the Markdown table of --out and exit")
    a = ap.parse_args(argv)
    if a.render:
        print(render(json.loads(a.out.read_text())))
        return 0
    from defects4warp.machine import describe
    from defects4warp.run.runner import write_json_atomic
    from defects4warp.run.store import code_digest

    old = {(r["release"], r["example"]): r for r in json.loads(a.out.read_text())["runs"]} if a.out.is_file() else {}
    runs = []
    for release, stem, args in EXAMPLES:
        if a.only and stem not in a.only and (release, stem) in old:
            runs.append(old[(release, stem)])
            continue
        print(f"{stem} on {release} ...", flush=True)
        rec = measure(release, stem, args, a.timeout)
        print(f"  {rec['verdict']} {rec.get('classes')} {rec['seconds']} s", flush=True)
        runs.append(rec)
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    m = describe()
    doc = {"measured_on": datetime.date.today().isoformat(), "engine_code": code_digest()[:16], "commit": commit,
           "machine": f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores" if isinstance(m, dict) else str(m),
           "runs": runs, "cannot_run": {f"{r}|{s}": why for (r, s), why in CANNOT_RUN.items()}}
    write_json_atomic(a.out, doc)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
