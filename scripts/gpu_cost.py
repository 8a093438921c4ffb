#!/usr/bin/env python3
"""GPU cost check: a small release matrix on a CUDA device, asserting the
device-seconds and memory fields of every diagnosis are present and positive.

The reference engine times its probes with CUDA events (``cost.device_s``,
seconds between two ``wp.Event`` records) and reads the memory pool's
high-water mark (``cost.device_peak_bytes``, ``wp.get_mempool_used_mem_high``)
on CUDA devices only (:meth:`harness.probes.worker.Measurement.device_stop`).
This script runs ``defects4warp run --device DEVICE --fresh --no-store`` on a
few cases for each release and prints a Markdown table for docs/benchmarks.md.

Usage::

    python scripts/gpu_cost.py                         # installed Warp, cuda:0, first 3 cases
    python scripts/gpu_cost.py --warp 1.16.0,1.19.0 --cases 'anchor-*' --markdown gpu.md

Exit status: 0 every diagnosis that was not an ``error`` carries both fields
with positive values; 1 otherwise (the offending runs are listed); 2 the
device is not available or a run failed to start.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Cases run when --cases is not given: the first N bundled case ids.
DEFAULT_N_CASES = 3


def default_cases(n: int = DEFAULT_N_CASES) -> str:
    sys.path.insert(0, str(ROOT))
    from harness.case import default_corpus, load_corpus

    cases, _ = load_corpus(default_corpus())
    return ",".join(c.id for c in cases[:n])


def run_release(release: str | None, device: str, cases: str, timeout_s: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="gpu-cost-") as tmp:
        out = os.path.join(tmp, "run.json")
        cmd = [sys.executable, "-m", "harness", "run", "--device", device, "--cases", cases, "--fresh", "--no-store",
               "--json", out, "--timeout", str(timeout_s)] + (["--warp", release] if release else [])
        res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if not os.path.exists(out):
            print(res.stderr[-3000:], file=sys.stderr)
            sys.exit(2)
        return json.loads(Path(out).read_text())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--warp", default=None, help="comma-separated releases (default: the installed one)")
    ap.add_argument("--cases", default=None, help="case globs (default: the first 3 bundled cases)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per variant")
    ap.add_argument("--markdown", default=None, help="also write the table here")
    a = ap.parse_args(argv)
    cases = a.cases or default_cases()
    releases = [w.strip() for w in a.warp.split(",")] if a.warp else [None]
    rows, bad = [], []
    for rel in releases:
        doc = run_release(rel, a.device, cases, a.timeout)
        s = doc["summary"]
        for r in doc["results"]:
            d = r["diagnosis"]
            cost = d.get("cost") or {}
            ds, peak = cost.get("device_s"), cost.get("device_peak_bytes")
            label = f"Warp {s['warp_version']} {r['case']}/{r['variant']}@{r['scale']}"
            if d["verdict"] == "error":
                bad.append(f"{label}: error diagnosis: {d.get('error')}")
            elif not (isinstance(ds, (int, float)) and ds > 0 and isinstance(peak, int) and peak > 0):
                bad.append(f"{label}: device_s={ds!r} device_peak_bytes={peak!r} {cost.get('device_note', '')}")
            rows.append((s["warp_version"], r["case"], r["variant"], d["verdict"], cost.get("wall_s"), ds,
                         None if peak is None else peak / 2**20))
    fmt = lambda x, p: "-" if x is None else f"{x:.{p}f}"  # noqa: E731
    lines = [f"| Warp | case | variant | verdict | wall s | device s | peak MiB |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {w} | {c} | {v} | {vd} | {fmt(ws, 2)} | {fmt(ds, 3)} | {fmt(pk, 1)} |"
              for w, c, v, vd, ws, ds, pk in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.markdown:
        Path(a.markdown).write_text(text)
    for b in bad:
        print("MISSING " + b, file=sys.stderr)
    print(f"{len(rows)} diagnoses, {len(bad)} without positive device cost fields", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
