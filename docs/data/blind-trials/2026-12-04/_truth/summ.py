import json, os, sys
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
names = sys.argv[1:] or sorted(d for d in os.listdir(ROOT) if os.path.isfile(os.path.join(ROOT, d, "train.py")))
for n in names:
    p = os.path.join(ROOT, n, "out.json")
    if not os.path.exists(p):
        print(n, "NO out.json"); continue
    d = json.load(open(p))
    cap = d.get("capture") or {}
    it = cap.get("iterations") or {}
    cls = [(c["id"], c["score"]) for c in d.get("classes", [])[:2]]
    chk = [(c.get("iteration"), c.get("status") or c.get("result")) for c in it.get("checked", [])] if it else []
    print(f"{n:28s} {d.get('verdict'):12s} sig={d.get('signature')} top={cls} iter={cap.get('iteration')} diag={it.get('diagnosed')} params={[p.get('name') for p in cap.get('params', [])]} err={d.get('error')}")
    print("     checked:", chk)
