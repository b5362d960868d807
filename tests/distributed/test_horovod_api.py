"""Horovod's argument surface in one process (no MPI): the values follow Horovod's formulas
with one rank, the refused options say why (horovod.readthedocs.io, horovod.tensorflow API)."""
import numpy as np
import pytest

import minitf as tf
import minitf.distributed as hvd


def test_allreduce_scaling_legacy_average_and_compression():
    x = tf.constant([1.1, -2.0])
    np.testing.assert_allclose(hvd.allreduce(x, average=False).numpy(), [1.1, -2.0], rtol=1e-7)
    np.testing.assert_allclose(
        hvd.allreduce(x, op=hvd.Sum, prescale_factor=3.0, postscale_factor=0.5).numpy(),
        [1.65, -3.0], rtol=1e-6)
    fp16 = hvd.allreduce(x, compression=hvd.Compression.fp16)
    assert fp16.dtype == tf.float32
    assert fp16.numpy()[0] == np.float32(np.float16(1.1))      # rounded on the way
    assert hvd.Compression.none.compress(x) == (x, None)
    with pytest.raises(ValueError, match="not both"):
        hvd.allreduce(x, average=True, op=hvd.Sum)
    with pytest.raises(NotImplementedError, match="adasum"):
        hvd.allreduce(x, op=hvd.Adasum)


def test_object_collectives_and_topology_in_one_process():
    assert hvd.broadcast_object({"epoch": 3, "lr": [0.1]}) == {"epoch": 3, "lr": [0.1]}
    assert hvd.allgather_object("a") == ["a"]
    with pytest.raises(TypeError, match="JSON"):
        hvd.broadcast_object(object())
    with pytest.raises(ValueError, match="root_rank 1"):
        hvd.broadcast_object(1, root_rank=1)
    assert (hvd.cross_rank(), hvd.cross_size(), hvd.is_homogeneous()) == (0, 1, True)
    assert hvd.gloo_built() is False and isinstance(hvd.mpi_built(), bool)
    with pytest.raises(hvd.DistributedError, match="same number of batches"):
        hvd.join()


def test_tape_and_optimizer_take_horovods_arguments():
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v * v)
    grads = hvd.DistributedGradientTape(tape, device_dense="/gpu:0", sparse_as_dense=True,
                                        compression=hvd.Compression.fp16,
                                        gradient_predivide_factor=2.0).gradient(y, [v])
    np.testing.assert_array_equal(grads[0].numpy(), [2.0, 4.0])
    opt = hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.5), name="d", op=hvd.Average,
                                   compression=hvd.Compression.none, num_groups=2)
    opt.apply_gradients([(tf.constant([1.0, 1.0]), v)])
    np.testing.assert_array_equal(v.numpy(), [0.5, 1.5])
    with pytest.raises(NotImplementedError, match="gradient_accumulation_steps=4"):
        hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.5), backward_passes_per_step=4)
    with pytest.raises(ValueError, match="gradient_predivide_factor needs op=hvd.Average"):
        hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.5), op=hvd.Sum,
                                 gradient_predivide_factor=2.0)


def test_warmup_and_schedule_callbacks_set_horovods_rates():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(1.0), loss="mse")
    rates = []

    class Record(tf.keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            rates.append(float(self.model.optimizer.learning_rate))

    schedule = hvd.callbacks.LearningRateScheduleCallback(
        initial_lr=0.2, multiplier=lambda epoch: 0.5 ** epoch, start_epoch=1, end_epoch=3)
    history = model.fit(np.ones((4, 2)), np.ones((4, 1)), batch_size=2, epochs=4, verbose=0,
                        callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0),
                                   hvd.callbacks.MetricAverageCallback(), schedule, Record()])
    # epoch 0: the optimizer's own 1.0; epochs 1 and 2: 0.2 * 0.5**epoch; epoch 3 keeps 0.05
    np.testing.assert_allclose(rates, [1.0, 1.0, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05], rtol=1e-6)
    assert len(history.history["loss"]) == 4
