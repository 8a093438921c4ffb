import warp as wp


@wp.kernel
def mse_kernel(pred: wp.array2d(dtype=float), target: wp.array2d(dtype=float), scale: float,
               out: wp.array(dtype=float)):
    b, j = wp.tid()
    d = pred[b, j] - target[b, j]
    wp.atomic_add(out, 0, scale * d * d)


def mse(pred, target):
    out = wp.zeros(1, dtype=float, device=pred.device, requires_grad=True)
    scale = 1.0 / float(pred.shape[0] * pred.shape[1])
    wp.launch(mse_kernel, dim=pred.shape, inputs=[pred, target, scale], outputs=[out], device=pred.device)
    return out
