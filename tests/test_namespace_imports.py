"""TF's namespaces imported by their dotted names (``minitf.namespace_imports``): the import
statements of TF 2 code and of the tf.keras 2 guides give the same objects as attribute
access."""
import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

import minitf as tf


def test_from_imports_of_namespaces_give_the_attribute_objects():
    from minitf.keras.preprocessing.image import ImageDataGenerator
    from minitf.keras.preprocessing.sequence import pad_sequences
    from minitf.keras.backend import epsilon, floatx
    from minitf.nn import relu, softmax
    from minitf.keras.datasets.mnist import load_data
    from minitf.keras.layers.experimental.preprocessing import Normalization

    assert ImageDataGenerator is tf.keras.preprocessing.image.ImageDataGenerator
    assert Normalization is tf.keras.layers.Normalization
    assert load_data is tf.keras.datasets.mnist.load_data
    assert epsilon() == 1e-7 and floatx() == "float32"
    np.testing.assert_array_equal(relu(tf.constant([-1.0, 0.5])).numpy(), [0.0, 0.5])
    np.testing.assert_allclose(softmax(tf.constant([0.0, np.log(3.0)])).numpy(), [0.25, 0.75],
                               rtol=1e-6)
    np.testing.assert_array_equal(pad_sequences([[1, 2], [3]], maxlen=3),
                                  [[0, 1, 2], [0, 0, 3]])


@pytest.mark.parametrize("dotted", ["minitf.compat.v1", "minitf.compat.v2", "minitf.nn",
                                    "minitf.math", "minitf.linalg", "minitf.data.experimental",
                                    "minitf.keras.backend", "minitf.keras.ops.numpy",
                                    "minitf.sparse", "minitf.random"])
def test_import_module_is_the_attribute(dotted):
    obj = tf
    for name in dotted.split(".")[1:]:
        obj = getattr(obj, name)
    assert importlib.import_module(dotted) is obj
    assert sys.modules[dotted] is obj


def test_a_namespace_keeps_its_api_and_a_module_its_spec():
    import minitf.linalg  # noqa: F401
    import minitf.keras.backend as K
    extra = {name for name in vars(tf.linalg) if name.startswith("__")}
    assert extra <= {"__path__", "__spec__"}          # no __name__, __loader__, __package__
    assert K is tf.keras.backend
    assert K.__spec__.name == K.__name__ == "minitf.keras.keras_backend"


@pytest.mark.parametrize("dotted", ["minitf.nn.relu", "minitf.no_such_namespace",
                                    "minitf.keras.no_such_namespace"])
def test_functions_and_missing_names_are_not_modules(dotted):
    with pytest.raises(ModuleNotFoundError, match=dotted.replace(".", r"\.")):
        importlib.import_module(dotted)


def test_compat_v1_as_the_first_import_of_a_program():
    # TF 1 code starts with this line; the finder must be in place once minitf is imported.
    program = ("import minitf.compat.v1 as tf\n"
               "tf.disable_v2_behavior\n"
               "from minitf.keras.preprocessing.image import ImageDataGenerator\n"
               "print(tf.nn.relu(tf.constant([-2.0, 3.0])).numpy().tolist())\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0.0, 3.0]"


def test_namespace_helper_creates_once_and_keeps_what_is_there():
    from types import SimpleNamespace

    from minitf.namespace_imports import namespace
    parent = SimpleNamespace()
    made = namespace(parent, "signal")
    assert isinstance(made, SimpleNamespace) and parent.signal is made
    assert namespace(parent, "signal") is made
    assert namespace(tf, "lookup") is tf.lookup and namespace(tf, "experimental") is tf.experimental
