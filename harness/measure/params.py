"""A flat float64 view of a problem's ``params`` for finite differences."""

from __future__ import annotations

import numpy as np


class FlatParams:
    """All elements of ``params`` (dict of wp.array) as one float64 vector.

    Vector dtypes (``wp.vec3`` ...) are flattened component-wise in the order
    of ``arr.numpy()``. ``set`` writes through ``wp.array.assign`` and returns
    the values actually stored (after rounding to the array's dtype), so finite
    differences divide by the step that was really taken.
    """

    def __init__(self, params: dict):
        self.params = params
        self.names = list(params)
        self.shapes, self.dtypes, self.sizes = [], [], []
        for k in self.names:
            v = params[k].numpy()
            self.shapes.append(v.shape)
            self.dtypes.append(v.dtype)
            self.sizes.append(int(v.size))
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(int)
        self.n = int(self.offsets[-1])

    def get(self) -> np.ndarray:
        """Current values, shape (n,), float64."""
        return np.concatenate([np.asarray(self.params[k].numpy(), dtype=np.float64).ravel() for k in self.names])

    def set(self, flat: np.ndarray) -> np.ndarray:
        """Write ``flat`` (shape (n,)) into the arrays; return the stored values."""
        for i, k in enumerate(self.names):
            a, b = self.offsets[i], self.offsets[i + 1]
            block = np.asarray(flat[a:b], dtype=self.dtypes[i]).reshape(self.shapes[i])
            self.params[k].assign(block)
        return self.get()

    def owner(self, index: int) -> tuple:
        """(param name, flat index within that param) of a global index."""
        i = int(np.searchsorted(self.offsets, index, side="right") - 1)
        return self.names[i], int(index - self.offsets[i])

    def flatten_gradient(self, grad) -> np.ndarray:
        """A gradient dict (name -> array of the param's shape) as shape (n,).

        Raises
        ------
        ValueError
            If a key is missing or a shape differs from the param's.
        """
        if not isinstance(grad, dict):
            raise ValueError(f"gradient() returned {type(grad).__name__}, expected dict[str, ndarray]")
        parts = []
        for i, k in enumerate(self.names):
            if k not in grad:
                raise ValueError(f"gradient() returned no entry for param '{k}' (keys: {sorted(grad)})")
            g = np.asarray(grad[k], dtype=np.float64)
            if g.size != self.sizes[i]:
                raise ValueError(
                    f"gradient()['{k}'] has shape {g.shape}, param has shape {self.shapes[i]}"
                )
            parts.append(g.ravel())
        return np.concatenate(parts)

    def scales(self) -> np.ndarray:
        """Per-element magnitude used for steps: max(|x_i|, rms of its param),
        and 1.0 for a param that is all zeros. Shape (n,)."""
        x = self.get()
        out = np.empty(self.n)
        for i in range(len(self.names)):
            a, b = self.offsets[i], self.offsets[i + 1]
            rms = float(np.sqrt(np.mean(x[a:b] ** 2))) if b > a else 0.0
            out[a:b] = np.maximum(np.abs(x[a:b]), rms if rms > 0 else 1.0)
        return out
