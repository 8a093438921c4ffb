"""Ground-truth recorder: runs a train.py unmodified and records what its update consumes."""
import os, sys, runpy, importlib.util
import numpy as np
import warp as wp
import warp.optim

REC = []


def snap(x):
    if isinstance(x, wp.array):
        return x.numpy().astype(np.float64).copy()
    return x


def install(kernel_keys=(), optim=True, assign=False):
    orig_launch = wp.launch

    def launch(kernel, *args, **kw):
        key = getattr(kernel, "key", None)
        if key in kernel_keys:
            inputs = kw.get("inputs", args[1] if len(args) > 1 else [])
            outputs = kw.get("outputs", args[2] if len(args) > 2 else [])
            REC.append(("launch", key, [snap(a) for a in list(inputs) + list(outputs)]))
        return orig_launch(kernel, *args, **kw)

    wp.launch = launch
    if optim:
        for cls in (warp.optim.SGD, warp.optim.Adam):
            orig = cls.step

            def step(self, grad, _orig=orig, _name=cls.__name__):
                REC.append(("optim", _name, [snap(p) for p in self.params], [snap(g) for g in grad]))
                return _orig(self, grad)

            cls.step = step


def load_module(folder, name="train"):
    sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name + "_truthcopy", os.path.join(folder, name + ".py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def run_script(folder, argv=()):
    cwd = os.getcwd()
    os.chdir(folder)
    sys.path.insert(0, folder)
    sys.argv = ["train.py", *argv]
    try:
        runpy.run_path(os.path.join(folder, "train.py"), run_name="__main__")
    finally:
        os.chdir(cwd)


def cdiff(f, p, h=1e-6):
    p = np.asarray(p, dtype=np.float64)
    g = np.zeros_like(p)
    flat = p.reshape(-1)
    for j in range(flat.size):
        a = flat.copy(); a[j] += h
        b = flat.copy(); b[j] -= h
        g.reshape(-1)[j] = (f(a.reshape(p.shape)) - f(b.reshape(p.shape))) / (2 * h)
    return g


def relerr(ad, tr):
    ad = np.asarray(ad).ravel(); tr = np.asarray(tr).ravel()
    return float(np.linalg.norm(ad - tr) / max(np.linalg.norm(tr), 1e-30))


def report(name, rows):
    """rows: list of (iteration(1-based), consumed_grad, true_grad)"""
    print(f"== {name}")
    for it, ad, tr in rows:
        ad = np.asarray(ad).ravel(); tr = np.asarray(tr).ravel()
        ratio = np.median(ad[np.abs(tr) > 1e-12] / tr[np.abs(tr) > 1e-12]) if np.any(np.abs(tr) > 1e-12) else float("nan")
        print(f"  iter {it}: rel_err {relerr(ad, tr):.3e}  |true| {np.linalg.norm(tr):.3e}  |ad| {np.linalg.norm(ad):.3e}  median ratio {ratio:.4g}")
        print(f"     ad[:4] {np.array2string(ad[:4], precision=5)} true[:4] {np.array2string(tr[:4], precision=5)}")
