#!/usr/bin/env python3
"""The corpus on a CUDA device, per release: cost per variant, and every
verdict that differs from the CPU.

For each release (default 1.12.1, 1.16.0 and 1.19.0) this runs, in the
release's environment (:func:`defects4warp.envs.python_for`):

1. ``defects4warp run --device DEVICE --fresh --no-store`` (the reference
   engine): per variant the device seconds (``cost.device_s``, CUDA events),
   the memory pool's peak (``cost.device_peak_bytes``), the compile seconds
   and module count (``cost.compile_s``, ``cost.compiles``), objective
   evaluations and wall seconds;
2. with ``--oracle`` (default on), ``defects4warp validate --device DEVICE``:
   the independent oracle's verdict per variant on the device;
3. the same two on ``--baseline cpu`` (or read from ``--baseline-json``, a
   JSON this script wrote earlier on CPU), and lists every variant whose
   engine verdict, top-1 class or oracle verdict differs between the device
   and the CPU (a finding for the corpus: atomics' ordering, tiles with
   ``block_dim`` > 1, graph capture).

Outputs ``--json`` (every record; re-readable as ``--baseline-json``) and a
Markdown table (``--markdown``) for docs/benchmarks.md.

Usage (where a GPU is lent; `--jobs 8` on the 16-core device machine)::

    PYTHONPATH=. python scripts/gpu_cost.py --device cuda:0 --jobs 8 \
        --json gpu.json --markdown gpu.md
    PYTHONPATH=. python scripts/gpu_cost.py --device cpu --baseline none \
        --warp installed --corpus tests/... --json cpu.json   # the CPU path (tests)

Exit status: 0 done (the differing verdicts are in the output, not an
error); 1 a CUDA diagnosis lacks positive device cost fields; 2 a run failed
to start (device missing, release not installable).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Releases measured when --warp is not given.
DEFAULT_RELEASES = ("1.12.1", "1.16.0", "1.19.0")


def _harness(args: list, out: str, timeout_s: float) -> dict | None:
    """Run ``python -m defects4warp ARGS --json OUT``; the JSON, or None when none was written."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    res = subprocess.run([sys.executable, "-m", "defects4warp", *args, "--json", out], cwd=ROOT, capture_output=True,
                         text=True, timeout=timeout_s, env=env)
    if not os.path.exists(out):
        print(f"harness {' '.join(args)} wrote no JSON (exit {res.returncode}):\n{res.stderr[-3000:]}",
              file=sys.stderr)
        return None
    return json.loads(Path(out).read_text())


def measure(release: str | None, device: str, cases: str, corpus: str | None, jobs: int, timeout_s: float,
            oracle: bool, total_timeout_s: float) -> dict:
    """Engine run (and oracle validation) of ``cases`` on ``device`` with ``release``.

    Returns
    -------
    dict
        ``{"warp_version", "device", "wall_s", "variants": {"case/variant@scale": {"verdict", "class",
        "oracle", "wall_s", "device_s", "device_peak_bytes", "compile_s", "compiles", "objective_evals"}}}``.

    Raises
    ------
    SystemExit
        Status 2 when a run writes no JSON.
    """
    common = ["--device", device, "--cases", cases, "--jobs", str(jobs), "--timeout", str(timeout_s)]
    common += (["--warp", release] if release else []) + (["--corpus", corpus] if corpus else [])
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gpu-cost-") as tmp:
        run = _harness(["run", *common, "--fresh", "--no-store"], os.path.join(tmp, "run.json"), total_timeout_s)
        if run is None:
            sys.exit(2)
        val = _harness(["validate", *common, "--fresh"], os.path.join(tmp, "val.json"), total_timeout_s) \
            if oracle else None
    out = {"warp_version": run["summary"]["warp_version"], "device": device, "variants": {}}
    for r in run["results"]:
        d = r["diagnosis"]
        cost = d.get("cost") or {}
        classes = d.get("classes") or []
        out["variants"][f"{r['case']}/{r['variant']}@{r['scale']}"] = {
            "verdict": d.get("verdict"), "class": classes[0]["id"] if classes and isinstance(classes[0], dict)
            else (classes[0] if classes else None), "oracle": None, "wall_s": cost.get("wall_s"),
            "device_s": cost.get("device_s"), "device_peak_bytes": cost.get("device_peak_bytes"),
            "compile_s": cost.get("compile_s"), "compiles": cost.get("compiles"),
            "objective_evals": cost.get("objective_evals")}
    if val is not None:
        for rel in val["releases"].values():
            for c in rel["checks"]:
                rec = out["variants"].setdefault(f"{c['case']}/{c['variant']}@{c['scale']}", {})
                rec["oracle"] = (c.get("oracle") or {}).get("verdict") or c.get("status")
    out["wall_s"] = time.perf_counter() - t0
    return out


def differences(dev: dict, base: dict) -> list:
    """Variants whose engine verdict, top-1 class or oracle verdict differ between two :func:`measure` results."""
    out = []
    for key, a in sorted(dev["variants"].items()):
        b = base["variants"].get(key)
        if b is None:
            continue
        for field in ("verdict", "class", "oracle"):
            if a.get(field) != b.get(field):
                out.append({"variant": key, "field": field, dev["device"]: a.get(field), base["device"]: b.get(field)})
    return out


def markdown(doc: dict) -> str:
    """Per-release summary table, the per-variant table and the differing verdicts."""
    fmt = lambda x, p: "-" if x is None else f"{x:.{p}f}"  # noqa: E731
    lines = ["| Warp | device | variants | wall min | device s (sum) | peak MiB (max) | compile s (sum) | "
             "objective evals (sum) | verdicts differing from CPU |", "|---|---|---|---|---|---|---|---|---|"]
    for rel, r in doc["releases"].items():
        v = list(r["device"]["variants"].values())
        tot = lambda k: sum(x.get(k) or 0 for x in v)  # noqa: E731
        peak = max((x.get("device_peak_bytes") or 0 for x in v), default=0)
        lines.append(f"| {rel} | {r['device']['device']} | {len(v)} | {r['device']['wall_s'] / 60:.1f} | "
                     f"{fmt(tot('device_s') or None, 2)} | {fmt(peak / 2**20 if peak else None, 1)} | "
                     f"{tot('compile_s'):.1f} | {tot('objective_evals')} | "
                     f"{'-' if r.get('differences') is None else len(r['differences'])} |")
    lines += ["", "| Warp | variant | verdict | class | oracle | wall s | device s | peak MiB | compile s | evals |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for rel, r in doc["releases"].items():
        for key, x in sorted(r["device"]["variants"].items()):
            pk = x.get("device_peak_bytes")
            lines.append(f"| {rel} | {key} | {x.get('verdict')} | {x.get('class') or '-'} | {x.get('oracle') or '-'} | "
                         f"{fmt(x.get('wall_s'), 2)} | {fmt(x.get('device_s'), 3)} | "
                         f"{fmt(None if pk is None else pk / 2**20, 1)} | {fmt(x.get('compile_s'), 2)} | "
                         f"{x.get('objective_evals') if x.get('objective_evals') is not None else '-'} |")
    diffs = [(rel, d) for rel, r in doc["releases"].items() for d in (r.get("differences") or [])]
    lines += ["", f"Verdicts that differ between the device and the CPU: {len(diffs)}", ""]
    lines += [f"- Warp {rel}: {d['variant']}: {d['field']} " + ", ".join(f"{k}={v}" for k, v in d.items()
                                                                        if k not in ("variant", "field"))
              for rel, d in diffs]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda:0", help="Warp device measured (default cuda:0)")
    ap.add_argument("--warp", default=",".join(DEFAULT_RELEASES),
                    help="comma-separated releases, or 'installed' (default 1.12.1,1.16.0,1.19.0)")
    ap.add_argument("--cases", default="*", help="case globs (default: the whole corpus)")
    ap.add_argument("--corpus", default=None, help="folder of cases (default: the bundled corpus)")
    ap.add_argument("--jobs", type=int, default=1, help="variants in parallel (default 1)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per variant (default 300)")
    ap.add_argument("--total-timeout", type=float, default=3600.0, help="seconds per harness command (default 3600)")
    ap.add_argument("--no-oracle", action="store_true", help="skip the oracle's verdicts (engine only)")
    ap.add_argument("--baseline", default="cpu", help="device compared with ('none': no comparison; default cpu)")
    ap.add_argument("--baseline-json", default=None, help="reuse the baseline of an earlier --json of this script")
    ap.add_argument("--json", dest="json_path", default=None, help="write every record here (rewritten per release)")
    ap.add_argument("--markdown", default=None, help="write the tables here")
    a = ap.parse_args(argv)
    releases = [None if w.strip() == "installed" else w.strip() for w in a.warp.split(",") if w.strip()]
    prior = json.loads(Path(a.baseline_json).read_text()) if a.baseline_json else None
    doc = {"device": a.device, "baseline": a.baseline, "cases": a.cases, "releases": {}}
    bad = []
    for rel in releases:
        dev = measure(rel, a.device, a.cases, a.corpus, a.jobs, a.timeout, not a.no_oracle, a.total_timeout)
        entry = {"device": dev}
        if prior is not None and dev["warp_version"] in prior["releases"]:
            base = prior["releases"][dev["warp_version"]].get("baseline") or prior["releases"][dev["warp_version"]]["device"]
        elif a.baseline != "none":
            base = measure(rel, a.baseline, a.cases, a.corpus, a.jobs, a.timeout, not a.no_oracle, a.total_timeout)
        else:
            base = None
        if base is not None:
            entry["baseline"] = base
            entry["differences"] = differences(dev, base)
        doc["releases"][dev["warp_version"]] = entry
        if a.device.startswith("cuda"):
            for key, x in dev["variants"].items():
                if x.get("verdict") not in (None, "error") and not ((x.get("device_s") or 0) > 0
                                                                   and (x.get("device_peak_bytes") or 0) > 0):
                    bad.append(f"Warp {dev['warp_version']} {key}: device_s={x.get('device_s')!r} "
                               f"device_peak_bytes={x.get('device_peak_bytes')!r}")
        if a.json_path:
            sys.path.insert(0, str(ROOT))
            from defects4warp.run.runner import write_json_atomic

            write_json_atomic(a.json_path, doc)
    text = markdown(doc)
    print(text)
    if a.markdown:
        Path(a.markdown).write_text(text)
    for b in bad:
        print("MISSING " + b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
