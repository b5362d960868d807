"""Port of tensorflow.org's guide "Introduction to graphs and tf.Module"
(https://www.tensorflow.org/guide/intro_to_modules).

Behaviours and values from the guide: ``SimpleModule(5.0)`` gives 30.0, trainable vs all
variables, submodules of a two-layer module, lazily created variables, checkpointing a module
with ``tf.train.Checkpoint`` and restoring it into a fresh instance (same output), ``tf.function``
on a module's ``__call__``, and ``tf.Module.with_name_scope``.
"""
import os

import numpy as np

import minitf as tf


class SimpleModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.a_variable = tf.Variable(5.0, name="train_me")
        self.non_trainable_variable = tf.Variable(5.0, trainable=False, name="do_not_train_me")

    def __call__(self, x):
        return self.a_variable * x + self.non_trainable_variable


def test_simple_module():
    simple_module = SimpleModule(name="simple")
    assert float(simple_module(tf.constant(5.0))) == 30.0
    assert [v.name for v in simple_module.trainable_variables] == ["train_me:0"]
    assert sorted(v.name for v in simple_module.variables) == ["do_not_train_me:0",
                                                               "train_me:0"]
    assert simple_module.name == "simple"
    assert SimpleModule().name == "simple_module"


class Dense(tf.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.random.normal([in_features, out_features]), name="w")
        self.b = tf.Variable(tf.zeros([out_features]), name="b")

    def __call__(self, x):
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


class SequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = Dense(in_features=3, out_features=3)
        self.dense_2 = Dense(in_features=3, out_features=2)

    def __call__(self, x):
        x = self.dense_1(x)
        return self.dense_2(x)


def _numpy_forward(model, x):
    for layer in (model.dense_1, model.dense_2):
        x = np.maximum(x @ layer.w.numpy() + layer.b.numpy(), 0)
    return x


def test_submodules_and_variables():
    my_model = SequentialModule(name="the_model")
    x = np.array([[2.0, 2.0, 2.0]], np.float32)
    out = my_model(tf.constant(x))
    assert tuple(out.shape) == (1, 2)
    np.testing.assert_allclose(out.numpy(), _numpy_forward(my_model, x), rtol=1e-6)
    assert my_model.submodules == (my_model.dense_1, my_model.dense_2)
    assert len(my_model.variables) == 4
    assert len(my_model.trainable_variables) == 4


class FlexibleDenseModule(tf.Module):
    def __init__(self, out_features, name=None):
        super().__init__(name=name)
        self.is_built = False
        self.out_features = out_features

    def __call__(self, x):
        if not self.is_built:
            self.w = tf.Variable(tf.random.normal([x.shape[-1], self.out_features]), name="w")
            self.b = tf.Variable(tf.zeros([self.out_features]), name="b")
            self.is_built = True
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


class MySequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = FlexibleDenseModule(out_features=3)
        self.dense_2 = FlexibleDenseModule(out_features=2)

    def __call__(self, x):
        return self.dense_2(self.dense_1(x))


def test_lazily_created_variables():
    my_model = MySequentialModule(name="the_model")
    assert my_model.variables == ()
    out = my_model(tf.constant([[2.0, 2.0, 2.0]]))
    assert tuple(out.shape) == (1, 2)
    assert [tuple(v.shape) for v in my_model.variables] == [(3,), (3, 3), (2,), (3, 2)]


def test_checkpoint_write_and_restore_into_a_new_module(tmp_path):
    my_model = MySequentialModule()
    x = tf.constant([[2.0, 2.0, 2.0]])
    expected = my_model(x).numpy()
    chkp_path = os.path.join(str(tmp_path), "my_checkpoint")
    checkpoint = tf.train.Checkpoint(model=my_model)
    assert checkpoint.write(chkp_path) == chkp_path
    listed = tf.train.list_variables(chkp_path)
    assert [name for name, _ in listed if name.startswith("model/")] == [
        "model/dense_1/b", "model/dense_1/w", "model/dense_2/b", "model/dense_2/w"]
    assert dict(listed)["model/dense_1/w"] == [3, 3]

    new_model = MySequentialModule()
    new_model(x)  # create the variables, then overwrite them
    new_checkpoint = tf.train.Checkpoint(model=new_model)
    new_checkpoint.restore(chkp_path).assert_existing_objects_matched()
    np.testing.assert_array_equal(new_model(x).numpy(), expected)


class TracedModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = Dense(in_features=3, out_features=3)
        self.dense_2 = Dense(in_features=3, out_features=2)

    @tf.function
    def __call__(self, x):
        return self.dense_2(self.dense_1(x))


def test_tf_function_on_module_call():
    my_model = TracedModule(name="the_model")
    x = np.array([[2.0, 2.0, 2.0]], np.float32)
    first = my_model(tf.constant(x)).numpy()
    np.testing.assert_allclose(first, _numpy_forward(my_model, x), rtol=1e-6)
    my_model.dense_1.w.assign(my_model.dense_1.w * 2.0)  # replay sees the new value
    np.testing.assert_allclose(my_model(tf.constant(x)).numpy(), _numpy_forward(my_model, x),
                               rtol=1e-6)


class ScopedDense(tf.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        self.in_features, self.out_features = in_features, out_features
        self.w = None

    @tf.Module.with_name_scope
    def __call__(self, x):
        if self.w is None:
            self.w = tf.Variable(tf.ones([self.in_features, self.out_features]), name="w")
        return tf.matmul(x, self.w)


def test_name_scopes():
    layer = ScopedDense(2, 3, name="scoped")
    layer(tf.ones([1, 2]))
    assert layer.w.name == "scoped/w:0"
    with tf.name_scope("outer"):
        with tf.name_scope("inner") as scope:
            v = tf.Variable(1.0, name="v")
    assert scope == "outer/inner/"
    assert v.name == "outer/inner/v:0"
    assert tf.Variable(1.0, name="plain").name == "plain:0"


def test_init_scope_creates_variables_outside_the_trace():
    holder = {}

    @tf.function
    def f(x):
        if "v" not in holder:
            with tf.init_scope():
                holder["v"] = tf.Variable(tf.ones([2]) * 3.0)
        return x * holder["v"]

    np.testing.assert_array_equal(f(tf.constant([1.0, 2.0])).numpy(), [3.0, 6.0])
    holder["v"].assign([1.0, 1.0])
    np.testing.assert_array_equal(f(tf.constant([1.0, 2.0])).numpy(), [1.0, 2.0])
