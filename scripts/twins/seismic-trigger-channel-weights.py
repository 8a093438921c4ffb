"""Twin of seismic-trigger-channel-weights: Heaviside trigger with the fast-sigmoid surrogate derivative
1 / (1 + 5|v|)^2 (a deliberate surrogate), analytic in float64.

The analytic gradient is the case's oracle reference, ``corpus/seismic-trigger-channel-weights/reference.py`` (written from
this twin), loaded here so that it is written once."""
import importlib.util
from pathlib import Path

ENTRY = "train_trigger.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "descend", ["w"], ["g"])

_spec = importlib.util.spec_from_file_location(
    "_reference", Path(__file__).resolve().parents[2] / "corpus" / "seismic-trigger-channel-weights" / "reference.py")
_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reference)


def grad(params):
    return [_reference.reference_gradient({"w": params[0]})["w"]]
