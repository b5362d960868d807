"""Port of TensorFlow's guide "Random number generation"
(https://www.tensorflow.org/guide/random_numbers).

The cells run in the guide's order. minitf draws from its own Philox stream, so the numbers are
not TF's: each test asserts what the guide demonstrates (the same seed gives the same numbers,
split generators differ from each other and from their parent, a checkpoint restores the
stream, shapes and dtypes) and, where the guide shows a relation between printed values, that
relation (TF's printed values are quoted in comments).

Changed from the guide:
- The setup cell that splits the CPU into three virtual devices
  (``tf.config.experimental.set_virtual_device_configuration``) is a separate xfail test:
  minitf runs one replica per process, so every ``MirroredStrategy`` below has one replica and
  ``strat.run`` returns that replica's value instead of a ``PerReplica`` of two.
- ``tf.saved_model.save``/``load`` are xfail: minitf does not write SavedModel directories;
  the module's draws and state under the strategy are checked without saving.
- Checkpoint files go to pytest's ``tmp_path`` instead of ``./checkpoint``.
"""
import numpy as np
import pytest

import minitf as tf


def _value(t):
    return float(t.numpy())


@pytest.mark.xfail(strict=True, reason="minitf has one device per process: no virtual devices")
def test_setup_virtual_cpu_devices():
    physical_devices = tf.config.list_physical_devices("CPU")
    tf.config.experimental.set_virtual_device_configuration(
        physical_devices[0], [
            tf.config.experimental.VirtualDeviceConfiguration(),
            tf.config.experimental.VirtualDeviceConfiguration(),
            tf.config.experimental.VirtualDeviceConfiguration()
        ])


def test_generator_from_seed_global_and_alg():
    g1 = tf.random.Generator.from_seed(1)
    first = g1.normal(shape=[2, 3])
    assert first.shape == [2, 3] and first.dtype == tf.float32
    g2 = tf.random.get_global_generator()
    global_draw = g2.normal(shape=[2, 3])
    assert global_draw.shape == [2, 3]
    assert not np.array_equal(global_draw.numpy(), first.numpy())

    # The same seed with alg='philox' (the default) gives the same numbers (TF prints the same
    # [[0.43842274 -0.53439844 -0.07710262] [1.5658046 -0.1012345 -0.2744976]] twice).
    g1 = tf.random.Generator.from_seed(1, alg='philox')
    np.testing.assert_array_equal(g1.normal(shape=[2, 3]).numpy(), first.numpy())
    assert g1.algorithm == 1

    g = tf.random.Generator.from_non_deterministic_state()
    other = g.normal(shape=[2, 3])
    assert other.shape == [2, 3]
    assert not np.array_equal(other.numpy(), first.numpy())


def test_reset_from_seed_restarts_the_stream():
    g = tf.random.Generator.from_seed(1)
    a = g.normal([])
    b = g.normal([])
    g.reset_from_seed(1)
    c = g.normal([])
    assert a.shape == [] and a.dtype == tf.float32
    # TF: 0.43842274, 1.6272374, then 0.43842274 again
    assert _value(a) != _value(b) and _value(c) == _value(a)


def test_set_global_generator():
    old = tf.random.get_global_generator()
    try:
        g = tf.random.Generator.from_seed(5)
        tf.random.set_global_generator(g)
        assert tf.random.get_global_generator() is g
        draw = tf.random.get_global_generator().normal([3])
        np.testing.assert_array_equal(draw.numpy(),
                                      tf.random.Generator.from_seed(5).normal([3]).numpy())
    finally:
        tf.random.set_global_generator(old)


def test_split_gives_independent_streams_and_advances_parent():
    g = tf.random.Generator.from_seed(1)
    first = _value(g.normal([]))
    new_gs = g.split(3)
    children = [_value(new_g.normal([])) for new_g in new_gs]
    after = _value(g.normal([]))
    # TF: 0.43842274; children 2.536413 0.33186463 -0.07144657; then -0.79253083, which is
    # neither the first nor the second draw (1.6272374) of an unsplit generator: split
    # changes the parent's state as a draw does.
    unsplit = tf.random.Generator.from_seed(1)
    unsplit_draws = [_value(unsplit.normal([])) for _ in range(2)]
    assert first == unsplit_draws[0]
    assert len(set(children + [first, after])) == 5
    assert after not in unsplit_draws
    # Splitting is deterministic too.
    again = tf.random.Generator.from_seed(1)
    again.normal([])
    assert [_value(h.normal([])) for h in again.split(3)] == children


def test_generator_created_outside_tf_function():
    g = tf.random.Generator.from_seed(1)

    @tf.function
    def foo():
        return g.normal([])

    reference = tf.random.Generator.from_seed(1)
    assert _value(foo()) == _value(reference.normal([]))
    assert _value(foo()) == _value(reference.normal([]))   # each call draws afresh


def test_generator_created_inside_tf_function():
    global g
    g = None

    @tf.function
    def foo():
        global g
        if g is None:
            g = tf.random.Generator.from_seed(1)
        return g.normal([])

    first, second = _value(foo()), _value(foo())
    # TF: 0.43842274 then 1.6272374, the stream of from_seed(1)
    reference = tf.random.Generator.from_seed(1)
    assert [first, second] == [_value(reference.normal([])), _value(reference.normal([]))]


def test_generators_as_arguments_retrace_like_variables():
    global num_traces
    num_traces = 0

    @tf.function
    def foo(g):
        global num_traces
        num_traces += 1
        return g.normal([])

    foo(tf.random.Generator.from_seed(1))
    foo(tf.random.Generator.from_seed(2))
    assert num_traces == 2          # TF 2.21 prints 2

    num_traces = 0

    @tf.function
    def foo(v):
        global num_traces
        num_traces += 1
        return v.read_value()

    foo(tf.Variable(1))
    foo(tf.Variable(2))
    assert num_traces == 1          # TF 2.21 prints 1


def test_generator_created_outside_strategy():
    g = tf.random.Generator.from_seed(1)
    strat = tf.distribute.MirroredStrategy(devices=["cpu:0", "cpu:1"])
    printed = []
    with strat.scope():
        def f():
            printed.append(_value(g.normal([])))
        strat.run(f)
    # TF (two replicas, serialized access): 0.43842274 and 1.6272374, the generator's first
    # two draws; with minitf's one replica, the first.
    assert printed == [_value(tf.random.Generator.from_seed(1).normal([]))]


def test_generator_created_inside_strategy():
    strat = tf.distribute.MirroredStrategy(devices=["cpu:0", "cpu:1"])
    with strat.scope():
        g = tf.random.Generator.from_seed(1)
        a = strat.run(lambda: g.normal([]))
        b = strat.run(lambda: g.normal([]))
    assert a.shape == [] and _value(a) != _value(b)

    strat = tf.distribute.MirroredStrategy(devices=["cpu:0", "cpu:1"])
    with strat.scope():
        def f():
            g = tf.random.Generator.from_seed(1)
            a = g.normal([])
            b = g.normal([])
            return tf.stack([a, b])
        first = strat.run(f)
        second = strat.run(f)
    # TF prints the same PerReplica value for both runs: the seed determines the numbers.
    assert first.shape == [2]
    np.testing.assert_array_equal(first.numpy(), second.numpy())


def test_checkpoint_restores_the_stream(tmp_path):
    filename = str(tmp_path / "checkpoint")
    g = tf.random.Generator.from_seed(1)
    cp = tf.train.Checkpoint(generator=g)
    g.normal([])

    cp.write(filename)
    from_saving_point = [_value(g.normal([])), _value(g.normal([]))]

    cp.restore(filename)
    from_restoring_point = [_value(g.normal([])), _value(g.normal([]))]
    # TF: 1.6272374 1.6307176 after saving and the same two after restoring
    assert from_restoring_point == from_saving_point
    assert from_saving_point[0] != from_saving_point[1]


def test_checkpoint_within_strategy(tmp_path):
    filename = str(tmp_path / "checkpoint")
    strat = tf.distribute.MirroredStrategy(devices=["cpu:0", "cpu:1"])
    with strat.scope():
        g = tf.random.Generator.from_seed(1)
        cp = tf.train.Checkpoint(my_generator=g)
        strat.run(lambda: g.normal([]))

    with strat.scope():
        cp.write(filename)
        from_saving_point = [_value(strat.run(lambda: g.normal([]))) for _ in range(2)]

    with strat.scope():
        cp.restore(filename)
        from_restoring_point = [_value(strat.run(lambda: g.normal([]))) for _ in range(2)]
    assert from_restoring_point == from_saving_point

    # Restoring into a new generator under another strategy continues the saved stream.
    strat2 = tf.distribute.MirroredStrategy(devices=["cpu:0", "cpu:1", "cpu:2"])
    with strat2.scope():
        g2 = tf.random.Generator.from_seed(1)
        cp2 = tf.train.Checkpoint(my_generator=g2)
        cp2.restore(filename)
        restored = [_value(strat2.run(lambda: g2.normal([]))) for _ in range(2)]
    assert restored == from_saving_point


class MyModule(tf.Module):

    def __init__(self):
        super(MyModule, self).__init__()
        self.g = tf.random.Generator.from_seed(0)

    @tf.function
    def __call__(self):
        return self.g.normal([])

    @tf.function
    def state(self):
        return self.g.state


def test_module_with_generator_under_strategy():
    strat = tf.distribute.MirroredStrategy(devices=["cpu:0", "cpu:1"])
    with strat.scope():
        m = MyModule()
        first = _value(strat.run(m))
        state_1 = m.state().numpy().copy()
        second = _value(strat.run(m))
        state_2 = m.state().numpy().copy()
    reference = tf.random.Generator.from_seed(0)
    assert [first, second] == [_value(reference.normal([])), _value(reference.normal([]))]
    assert state_1.shape == (3,) and m.state().dtype == tf.int64
    assert not np.array_equal(state_1, state_2)       # each draw moves the state on
    np.testing.assert_array_equal(state_2, reference.state.numpy())


@pytest.mark.xfail(strict=True, reason="minitf does not write TF SavedModel directories")
def test_saved_model_keeps_the_generator(tmp_path):
    m = MyModule()
    tf.saved_model.save(m, str(tmp_path / "saved_model"))
    imported = tf.saved_model.load(str(tmp_path / "saved_model"))
    assert _value(imported()) == _value(m())


def test_stateless_rngs():
    a = tf.random.stateless_normal(shape=[2, 3], seed=[1, 2])
    b = tf.random.stateless_normal(shape=[2, 3], seed=[1, 2])
    # TF prints [[0.5441101 0.20738031 0.07356432] [0.04643455 -1.3015898 -0.9538565]] twice
    assert a.shape == [2, 3] and a.dtype == tf.float32
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c = tf.random.stateless_normal(shape=[2, 3], seed=[1, 3])
    assert not np.array_equal(a.numpy(), c.numpy())


def test_stateless_ops_with_seeds_from_a_generator():
    g = tf.random.Generator.from_seed(1)
    seeds = g.make_seeds(2)
    assert seeds.shape == [2, 2] and seeds.dtype == tf.int64        # TF: shape (2, 2) int64
    x = tf.random.stateless_normal([3], seed=seeds[:, 0])
    np.testing.assert_array_equal(
        x.numpy(), tf.random.stateless_normal([3], seed=seeds[:, 0]).numpy())
    y = tf.random.stateless_uniform([3], seed=seeds[:, 1])
    assert y.numpy().min() >= 0 and y.numpy().max() < 1
    again = tf.random.Generator.from_seed(1).make_seeds(2)
    np.testing.assert_array_equal(seeds.numpy(), again.numpy())
    # A seed split or folded in gives new, repeatable seeds, in the seed's dtype (TF: int32).
    split = tf.random.experimental.stateless_split([1, 2], 3)
    assert split.shape == [3, 2] and split.dtype == tf.int32
    assert len({tuple(row) for row in split.numpy().tolist()}) == 3
    folded = tf.random.experimental.stateless_fold_in([1, 2], 3)
    assert folded.shape == [2] and folded.dtype == tf.int32
    np.testing.assert_array_equal(folded.numpy(),
                                  tf.random.experimental.stateless_fold_in([1, 2], 3).numpy())


def test_generator_distributions():
    g = tf.random.Generator.from_seed(1)
    u = g.uniform([2, 3])
    assert u.shape == [2, 3] and u.dtype == tf.float32
    ints = g.uniform([1000], 0, 10, dtype=tf.int32).numpy()
    assert ints.dtype == np.int32 and ints.min() == 0 and ints.max() == 9
    t = g.truncated_normal([10000]).numpy()
    assert np.abs(t).max() <= 2.0 and abs(t.mean()) < 0.05
    b = g.binomial([3], counts=[10., 20., 30.], probs=0.5)
    assert b.dtype == tf.int32 and (b.numpy() >= 0).all() and (b.numpy() <= [10, 20, 30]).all()
    full = g.uniform_full_int([2])
    assert full.shape == [2] and full.dtype == tf.int64
