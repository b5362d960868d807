"""Horovod's extra arguments, constants, object collectives and Keras callbacks on N ranks,
against values computed here with numpy (Horovod's documented formulas)."""
import numpy as np

import minitf as tf
import minitf.distributed as hvd

hvd.init()
r, n = hvd.rank(), hvd.size()
x = tf.constant([1.0 + r, -2.0 * (r + 1), 0.1 * (r + 1)])
every = np.array([[1.0 + k, -2.0 * (k + 1), 0.1 * (k + 1)] for k in range(n)], np.float32)

np.testing.assert_allclose(hvd.allreduce(x, average=False).numpy(), every.sum(0), rtol=1e-6)
np.testing.assert_allclose(hvd.allreduce(x).numpy(), every.mean(0), rtol=1e-6)
np.testing.assert_allclose(hvd.allreduce(x, op=hvd.Min).numpy(), every.min(0))
np.testing.assert_allclose(hvd.allreduce(x, op=hvd.Max).numpy(), every.max(0))
# postscale * sum(prescale * x)
np.testing.assert_allclose(
    hvd.allreduce(x, op=hvd.Sum, prescale_factor=3.0, postscale_factor=0.5).numpy(),
    0.5 * (3.0 * every).sum(0), rtol=1e-6)
# fp16 compression: each rank's tensor rounded to float16, summed in float32, cast back
fp16 = hvd.allreduce(x, op=hvd.Sum, compression=hvd.Compression.fp16)
assert fp16.dtype == tf.float32
np.testing.assert_allclose(fp16.numpy(), every.astype(np.float16).astype(np.float32).sum(0),
                           rtol=1e-3)
assert hvd.broadcast_object({"epoch": 10 + r}, root_rank=n - 1) == {"epoch": 10 + n - 1}
assert hvd.allgather_object([r]) == [[k] for k in range(n)]
assert hvd.cross_size() * hvd.local_size() == n and hvd.is_homogeneous()

# gradient_predivide_factor: the same average, computed as sum(g / f) * f / size
v = tf.Variable([1.0, 2.0])
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(v * v) * float(r + 1)
grads = hvd.DistributedGradientTape(tape, gradient_predivide_factor=4.0).gradient(loss, [v])
np.testing.assert_allclose(grads[0].numpy(), np.array([2.0, 4.0]) * np.mean(np.arange(1, n + 1)),
                           rtol=1e-6)

# Keras callbacks: ranks start from different weights; after the first batch they agree
tf.random.set_seed(100 + r)
model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
opt = hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.05))
model.compile(optimizer=opt, loss="mse")
seen = []


class Record(tf.keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        seen.append(float(self.model.optimizer.learning_rate))


rng = np.random.default_rng(r)
data = rng.normal(size=(16, 2)).astype(np.float32)
history = model.fit(data, data[:, :1] * (r + 1), batch_size=4, epochs=3, verbose=0, callbacks=[
    hvd.callbacks.BroadcastGlobalVariablesCallback(0), hvd.callbacks.MetricAverageCallback(),
    hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.05, warmup_epochs=2), Record()])
kernel = model.layers[0].kernel.numpy()
gathered = hvd.allgather(tf.constant(kernel.reshape(1, -1))).numpy()
np.testing.assert_array_equal(gathered, np.repeat(gathered[:1], n, axis=0))
# warmup: 0.05 / n * (epoch * (n - 1) / 2 + 1), the epoch fractional per batch (4 steps)
want = [0.05 / n * ((e + b / 4) * (n - 1) / 2 + 1) for e in range(2) for b in range(4)]
np.testing.assert_allclose(seen[:8], want, rtol=1e-6)
np.testing.assert_allclose(seen[8:], [0.05] * 4, rtol=1e-6)
losses = hvd.allgather_object(history.history["loss"])
assert all(ls == losses[0] for ls in losses), losses          # averaged: the same on every rank
print(f"OK rank {r} of {n}", flush=True)
