"""A 3-D convolution written as loops over output elements, the reference the conv3d op and
layer tests compare with."""
import numpy as np


def same_pads(size, k, s, d=1):
    total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def conv3d_loops(x, w, strides=(1, 1, 1), padding="VALID", dilations=(1, 1, 1)):
    """out[n, i, j, l, o] = sum over the window and channels of x * w, one output element at a
    time over the (TF-style SAME-padded) input."""
    kd, kh, kw, _, o = w.shape
    if padding == "SAME":
        x = np.pad(x, [(0, 0)] + [same_pads(n, k, s, d) for n, k, s, d in
                                  zip(x.shape[1:4], w.shape[:3], strides, dilations)] + [(0, 0)])
    (sd, sh, sw), (dd, dh, dw) = strides, dilations
    n, depth, h, wd, _ = x.shape
    od = (depth - (kd - 1) * dd - 1) // sd + 1
    oh, ow = (h - (kh - 1) * dh - 1) // sh + 1, (wd - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, od, oh, ow, o))
    for i, j, m in np.ndindex(od, oh, ow):
        for a, b, e in np.ndindex(kd, kh, kw):
            out[:, i, j, m] += x[:, i * sd + a * dd, j * sh + b * dh, m * sw + e * dw] @ w[a, b, e]
    return out
