"""Twin of camera-tile-gain-8bit-ste: the straight-through surrogate gradient, analytic in float64.
Forward: mean (round(255 clamp(g_t r)) / 255 - ref)^2; backward: d adc/dx := 1 (the deliberate
surrogate), clamp slope 1 inside (0, 1) (no pixel sits on a bound here).

The analytic gradient is the case's oracle reference, ``corpus/camera-tile-gain-8bit-ste/reference.py`` (written from
this twin), loaded here so that it is written once."""
import importlib.util
from pathlib import Path

ENTRY = "calibrate.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "gain_step", ["gain"], ["g"])

_spec = importlib.util.spec_from_file_location(
    "_reference", Path(__file__).resolve().parents[2] / "corpus" / "camera-tile-gain-8bit-ste" / "reference.py")
_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reference)


def grad(params):
    return [_reference.reference_gradient({"gain": params[0]})["gain"]]
