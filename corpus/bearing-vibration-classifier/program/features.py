import numpy as np


def make_dataset(n, n_features, seed):
    np.random.seed(seed)
    w_true = np.random.randn(n_features)
    rms = np.abs(np.random.randn(n, n_features)) + 0.1 * np.random.rand(n, n_features)
    x = np.log(rms) + 0.3 * np.random.randn(n, n_features)
    logits = x @ w_true + 0.5
    y = (np.random.rand(n) < 1.0 / (1.0 + np.exp(-logits))).astype(np.float64)
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    return (x - mean) / std, y
