"""PyTorch versions of the benchmark models (optional: ``pip install minitf[bench]``).

Each builder returns a training step ``step(x, y)`` on torch tensors, with Adam either as
``torch.optim.Adam``'s default (``"eager"``) or its fused CPU kernel (``"fused"``; foreach where
this PyTorch has no fused CPU Adam)."""
import os

import numpy as np

try:
    import torch
    from torch import nn
except ImportError:     # the rows are left out
    torch = None

THREADS = None   # PyTorch's intra-op threads; None: one per CPU


def available():
    return torch is not None


def _adam(params, kind):
    if kind == "eager":
        return torch.optim.Adam(params, 1e-3, eps=1e-7)
    try:
        return torch.optim.Adam(params, 1e-3, eps=1e-7, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.Adam(params, 1e-3, eps=1e-7, foreach=True)


def mlp(sizes):
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def cnn_valid():
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 5 * 5, 10))


def cnn_rgb():
    """train_throughput's cnn-rgb: two SAME 3x3 convolutions before each pool, 32x32 RGB."""
    def block(c_in, c_out):
        return [nn.Conv2d(c_in, c_out, 3, padding=1), nn.ReLU(),
                nn.Conv2d(c_out, c_out, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
    return nn.Sequential(*block(3, 32), *block(32, 64), nn.Flatten(),
                         nn.Linear(64 * 8 * 8, 256), nn.ReLU(), nn.Linear(256, 10))


def cnn_shipped():
    """models/cnn.py as configs/fashion_mnist_cnn.yaml builds it."""
    def block(c_in, c_out):
        return [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out, eps=1e-3),
                nn.ReLU(), nn.MaxPool2d(2)]
    return nn.Sequential(*block(1, 32), *block(32, 64), nn.Flatten(),
                         nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.3),
                         nn.Linear(128, 10))


def training_step(net, kind):
    torch.set_num_threads(THREADS or os.cpu_count())
    net.train()
    opt = _adam(net.parameters(), kind)
    loss_fn = nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def batches(data):
    """numpy (NHWC or flat) batches -> torch (NCHW or flat) tensors."""
    out = []
    for x, y in data:
        if x.ndim == 4:
            x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
        out.append((torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))))
    return out
