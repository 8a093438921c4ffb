"""Re-run `defects4warp diagnose train.py` (no flags but --warp) on every held-out blind-trial script, in copies
under OUT (two at a time, 300 s each), and tabulate against the labels of the trials' REPORT tables.

    python rerun.py OUT [WARP] [NAME,NAME,...]
"""
import json, re, shutil, subprocess, sys, time
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor

ROOT = Path(__file__).resolve().parent.parent
out_dir = Path(sys.argv[1]); warp = sys.argv[2] if len(sys.argv) > 2 else None
only = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else None
labels = {}
for rep in ROOT.glob("*/REPORT.md"):
    for line in rep.read_text().splitlines():
        m = re.match(r"\| (\w+) \| ([^|]*) \| (bug|no_bug) \| (\w+) \| ([-\d]+) \|", line)
        if m and m.group(1) not in labels:
            labels[m.group(1)] = (rep.parent.name, m.group(3), m.group(4), m.group(5))
def one(name):
    day, verdict, cls, it = labels[name]
    d = out_dir / name
    shutil.rmtree(d, ignore_errors=True); d.mkdir(parents=True)
    for f in (ROOT / day / name).glob("*.py"):
        shutil.copy(f, d / f.name)
    cmd = ["timeout", "300", "defects4warp", "diagnose", "train.py", "--json", "out.json"] + (["--warp", warp] if warp else [])
    t0 = time.time()
    p = subprocess.run(cmd, cwd=d, capture_output=True, text=True)
    (d / "tool.log").write_text(p.stdout + p.stderr)
    try:
        o = json.loads((d / "out.json").read_text())
        diag = o.get("diagnosis") or o
        tv = diag.get("verdict"); tc = (diag.get("classes") or [{}])[0].get("id")
        ti = ((diag.get("capture") or {}).get("iterations") or {}).get("diagnosed")
    except Exception as exc:
        tv = tc = ti = f"ERR rc={p.returncode}"
    return name, verdict, cls, it, tv, tc, ti, round(time.time() - t0, 1)
names = sorted(n for n in labels if only is None or n in only)
with ThreadPoolExecutor(2) as ex:
    rows = list(ex.map(one, names))
ok_v = ok_c = 0
for r in rows:
    v = r[1] == r[4]; c = r[2] == r[5]
    ok_v += v; ok_c += c
    print(f"{r[0]:34s} {r[1]:7s} {r[2]:22s} it{r[3]:>3s} | {str(r[4]):7s} {str(r[5]):22s} it{str(r[6]):>4s} {r[7]:6.1f}s {'' if v else 'VERDICT'} {'' if c else 'class'}")
print(f"verdict {ok_v}/{len(rows)}  class {ok_c}/{len(rows)}")
