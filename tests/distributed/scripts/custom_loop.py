"""A custom training loop on N ranks against the same loop in one process on the whole batch.

Each rank trains on its slice of every batch with DistributedOptimizer (global_clipnorm: the
gradients must be averaged before clipping), a traced step, and SyncBatchNormalization; the
reference trains on the whole batch with BatchNormalization and the plain optimizer. A second
model uses DistributedGradientTape. Prints one OK line per rank.
"""
import numpy as np

import minitf as tf
import minitf.distributed as hvd

hvd.init()
rank, size = hvd.rank(), hvd.size()
rng = np.random.default_rng(0)
BATCH, STEPS = 8 * size, 4
xs = rng.standard_normal((STEPS, BATCH, 6)).astype(np.float32)
ys = rng.integers(0, 3, (STEPS, BATCH)).astype(np.int32)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def make(norm):
    tf.random.set_seed(1)
    # No bias before the normalization: its gradient is zero but for rounding, which Adam
    # would amplify into steps of the learning rate's size.
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, use_bias=False), norm(),
                                 tf.keras.layers.Dense(3)])
    model(tf.zeros((2, 6)))
    return model


reference = make(tf.keras.layers.BatchNormalization)
model = make(tf.keras.layers.SyncBatchNormalization)
taped = make(tf.keras.layers.SyncBatchNormalization)
for m in (model, taped):               # rank 1 starts elsewhere; the broadcast fixes that
    m.set_weights([w + rank for w in reference.get_weights()])
    hvd.broadcast_variables(m.variables, root_rank=0)

ref_opt = tf.keras.optimizers.Adam(1e-2, global_clipnorm=0.5)
opt = hvd.DistributedOptimizer(tf.keras.optimizers.Adam(1e-2, global_clipnorm=0.5))
tape_opt = tf.keras.optimizers.Adam(1e-2, global_clipnorm=0.5)


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return hvd.allreduce(loss)


@tf.function
def tape_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, taped(x, training=True))
    tape = hvd.DistributedGradientTape(tape)
    grads = tape.gradient(loss, taped.trainable_variables)
    tape_opt.apply_gradients(zip(grads, taped.trainable_variables))
    return loss


def ref_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, reference(x, training=True))
    grads = tape.gradient(loss, reference.trainable_variables)
    ref_opt.apply_gradients(zip(grads, reference.trainable_variables))
    return loss


part = slice(rank * BATCH // size, (rank + 1) * BATCH // size)
for i in range(STEPS):
    want = float(ref_step(tf.constant(xs[i]), tf.constant(ys[i])))
    got = float(step(tf.constant(xs[i][part]), tf.constant(ys[i][part])))
    tape_step(tf.constant(xs[i][part]), tf.constant(ys[i][part]))
    assert abs(got - want) <= 1e-5 * abs(want), (i, got, want)
for m in (model, taped):
    for a, b in zip(m.variables, reference.variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-5, atol=2e-6, err_msg=a.path)
assert step.experimental_get_tracing_count() == 1
everyone = hvd.allgather(tf.constant([float(rank)])).numpy()
assert everyone.tolist() == [float(r) for r in range(size)]
print(f"OK rank {rank} of {size}", flush=True)
