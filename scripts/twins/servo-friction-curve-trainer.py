"""Twin of servo-friction-curve-trainer: mean squared residual of tanh Coulomb + viscous friction,
float64 model of a float32 script; the bench data are regenerated with the script's seed."""
import numpy as np

ENTRY = "fit.py"
ARGS = ["--epochs", "4"]
HOOK = ("optim",)
_rng = np.random.default_rng(3)
V = np.linspace(-2.0, 2.0, 24)
TAU = (0.8 * np.tanh(3.0 * V) + 0.12 * V + _rng.normal(0.0, 0.01, 24)).astype(np.float32).astype(np.float64)
V = V.astype(np.float32).astype(np.float64)


def loss(params):
    c, s, b = params[0]
    return float(np.mean((c * np.tanh(s * V) + b * V - TAU) ** 2))
