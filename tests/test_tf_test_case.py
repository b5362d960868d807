"""tf.test: TestCase assertions, sessions, temp files, compute_gradient, main, Benchmark.

Expected failure messages follow the ones TensorFlow 2.21's tf.test.TestCase prints for the same
calls; compute_gradient's expected Jacobians were printed by TF 2.21's tf.test.compute_gradient
(or are hand-derived where noted).
"""
import collections
import os
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import minitf as tf

Point = collections.namedtuple("Point", ["x", "y"])


class AssertionsTest(tf.test.TestCase):

    def test_all_close_passes_on_nests_tensors_and_lists(self):
        self.assertAllClose({"a": tf.constant([1.0, 2.0]), "b": (3, [4.0])},
                            {"a": [1.0, 2.0 + 5e-7], "b": (3, np.array([4.0]))})
        self.assertAllClose(Point(tf.constant(1.0), [2.0]), {"x": 1.0, "y": [2.0]})
        self.assertAllClose([[1.0], (2.0, 3.0)], [[1.0], (2.0, 3.0)])   # ragged nest
        self.assertAllClose(tf.Variable([np.nan, 1.0]), [np.nan, 1.0])
        self.assertAllClose(1.0, 1.5, atol=0.5, rtol=0.0)

    def test_all_close_failures_name_the_mismatch(self):
        with self.assertRaisesRegex(AssertionError,
                                    r"(?s)Not equal to tolerance rtol=1e-06, atol=1e-06.*"
                                    r"Mismatched value: a is different from b\. .*"
                                    r"not close where = \(array\(\[1\]\),\).*"
                                    r"not close lhs = \[2\.\].*not close rhs = \[2\.1\]"):
            self.assertAllClose([1.0, 2.0], tf.constant([1.0, 2.1], tf.float64))
        with self.assertRaisesRegex(AssertionError, r"a\[b\] is different from b\[b\]"):
            self.assertAllClose({"a": [1.0], "b": 2.0}, {"a": [1.0], "b": 2.5})
        with self.assertRaisesRegex(AssertionError, r"a\[1\] is different from b\[1\]"):
            self.assertAllClose([[1.0], (2.0, 3.0)], [[1.0], (2.0, 3.5)])
        with self.assertRaisesRegex(AssertionError, r"mismatched keys: a has keys "
                                                    r"dict_keys\(\['a'\]\), but b has keys"):
            self.assertAllClose({"a": 1.0}, {"c": 1.0})
        with self.assertRaisesRegex(ValueError, r"Can't compare dict to non-dict, a vs b"):
            self.assertAllClose({"a": 1.0}, [1.0])
        with self.assertRaisesRegex(AssertionError, r"Shape mismatch: expected \(2,\), got "
                                                    r"\(3,\) with contents \[1\. 2\. 3\.\]"):
            self.assertAllClose([1.0, 2.0], [1.0, 2.0, 3.0])
        with self.assertRaisesRegex(ValueError, r"Mismatched length: a has 2 items, but b has "
                                                r"3 items"):
            self.assertAllClose([[1.0], (2.0, 3.0)], [[1.0], (2.0, 3.0), 4.0])
        with self.assertRaisesRegex(AssertionError, r"not close lhs = 1\.0\n"):
            self.assertAllClose(1.0, 1.1)
        with self.assertRaisesRegex(AssertionError, "my note"):
            self.assertAllClose(1.0, 1.1, msg="my note")

    def test_all_close_according_to_type(self):
        half = np.array([1.0], np.float16)
        self.assertAllCloseAccordingToType(half, np.array([1.0009765625], np.float16))
        self.assertAllCloseAccordingToType(tf.constant([1.0]), [1.0 + 1e-6])
        with self.assertRaisesRegex(AssertionError, "dtype = float32, shape = \\(1,\\)"):
            self.assertAllCloseAccordingToType(np.array([1.0], np.float32),
                                               np.array([1.002], np.float32))
        with self.assertRaisesRegex(AssertionError, "rtol=0.001, atol=0.001"):
            self.assertAllCloseAccordingToType(half, np.array([1.01], np.float16))
        with self.assertRaisesRegex(AssertionError, "rtol=0.5, atol=0.5"):
            self.assertAllCloseAccordingToType([1.0], [4.0], rtol=0.5, atol=0.5)

    def test_not_all_close(self):
        self.assertNotAllClose([1.0, 2.0], [1.0, 2.1])
        with self.assertRaisesRegex(AssertionError,
                                    r"^The two values are close at all elements\. $"):
            self.assertNotAllClose(tf.constant([1.0]), [1.0])

    def test_all_equal(self):
        self.assertAllEqual(tf.constant([[1, 2], [3, 4]]), [[1, 2], [3, 4]])
        self.assertAllEqual(tf.constant(["a", "b"]), ["a", "b"])
        self.assertAllEqual([np.nan, 1.0], tf.constant([np.nan, 1.0]))
        self.assertAllEqual(tf.ragged.constant([[1, 2], [3]]), [[1, 2], [3]])
        with self.assertRaisesRegex(AssertionError, r"(?s)Arrays are not equal.*"
                                                    r"not equal where = \(array\(\[1\]\),\).*"
                                                    r"not equal lhs = array\(\[2\]\).*"
                                                    r"not equal rhs = array\(\[5\], dtype=int32\)"):
            self.assertAllEqual([1, 2, 3], tf.constant([1, 5, 3]))
        with self.assertRaisesRegex(AssertionError, r"Shape mismatch: expected \(2,\), got "
                                                    r"\(3,\)\. Contents: array\(\[1, 2, 3\]\)"):
            self.assertAllEqual([1, 2], [1, 2, 3])
        with self.assertRaisesRegex(AssertionError, "not equal lhs = array\\(\\[b'b'\\]"):
            self.assertAllEqual(tf.constant(["a", "b"]), ["a", "c"])
        with self.assertRaises(AssertionError):
            self.assertAllEqual(tf.ragged.constant([[1, 2], [3]]), [[1, 2], [4]])

    def test_not_all_equal(self):
        self.assertNotAllEqual([1, 2], [1, 3])
        with self.assertRaisesRegex(AssertionError,
                                    r"^The two values are equal at all elements\. note$"):
            self.assertNotAllEqual(tf.constant([1]), [1], msg="note")

    def test_ordering(self):
        values = tf.constant([1, 2])
        self.assertAllGreater(values, 0)
        self.assertAllLess(values, 3)
        self.assertAllGreaterEqual(values, 1)
        self.assertAllLessEqual(values, 2)
        with self.assertRaisesRegex(AssertionError, r"\(1\) not greater than 1$"):
            self.assertAllGreater(values, 1)
        with self.assertRaisesRegex(AssertionError, r"\(2\) not less than 2$"):
            self.assertAllLess(values, 2)
        with self.assertRaisesRegex(AssertionError, r"\(1\) not greater than or equal to 2$"):
            self.assertAllGreaterEqual(values, 2)
        with self.assertRaisesRegex(AssertionError, r"\(2\) not less than or equal to 1$"):
            self.assertAllLessEqual(values, 1)

    def test_in_range(self):
        self.assertAllInRange(tf.constant([0.0, 2.5, 5.0]), 0, 5)
        self.assertAllInRange([1, 4], 0, 5, open_lower_bound=True, open_upper_bound=True)
        with self.assertRaisesRegex(AssertionError,
                                    r"^1 of the 3 element\(s\) are outside the range \[0, 5\]\. "
                                    r"Subscript\(s\) and value\(s\) of the offending elements:"
                                    r"\n  \[2\] : 7\.0$"):
            self.assertAllInRange([1.0, 5.0, 7.0], 0, 5)
        with self.assertRaisesRegex(AssertionError, r"outside the range \[0, 5\)\. .*\n"
                                                    r"  \[1\] : 5\.0"):
            self.assertAllInRange(tf.constant([1.0, 5.0]), 0, 5, open_upper_bound=True)
        with self.assertRaisesRegex(AssertionError, r"^1 of the 2 element\(s\) are NaN\. "
                                                    r".*\n  \[1\] : nan$"):
            self.assertAllInRange([1.0, np.nan], 0, 5)
        with self.assertRaisesRegex(AssertionError, r"does not have an ordered numeric type, "
                                                    r"instead it has type: <U1"):
            self.assertAllInRange(["a"], 0, 5)

    def test_in_set(self):
        self.assertAllInSet(tf.constant([[1, 2], [2, 1]]), {1, 2})
        with self.assertRaisesRegex(AssertionError, r"^2 unique element\(s\) are not in the set "
                                                    r"\[1, 2\]: \[4 5\]$"):
            self.assertAllInSet([1, 2, 4, 5, 5], [1, 2])

    def test_near(self):
        self.assertNear(1.0, 1.05, 0.1)
        self.assertNear(float("inf"), float("inf"), 0.0)
        self.assertNear(tf.constant(2.0), 2.0, 0.0)
        self.assertArrayNear([1.0, 2.0], tf.constant([1.05, 1.95]), 0.1)
        self.assertNDArrayNear(np.zeros(2), np.full(2, 0.1), 0.5)
        with self.assertRaisesRegex(AssertionError, r"1\.000000 != 1\.500000 \+/- 0\.100000 "
                                                    r"\(difference: 0\.5\) \(m\)$"):
            self.assertNear(1.0, 1.5, 0.1, msg="m")
        with self.assertRaisesRegex(AssertionError, r"2\.000000 != 2\.500000 \+/- 0\.100000"):
            self.assertArrayNear([1.0, 2.0], [1.0, 2.5], 0.1)
        with self.assertRaisesRegex(AssertionError, r"^2 != 1$"):
            self.assertArrayNear([1.0, 2.0], [1.0], 0.1)
        with self.assertRaisesRegex(AssertionError, "is not true"):
            self.assertNDArrayNear(np.zeros(2), np.ones(2), 0.5)   # norm is sqrt(2)

    def test_shapes_and_dtypes(self):
        self.assertShapeEqual(np.zeros([2, 3]), tf.zeros([2, 3]))
        self.assertDTypeEqual(tf.constant([1.0]), np.float32)
        self.assertDTypeEqual(np.zeros(2), tf.float64)
        with self.assertRaisesRegex(AssertionError, r"not equal where = \(array\(\[0, 1\]\),\)"):
            self.assertShapeEqual(np.zeros([2, 3]), np.zeros([3, 2]))
        with self.assertRaisesRegex(TypeError, r"input_a must be a Numpy ndarray, Numpy scalar, "
                                               r"or a Tensor\. Instead received <class 'list'>"):
            self.assertShapeEqual([1], np.zeros([3, 2]))
        with self.assertRaisesRegex(AssertionError,
                                    r"dtype\('float32'\) != dtype\('float64'\)"):
            self.assertDTypeEqual(np.zeros([2], np.float32), np.float64)

    def test_strings_items_and_devices(self):
        self.assertStartsWith("hello", "he")
        self.assertItemsEqual([1, 2, 2], [2, 1, 2])
        self.assertCountEqual((3, 1), [1, 3])
        self.assertDeviceEqual("/cpu:0", "/device:CPU:0")
        self.assertDeviceEqual("/job:a/gpu:1", "/job:a/device:GPU:1")
        with self.assertRaisesRegex(AssertionError, r"^'hello' does not start with 'lo'$"):
            self.assertStartsWith("hello", "lo")
        with self.assertRaisesRegex(AssertionError, r"First has 1, Second has 2:  2"):
            self.assertItemsEqual([1, 2], [2, 2])
        with self.assertRaisesRegex(AssertionError, r"Devices /device:CPU:0 and /device:GPU:0 "
                                                    r"are not equal\. None"):
            self.assertDeviceEqual("/cpu:0", "/gpu:0")

    def test_dict_equal_with_arrays(self):
        self.assertDictEqual({"a": np.array([1.0, 2.0]), "b": tf.constant([3])},
                             {"a": [1.0, 2.0], "b": [3]})
        with self.assertRaisesRegex(AssertionError, "not close lhs"):
            self.assertDictEqual({"a": np.array([1.0, 2.0])}, {"a": [1.0, 2.5]})

    def test_raises_op_error(self):
        with self.assertRaisesOpError("could not be broadcast"):
            tf.add(tf.ones([2]), tf.ones([3]))
        with self.assertRaisesIncompatibleShapesError():
            tf.add(tf.ones([2]), tf.ones([3]))
        with self.assertRaisesIncompatibleShapesError(ValueError):
            tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))
        with self.assertRaisesWithPredicateMatch(KeyError, lambda e: e.args == ("k",)):
            {}["k"]
        with self.assertRaisesRegex(AssertionError, r"Exception of type <class "
                                                    r"'minitf\.ops\.registry\.InvalidArgumentError'"
                                                    r">: add: invalid inputs"):
            with self.assertRaisesOpError("foo"):
                tf.add(tf.ones([2]), tf.ones([3]))
        with self.assertRaisesRegex(AssertionError, "Exception of type <class 'AssertionError'>"
                                                    ": OpError not raised"):
            with self.assertRaisesOpError("foo"):
                pass
        with self.assertRaisesRegex(AssertionError, "Exception of type <class 'KeyError'>"):
            with self.assertRaisesOpError("k"):
                {}["k"]


class SessionsFilesAndSeedsTest(tf.test.TestCase):

    def test_evaluate_nests(self):
        out = self.evaluate({"a": tf.constant([1, 2]), "b": (tf.constant(3.0), None),
                             "c": lambda: tf.constant(4), "d": Point(tf.constant(5), 6)})
        self.assertIsInstance(out["a"], np.ndarray)
        np.testing.assert_array_equal(out["a"], [1, 2])
        self.assertEqual(out["b"], (3.0, None))
        self.assertEqual(out["c"], 4)
        self.assertEqual(out["d"], Point(5, 6))
        ragged = self.evaluate(tf.ragged.constant([[1, 2], [3]]))
        self.assertEqual(ragged.to_list(), [[1, 2], [3]])
        np.testing.assert_array_equal(ragged.row_splits, [0, 2, 3])
        np.testing.assert_array_equal(ragged.flat_values, [1, 2, 3])
        sparse = self.evaluate(tf.sparse.SparseTensor([[0, 1]], [7.0], [2, 2]))
        np.testing.assert_array_equal(sparse.indices, [[0, 1]])
        np.testing.assert_array_equal(sparse.dense_shape, [2, 2])

    def test_sessions_run_eagerly(self):
        for make in (self.cached_session, self.session, self.test_session):
            with make() as sess:
                self.assertEqual(sess.run(tf.constant(2) * 3), 6)
                np.testing.assert_array_equal(sess.run([tf.constant([1])])[0], [1])
                with pytest.raises(RuntimeError, match="feed_dict is not supported"):
                    sess.run(tf.constant(1), feed_dict={"x": 1})

    def test_temp_dirs_and_files(self):
        base = self.get_temp_dir()
        self.assertEqual(base, self.get_temp_dir())
        self.assertTrue(os.path.isdir(base))
        d = self.create_tempdir()
        self.assertTrue(d.full_path.startswith(base) and os.path.isdir(d))
        f = d.create_file("sub/x.txt", content="hi")
        self.assertEqual(f.full_path, os.path.join(d.full_path, "sub", "x.txt"))
        self.assertEqual(f.read_text(), "hi")
        named = self.create_tempdir("named")
        self.assertEqual(named.full_path, os.path.join(base, "named"))
        g = self.create_tempfile(content=b"\x00\x01")
        self.assertEqual(g.read_bytes(), b"\x00\x01")
        self.assertEqual(os.path.dirname(g.full_path), base)
        sub = d.mkdir("inner")
        self.assertTrue(os.path.isdir(os.path.join(d, "inner")) and sub.full_path.endswith("inner"))

    def test_seeds_reset_before_each_test_a(self):
        self._check_seeded()

    def test_seeds_reset_before_each_test_b(self):
        self._check_seeded()

    def _check_seeded(self):
        # setUp seeds Python, numpy and minitf with 87654321 (TF's DEFAULT_GRAPH_SEED); the
        # Python and numpy draws are the ones TF 2.21's TestCase gives.
        self.assertEqual(random.random(), 0.3499765785632496)
        self.assertEqual(np.random.rand(), 0.18463433217903202)
        tf.random.set_seed(87654321)
        expected = tf.random.uniform([3]).numpy()
        self.setUp()
        self.assertAllEqual(tf.random.uniform([3]), expected)

    def test_checked_thread(self):
        results = []
        thread = self.checkedThread(results.append, args=(5,))
        thread.start()
        thread.join()
        self.assertEqual(results, [5])

        def fail():
            raise ValueError("boom")

        bad = self.checkedThread(fail)
        bad.start()
        with self.assertRaisesRegex(AssertionError, "Error in checkedThread: boom"):
            bad.join()

    def test_unjoined_checked_thread_fails_teardown(self):
        thread = self.checkedThread(lambda: None)
        thread.start()
        thread._thread.join()
        with self.assertRaisesRegex(AssertionError, "A checked thread was not joined"):
            self.tearDown()


class DecoratorsTest(tf.test.TestCase):

    @tf.test.disable_with_predicate(pred=lambda: True, skip_message="always skipped")
    def test_disabled(self):
        raise AssertionError("must not run")

    @tf.test.disable_with_predicate(pred=lambda: False, skip_message="never skipped")
    def test_enabled(self):
        self.ran = True
        self.assertTrue(self.ran)


def test_disable_with_predicate_skips_and_runs():
    import unittest
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(DecoratorsTest).run(result)
    assert sorted(reason for _, reason in result.skipped) == ["Not a test.", "always skipped"]
    assert result.testsRun == 3 and not result.failures and not result.errors


def test_with_eager_op_as_function_returns_class():
    class C:
        pass
    assert tf.test.with_eager_op_as_function(C) is C
    assert tf.test.with_eager_op_as_function(only_as_function=True)(C) is C


# --- compute_gradient --------------------------------------------------------------------------

def test_compute_gradient_matches_tf_elementwise():
    theoretical, numerical = tf.test.compute_gradient(
        lambda x: tf.sin(x) * x, [tf.constant([[0.5, 1.0, -2.0]], tf.float64)])
    assert len(theoretical) == 1 and theoretical[0].shape == (3, 3)
    assert theoretical[0].dtype == np.float64 and numerical[0].dtype == np.float64
    np.testing.assert_allclose(np.diag(theoretical[0]),
                               [0.9182168195493894, 1.3817732906760363, -0.0770037537313969],
                               rtol=1e-12)
    np.testing.assert_allclose(np.diag(numerical[0]),
                               [0.9182165211975075, 1.3817728035526784, -0.0770034524341554],
                               rtol=1e-9)
    assert np.count_nonzero(theoretical[0] - np.diag(np.diag(theoretical[0]))) == 0


def test_compute_gradient_matches_tf_softmax():
    theoretical, numerical = tf.test.compute_gradient(
        tf.nn.softmax, [tf.constant([1.0, 2.0, 3.0], tf.float64)])
    np.testing.assert_allclose(theoretical[0], [
        [0.08192506906499322, -0.02203304452017429, -0.05989202454481891],
        [-0.02203304452017429, 0.18483644650997869, -0.16280340198980436],
        [-0.05989202454481891, -0.16280340198980436, 0.2226954265346234]], rtol=1e-12)
    np.testing.assert_allclose(numerical[0], [
        [0.08192507568585228, -0.02203304413838225, -0.05989202134460925],
        [-0.02203304630079117, 0.18483644330711968, -0.1628033932907158],
        [-0.05989202938502558, -0.16280339916875164, 0.2226954146352682]], rtol=1e-8)


def test_compute_gradient_layout_is_y_rows_by_x_columns():
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b = np.array([[0.5], [-1.0]], np.float32)
    theoretical, numerical = tf.test.compute_gradient(tf.matmul, [a, b])
    want_a = [[0.5, -1.0, 0.0, 0.0], [0.0, 0.0, 0.5, -1.0]]     # TF 2.21
    want_b = [[1.0, 2.0], [3.0, 4.0]]
    for jac in (theoretical, numerical):
        assert isinstance(jac, tuple) and [j.dtype for j in jac] == [np.float32] * 2
        np.testing.assert_allclose(jac[0], want_a, atol=1e-6)
        np.testing.assert_allclose(jac[1], want_b, atol=1e-6)
    theoretical, numerical = tf.test.compute_gradient(
        lambda x: tf.reduce_mean(tf.square(x), axis=1),
        [tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], tf.float64)])
    want = [[1, 2, 0, 0, 0, 0], [0, 0, 3, 4, 0, 0], [0, 0, 0, 0, 5, 6]]   # TF 2.21
    np.testing.assert_allclose(theoretical[0], want, atol=1e-12)
    np.testing.assert_allclose(numerical[0], want, atol=1e-9)


def test_compute_gradient_two_arguments_scalar_output():
    theoretical, numerical = tf.test.compute_gradient(
        lambda x, y: tf.reduce_sum(x * x * y),
        [tf.constant([1.0, -2.0], tf.float64), tf.constant([3.0, 0.5], tf.float64)])
    for jac in (theoretical, numerical):   # TF 2.21: ([[6, -2]], [[1, 4]])
        np.testing.assert_allclose(jac[0], [[6.0, -2.0]], rtol=1e-9)
        np.testing.assert_allclose(jac[1], [[1.0, 4.0]], rtol=1e-9)


def test_compute_gradient_delta():
    # d/dx x**3 at 2 is 12; the central difference adds delta**2 exactly (hand-derived).
    theoretical, numerical = tf.test.compute_gradient(lambda x: x ** 3,
                                                      [tf.constant(2.0, tf.float64)])
    assert theoretical[0].shape == (1, 1) and theoretical[0][0, 0] == 12.0
    assert numerical[0][0, 0] == pytest.approx(12.0 + 2.0 ** -20, rel=1e-14)  # delta = 1/1024
    _, numerical = tf.test.compute_gradient(lambda x: x ** 3, [tf.constant(2.0, tf.float64)],
                                            delta=0.5)
    assert numerical[0][0, 0] == pytest.approx(12.25, rel=1e-14)
    theoretical, numerical = tf.test.compute_gradient(tf.square, [3.0])
    assert theoretical[0].dtype == np.float32 and float(numerical[0][0, 0]) == 6.0


def test_compute_gradient_bad_input():
    with pytest.raises(ValueError, match=r"compute_gradient: `x` must be a list or tuple of "
                                         r"values convertible to a Tensor .* not a <class"):
        tf.test.compute_gradient(tf.square, tf.constant(1.0))
    with pytest.raises(TypeError, match=r"compute_gradient: cannot compute gradient for "
                                        r"unsupported type int32 of argument 1; expected one "
                                        r"of float16"):
        tf.test.compute_gradient(lambda x, i: tf.gather(x, i),
                                 [tf.constant([1.0, 2.0, 3.0]), tf.constant([2, 0])])


# --- main, platform queries, Benchmark ---------------------------------------------------------

_SCRIPT = textwrap.dedent("""\
    import minitf as tf

    class T(tf.test.TestCase):
        def test_square(self):
            self.assertAllClose(tf.square([2.0, 3.0]), [4.0, {value}])

    if __name__ == "__main__":
        tf.test.main()
    """)


@pytest.mark.parametrize("value, code", [("9.0", 0), ("9.5", 1)])
def test_main_exit_code(tmp_path, value, code):
    script = tmp_path / "my_test.py"
    script.write_text(_SCRIPT.format(value=value))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == code, proc.stderr
    assert ("OK (skipped=1)" if code == 0 else "FAILED (failures=1, skipped=1)") in proc.stderr
    assert "Ran 2 tests" in proc.stderr    # test_square and the skipped test_session


def test_platform_queries():
    import importlib.util
    import platform
    cupy_installed = importlib.util.find_spec("cupy") is not None
    assert tf.test.is_built_with_cuda() is cupy_installed
    assert tf.test.is_built_with_gpu_support() is cupy_installed
    assert tf.test.is_built_with_rocm() is False
    assert tf.test.is_built_with_xla() is False
    on_gpu = tf.config.list_physical_devices("GPU") != []
    assert tf.test.is_gpu_available() is on_gpu
    assert tf.test.gpu_device_name() == ("/device:GPU:0" if on_gpu else "")
    host_is_x86 = platform.machine().lower() in ("x86_64", "amd64")
    assert tf.test.is_cpu_target_available("x86") is host_is_x86
    assert tf.test.is_cpu_target_available("aarch64") is (not host_is_x86)
    assert tf.test.benchmark_config() is None
    assert tf.test.experimental.sync_devices() is None


class _MyBenchmark(tf.test.Benchmark):
    def benchmark_add(self):
        return self.run_op_benchmark(None, lambda: tf.constant(1.0) + 1.0, burn_iters=1,
                                     min_iters=3, extras={"k": 1})

    def benchmark_report(self):
        self.report_benchmark(iters=5, wall_time=0.25, name="custom")


def test_benchmark(caplog):
    bench = _MyBenchmark()
    with caplog.at_level("INFO", logger="minitf"):
        values = bench.benchmark_add()
        bench.benchmark_report()
    assert values["iters"] == 3 and values["name"] is None and values["wall_time"] >= 0
    assert set(values["extras"]) == {"k", "wall_time_mean", "wall_time_stdev"}
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("Benchmark [_MyBenchmark.benchmark_add] iters: 3, wall_time:")
    assert messages[1] == ("Benchmark [_MyBenchmark.custom] iters: 5, wall_time: 0.25, "
                           "cpu_time: -1,throughput: -1, extras: None, metrics: None")
    assert not _MyBenchmark.is_abstract() and tf.test.Benchmark.is_abstract()
    with pytest.raises(TypeError, match=r"report_benchmark: extras must be a dict, got "
                                        r"<class 'list'>"):
        bench.report_benchmark(extras=[1])
    with caplog.at_level("INFO", logger="minitf"):
        bench.report_benchmark(iters=1)      # called directly: named after the method itself
    assert caplog.records[-1].getMessage().startswith(
        "Benchmark [_MyBenchmark.report_benchmark] iters: 1,")
    np.testing.assert_array_equal(bench.evaluate([tf.constant([1, 2])])[0], [1, 2])
