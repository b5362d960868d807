"""Which GPU-only paths run, and that they are wired to give the unfused results, checked on
the CPU. The cupy kernels themselves are replaced by numpy references here (they need a GPU:
see ``@pytest.mark.cupy`` tests and benchmarks/gpu.py); what is tested is the selection
(cupy backend only, switches honoured) and the plumbing around each kernel."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import cuda_graphs, cuda_kernels
from minitf.keras import layers, optimizers
from minitf.ops import fused_ops, nn_ops


def test_no_gpu_path_is_selected_off_cupy(monkeypatch):
    assert B.get_backend() != "cupy"
    assert not cuda_kernels.enabled() and not cuda_graphs.enabled()
    assert not fused_ops.use_fused_layers() and not B.host_syncs_stall()
    monkeypatch.setattr(B, "_name", "cupy")            # the selection only: nothing runs
    assert cuda_kernels.enabled() and cuda_graphs.enabled() and B.host_syncs_stall()
    monkeypatch.setenv("MINITF_FUSED_KERNELS", "0")
    monkeypatch.setenv("MINITF_CUDA_GRAPHS", "0")
    assert not cuda_kernels.enabled() and not cuda_graphs.enabled()


def test_the_fused_adam_kernel_declines_mismatched_arrays():
    w = np.zeros(3, np.float32)
    assert cuda_kernels.adam(w, np.zeros(3, np.float16), w.copy(), w.copy(),
                             0.9, 0.1, 0.999, 0.001, 1e-7, -0.1, 1.0) is False
    assert cuda_kernels.adam(w, np.zeros(4, np.float32), w.copy(), w.copy(),
                             0.9, 0.1, 0.999, 0.001, 1e-7, -0.1, 1.0) is False


def _adam_reference(calls):
    def adam(w, g, m, v, b1, c1, b2, c2, eps, scale, decay):
        calls.append(w.shape)
        xp = B.xp
        m *= b1
        m += g * c1
        v *= b2
        v += g * g * c2
        w *= decay
        w += m / (xp.sqrt(v) + eps) * scale
        return True
    return adam


@pytest.mark.parametrize("make", [lambda: optimizers.Adam(0.01),
                                  lambda: optimizers.AdamW(0.01, weight_decay=0.1)],
                         ids=["adam", "adamw"])
def test_adam_takes_the_fused_kernel_when_enabled(make, monkeypatch):
    rng = np.random.default_rng(0)
    init = [rng.standard_normal((300, 200)).astype(np.float32),
            rng.standard_normal(200).astype(np.float32)]
    grads = [[rng.standard_normal(a.shape).astype(np.float32) for a in init] for _ in range(3)]

    def train():
        vs = [tf.Variable(a) for a in init]
        opt = make()
        for g in grads:
            opt.apply_gradients(zip([tf.constant(x) for x in g], vs))
        return [v.numpy() for v in vs]

    expected = train()
    calls = []
    monkeypatch.setattr(cuda_kernels, "enabled", lambda: True)
    monkeypatch.setattr(cuda_kernels, "adam", _adam_reference(calls))
    got = train()
    assert (300, 200) in calls                    # the large variable went through the kernel
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("activation", ["relu", "sigmoid", "tanh", None])
def test_dense_uses_the_fused_bias_activation_op_on_the_gpu(activation, monkeypatch):
    rng = np.random.default_rng(1)
    x = tf.constant(rng.standard_normal((5, 4)).astype(np.float32))
    layer = layers.Dense(3, activation=activation, bias_initializer="glorot_uniform")
    layer(x)

    def run():
        with tf.GradientTape() as tape:
            y = layer(x)
            loss = tf.reduce_sum(y * y)
        return [y.numpy()] + [g.numpy() for g in tape.gradient(loss, layer.trainable_variables)]

    expected = run()
    used = []
    real = fused_ops.bias_activation
    monkeypatch.setattr(fused_ops, "use_fused_layers", lambda *args: True)
    monkeypatch.setattr(fused_ops, "bias_activation",
                        lambda *a: used.append(a[2]) or real(*a))
    got = run()
    assert used == [activation or "linear"]
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_sparse_cross_entropy_takes_its_gradient_from_the_fused_forward(monkeypatch):
    rng = np.random.default_rng(2)
    logits = tf.constant(rng.standard_normal((6, 5)).astype(np.float32))
    labels = tf.constant(np.array([0, 4, 2, 2, 1, 3], np.int32))

    def run():
        with tf.GradientTape() as tape:
            tape.watch(logits)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        return loss.numpy(), tape.gradient(loss, logits).numpy()

    expected = run()
    calls = []

    def reference(lab, z):        # what the kernel computes: losses and softmax - onehot
        xp = B.xp
        e = xp.exp(z - z.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        onehot = (xp.arange(z.shape[1])[None, :] == lab[:, None]).astype(z.dtype)
        calls.append(True)
        loss = -xp.log((p * onehot).sum(axis=1))
        return loss, (p - onehot) * 1.0

    monkeypatch.setattr(fused_ops, "_fused", lambda x: True)
    monkeypatch.setattr(cuda_kernels, "softmax_cross_entropy", reference)
    softmaxes = []
    real_softmax = nn_ops._softmax_forward
    monkeypatch.setattr(nn_ops, "_softmax_forward",
                        lambda *a, **k: softmaxes.append(True) or real_softmax(*a, **k))
    got = run()
    assert calls == [True] and softmaxes == []    # the backward took the kernel's gradient
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-5, atol=1e-7)


def test_cuda_graph_replay_is_chosen_only_for_capturable_plans_on_cupy(monkeypatch):
    w = tf.Variable(np.ones((3, 2), np.float32))
    plain = tf.function(lambda x: tf.matmul(x, w))
    noisy = tf.function(lambda x: tf.nn.dropout(tf.matmul(x, w), 0.5))
    x = tf.constant(np.ones((4, 3), np.float32))
    plain(x)
    noisy(x)
    plans = [next(iter(f._plans.values())) for f in (plain, noisy)]
    assert all(p.graph_replay is None for p in plans)               # numpy/strict: never
    assert cuda_graphs.capturable(plans[0]) and not cuda_graphs.capturable(plans[1])
    monkeypatch.setattr(B, "_name", "cupy")
    assert isinstance(cuda_graphs.replayer(plans[0]), cuda_graphs.GraphReplay)
    assert cuda_graphs.replayer(plans[1]) is None             # random draws would repeat
    monkeypatch.setenv("MINITF_CUDA_GRAPHS", "0")
    assert cuda_graphs.replayer(plans[0]) is None


def test_a_plan_replays_through_its_replay_hook():
    """The hook ``cuda_graphs`` uses: a plan with ``replay`` set runs it instead of its steps."""
    w = tf.Variable(np.ones((3, 2), np.float32))
    f = tf.function(lambda x: tf.matmul(x, w))
    x = tf.constant(np.ones((4, 3), np.float32))
    f(x)
    plan = next(iter(f._plans.values()))
    seen = []
    plan.graph_replay = lambda args: seen.append(args) or plan._run(args, plan.steps)
    np.testing.assert_array_equal(f(x * 2.0).numpy(), np.full((4, 2), 6.0, np.float32))
    assert len(seen) == 1


def test_every_fused_activation_has_a_forward_and_a_gradient_kernel():
    assert set(cuda_kernels._FORWARD) == set(cuda_kernels._GRAD) == set(cuda_kernels.ACTIVATIONS)
    with pytest.raises(ValueError, match="bias_activation: activation must be one of"):
        fused_ops.bias_activation(tf.zeros((2, 3)), tf.zeros(3), "gelu")
