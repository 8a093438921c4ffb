"""Builds the REPORT.md tables from the labels (the *.truth.txt files, written before the tool ran) and
the tool's out.json / out-1.0.2.json. Usage: python make_report.py > ../REPORT_tables.md"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# name: (shape, {release: (label, class, first iteration)})  -- from the truth files
LABELS = {
    "pendulum_damping_fit": ("param-dependent launch before `with tape:`", "bug", "tape_scope", 1),
    "rod_heat_conductivity_windows": ("windowed rollout, one tape per window", "bug", "truncation", 1),
    "cable_sag_profile_fit": ("cached prior gradient; bug after the 1st update", "bug", "stale_gradient_read", 2),
    "oscillator_bank_calibration": ("trainer class owns the tape + warp.optim.Adam; bug after the 1st update", "bug", "missing_tape_zero", 2),
    "ball_drop_restitution": ("in-kernel contact projection + warp.optim.SGD", "bug", "overwrite", 1),
    "hailstone_drag_fall": ("vec3 rollout, assign/numpy write-back", "bug", "nonsmooth_nan", 1),
    "ramp_block_friction": ("@wp.func_grad regularised sign", "bug", "custom_adjoint_error", 1),
    "ground_spring_stiffness_adjoint": ("inner solver with its own tape (+ adjoint solve)", "no_bug", "correct", None),
    "spring_chain_checkpointed": ("checkpointed rollout, per-segment tapes with carried adjoint; class + SGD", "no_bug", "correct", None),
    "hover_thrust_schedule": ("straight-through @wp.func_grad + smooth effort term, Adam", "no_bug", "surrogate_gradient", None),
    "greenhouse_heater_zones": ("staircase (floor) forward + smooth param", "no_bug", "piecewise_constant", None),
    "quarter_car_suspension": ("trainer class owns the tape (reset), Adam, param-dependent launch before tape", "no_bug", "correct", None),
    "cannon_muzzle_velocity": ("params in two buffers swapped each update (vec2)", "no_bug", "correct", None),
    "seabed_depth_sonar": ("two tapes per iteration (data + prior), assign write-back, float64", "no_bug", "correct", None),
}
NO_BUG_CLASSES = {"correct", "piecewise_constant", "surrogate_gradient", "stochastic_forward", "nonsmooth_tie",
                  "fd_precision", "chaotic_horizon"}


def tool(name, suffix):
    path = os.path.join(ROOT, name, f"out{suffix}.json")
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        return json.load(fh)


def row(name, suffix):
    shape, label, cls, it = LABELS[name]
    d = tool(name, suffix)
    if d is None:
        return [name, shape, label, cls, it or "-", "no output", "-", "-", "no", "no"], "error"
    verdict = d.get("verdict")
    classes = d.get("classes") or []
    tcls = classes[0]["id"] if classes else "-"
    cap = d.get("capture") or {}
    tit = (cap.get("iterations") or {}).get("diagnosed", cap.get("iteration", "-"))
    vok = verdict == label
    cok = vok and tcls == cls
    return [name, shape, label, cls, it or "-", verdict, tcls, tit, "yes" if vok else "no",
            "yes" if cok else "no"], verdict


def table(suffix, release):
    out = [f"### Warp {release}", "",
           "| script | shape | label | class | iteration | tool verdict | tool class | tool iteration | verdict ok? | class ok? |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    stats = {"n": 0, "v": 0, "bugs": 0, "bug_cls": 0, "correct": 0, "fp": 0, "err": 0, "bug_found": 0, "it_ok": 0}
    for name in LABELS:
        r, verdict = row(name, suffix)
        out.append("| " + " | ".join(str(x) for x in r) + " |")
        stats["n"] += 1
        stats["v"] += r[8] == "yes"
        if verdict in (None, "error", "inconclusive") or r[5] == "no output":
            stats["err"] += 1
        if LABELS[name][1] == "bug":
            stats["bugs"] += 1
            stats["bug_cls"] += r[9] == "yes"
            if r[5] == "bug":
                stats["bug_found"] += 1
                stats["it_ok"] += str(r[7]) == str(r[4])
        else:
            stats["correct"] += 1
            stats["fp"] += r[5] == "bug"
    out += ["", f"verdict accuracy {stats['v']}/{stats['n']}; class accuracy on bugs {stats['bug_cls']}/{stats['bugs']}; "
                f"false positives on correct scripts {stats['fp']}/{stats['correct']}; capture errors / inconclusive {stats['err']}; "
                f"bugs found at the labelled iteration {stats['it_ok']}/{stats['bug_found']}", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(table("", "1.19.0"))
    print(table("-1.0.2", "1.0.2"))
