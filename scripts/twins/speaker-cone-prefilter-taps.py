"""Twin of speaker-cone-prefilter-taps: FIR prefilter driving a damped cone (semi-implicit Euler), float64."""
import numpy as np

ENTRY = "train.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "sgd", ["w"], ["dw"])
B, T, NT = 3, 48, 6
SIG = np.stack([np.sin(0.15 * (b + 1) * np.arange(T)) for b in range(B)])


def _play(taps):
    drive = np.zeros((B, T))
    for j in range(NT):
        drive[:, j:] += taps[j] * SIG[:, : T - j]
    pos = np.zeros((B, T + 1))
    vel = np.zeros((B, T + 1))
    for t in range(T):
        v = vel[:, t] + 0.1 * (drive[:, t] - 4.0 * pos[:, t] - 0.6 * vel[:, t])
        vel[:, t + 1] = v
        pos[:, t + 1] = pos[:, t] + 0.1 * v
    return pos


REF = _play(np.linspace(1.2, -0.3, NT))


def loss(params):
    return float(np.sum((_play(params[0]) - REF) ** 2) / (B * (T + 1)))
