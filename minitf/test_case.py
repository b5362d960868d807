"""``tf.test.TestCase``: ``unittest.TestCase`` with TensorFlow's array assertions.

Values may be Tensors, Variables, ragged tensors, numpy arrays, Python numbers or (for
``assertAllClose``) nests of them in dicts, namedtuples, lists and tuples. Execution is eager:
``evaluate`` returns numpy values and ``cached_session()`` yields an object whose ``run`` does
the same.

>>> import minitf as tf
>>> class SquareTest(tf.test.TestCase):
...     def test_square(self):
...         self.assertAllClose(tf.square([2.0, 3.0]), [4.0, 9.0])
"""
import collections
import contextlib
import os
import random
import re
import shutil
import tempfile
import unittest

import numpy

from . import backend as B
from . import dtypes
from .errors import InvalidArgumentError, OpError
from .ops.random_ops import set_seed as set_global_seed
from .ragged_tensor import RaggedTensor
from .tensor import Tensor
from .test_util import TempDir, TempFile, _CheckedThread, _EagerSession, evaluate

DEFAULT_SEED = 87654321   # TF's DEFAULT_GRAPH_SEED, set by every test's setUp


def _ndarray(value, allow_object=True):
    """A host numpy array of ``value`` (Tensor, ragged tensor, device array or array-like)."""
    if isinstance(value, (Tensor, RaggedTensor)):
        return numpy.asarray(value.numpy())
    if B.is_array(value):
        return B.to_numpy(value)
    if isinstance(value, numpy.ndarray):
        return value
    try:
        return numpy.array(value)
    except ValueError as exc:
        if allow_object and "inhomogeneous" in str(exc):
            return numpy.array(value, dtype=object)
        raise


def _as_float32_if_custom(array):
    # numpy's closeness checks do not promote ml_dtypes' bfloat16.
    return array.astype(numpy.float32) if dtypes._is_bfloat16(array.dtype) else array


def _is_floating(array):
    return dtypes.is_float(array.dtype)


def _where(cond):
    return tuple(numpy.asarray(i) for i in numpy.where(cond))


def _encode_strings(array):
    """str elements as UTF-8 bytes, so ``["a"]`` compares equal to a string tensor's b"a"."""
    flat = [x.encode("utf-8") if isinstance(x, str) else x for x in array.reshape(-1)]
    out = numpy.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(array.shape)


def _np_dtype(dtype):
    return dtype.np if isinstance(dtype, dtypes.DType) else numpy.dtype(dtype)


def _canonical_device(name):
    """``"/cpu:0"`` -> ``"/device:CPU:0"``; job, replica and task parts are kept."""
    if name is None:
        return ""
    name = getattr(name, "name", name) if not isinstance(name, str) else name
    parts = []
    for part in str(name).strip("/").split("/"):
        if not part:
            continue
        if part.lower().startswith("device:"):
            part = part[len("device:"):]
        kind, _, index = part.partition(":")
        if kind.lower() in ("cpu", "gpu", "tpu"):
            parts.append(f"device:{kind.upper()}:{index or '0'}")
        else:
            parts.append(part)
    return "/" + "/".join(parts) if parts else ""


class TestCase(unittest.TestCase):
    """``tf.test.TestCase``: seeds Python's, numpy's and minitf's random generators with
    87654321 before every test, and adds TensorFlow's array assertions."""

    def __init__(self, methodName="runTest"):
        super().__init__(methodName)
        self._threads = []
        self._temp_dir = None

    def setUp(self):
        super().setUp()
        random.seed(DEFAULT_SEED)
        numpy.random.seed(DEFAULT_SEED)
        set_global_seed(DEFAULT_SEED)
        if self.id().endswith(".test_session"):
            self.skipTest("Not a test.")   # the session helper's name starts with "test"

    def tearDown(self):
        threads, self._threads = self._threads, []
        for thread in threads:
            thread.check_termination()
        super().tearDown()

    # --- values, sessions, files, threads -------------------------------------------------
    def evaluate(self, tensors):
        """Numpy values of a Tensor or a nest of them (see ``minitf.test_case.evaluate``)."""
        return evaluate(tensors)

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """A context whose object's ``run(fetches)`` evaluates tensors (eager execution)."""
        yield _EagerSession(self)

    session = cached_session

    def test_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """Deprecated alias of ``cached_session``."""
        return self.cached_session(graph, config, use_gpu, force_gpu)

    def get_temp_dir(self):
        """A directory private to this test (the same on every call); removed after it."""
        if self._temp_dir is None:
            self._temp_dir = tempfile.mkdtemp(prefix="minitf_test_")
            self.addCleanup(shutil.rmtree, self._temp_dir, True)
        return self._temp_dir

    def create_tempdir(self, name=None, cleanup=None):
        """A new empty directory in ``get_temp_dir()`` (named ``name`` if given)."""
        base = self.get_temp_dir()
        if name:
            path = os.path.join(base, name)
            shutil.rmtree(path, ignore_errors=True)
            os.makedirs(path)
        else:
            path = tempfile.mkdtemp(dir=base)
        return TempDir(path)

    def create_tempfile(self, file_path=None, content=None, mode="w", encoding="utf8",
                        errors="strict", cleanup=None):
        """A new file in ``get_temp_dir()`` holding ``content`` (str or bytes)."""
        return TempFile._create(self.get_temp_dir(), file_path, content, mode, encoding, errors)

    def checkedThread(self, target, args=None, kwargs=None):  # noqa: N802 - TF's name
        """A thread wrapper (``start``, ``join``) whose exceptions fail the test on ``join``."""
        thread = _CheckedThread(self, target, args, kwargs)
        self._threads.append(thread)
        return thread

    # --- closeness --------------------------------------------------------------------------
    def _assert_array_like_all_close(self, a, b, rtol, atol, msg):
        a, b = _ndarray(a), _ndarray(b)
        if a.shape != b.shape and (b.ndim <= 3 or b.size < 500):
            shape_msg = f"Shape mismatch: expected {a.shape}, got {b.shape} with contents {b}."
        else:
            shape_msg = f"Shape mismatch: expected {a.shape}, got {b.shape}."
        self.assertEqual(a.shape, b.shape, shape_msg)
        a_dtype = a.dtype
        a, b = _as_float32_if_custom(a), _as_float32_if_custom(b)
        if numpy.allclose(a, b, rtol=rtol, atol=atol):
            return
        msgs = [msg]
        cond = numpy.logical_or(numpy.abs(a - b) > atol + rtol * numpy.abs(b),
                                numpy.isnan(a) != numpy.isnan(b))
        if a.ndim:
            x, y = a[_where(cond)], b[_where(cond)]
            msgs.append(f"not close where = {_where(cond)}")
        else:
            x, y = a, b
        msgs.append(f"not close lhs = {x}")
        msgs.append(f"not close rhs = {y}")
        msgs.append(f"not close dif = {numpy.abs(x - y)}")
        msgs.append(f"not close tol = {atol + rtol * numpy.abs(y)}")
        msgs.append(f"dtype = {a_dtype}, shape = {a.shape}")
        numpy.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg="\n".join(msgs),
                                      equal_nan=True)

    def _assert_all_close_recursive(self, a, b, rtol, atol, path, msg):
        if isinstance(a, RaggedTensor) or isinstance(b, RaggedTensor):
            a = a.to_list() if isinstance(a, RaggedTensor) else a
            b = b.to_list() if isinstance(b, RaggedTensor) else b
        path_str = "[" + "][".join(str(p) for p in path) + "]" if path else ""
        msg = msg or ""
        if hasattr(a, "_asdict"):
            a = a._asdict()
        if hasattr(b, "_asdict"):
            b = b._asdict()
        a_is_dict = isinstance(a, collections.abc.Mapping)
        if a_is_dict != isinstance(b, collections.abc.Mapping):
            raise ValueError(f"Can't compare dict to non-dict, a{path_str} vs b{path_str}. {msg}")
        mismatch = f"Mismatched value: a{path_str} is different from b{path_str}. {msg}"
        if a_is_dict:
            self.assertCountEqual(
                a.keys(), b.keys(),
                msg=f"mismatched keys: a{path_str} has keys {a.keys()}, but b{path_str} has "
                    f"keys {b.keys()}. {msg}")
            for k in a:
                self._assert_all_close_recursive(a[k], b[k], rtol, atol, path + [k], msg)
        elif isinstance(a, (list, tuple)):
            try:   # as whole arrays when both sides convert; else item by item
                a_array, b_array = _ndarray(a, False), _ndarray(b, False)
                if a_array.dtype == object or b_array.dtype == object:
                    raise TypeError("nested structure")
            except (ValueError, TypeError, NotImplementedError):
                if not isinstance(b, (list, tuple)) or len(a) != len(b):
                    b_len = len(b) if hasattr(b, "__len__") else "no"
                    raise ValueError(f"Mismatched length: a{path_str} has {len(a)} items, but "
                                     f"b{path_str} has {b_len} items. {msg}") from None
                for i, (a_item, b_item) in enumerate(zip(a, b)):
                    self._assert_all_close_recursive(a_item, b_item, rtol, atol,
                                                     path + [str(i)], msg)
            else:
                self._assert_array_like_all_close(a_array, b_array, rtol, atol, mismatch)
        else:
            try:
                self._assert_array_like_all_close(a, b, rtol, atol, mismatch)
            except TypeError as exc:
                detail = (f"Error: a{path_str} has {type(a)}, but b{path_str} has {type(b)}. "
                          f"{msg}")
                exc.args = (f"{exc.args[0] if exc.args else ''} : {detail}",) + exc.args[1:]
                raise

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """``a`` and ``b`` (arrays, Tensors, or nests of dicts, namedtuples, lists and tuples of
        them) are element-wise close: ``|a - b| <= atol + rtol * |b|`` (NaNs match NaNs)."""
        self._assert_all_close_recursive(a, b, rtol, atol, [], msg)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6,  # noqa: N802
                                      float_rtol=1e-6, float_atol=1e-6, half_rtol=1e-3,
                                      half_atol=1e-3, bfloat16_rtol=1e-2, bfloat16_atol=1e-2,
                                      msg=None):
        """``assertAllClose`` with tolerances widened for float32/complex64, float16 and
        bfloat16 operands (the largest applicable one wins)."""
        a, b = _ndarray(a), _ndarray(b)
        kinds = {a.dtype, b.dtype}
        if kinds & {numpy.dtype(numpy.float32), numpy.dtype(numpy.complex64)}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if numpy.dtype(numpy.float16) in kinds:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if any(dtypes._is_bfloat16(d) for d in kinds):
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """At least one element of ``a`` and ``b`` is not close."""
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        raise AssertionError(f"The two values are close at all elements. {msg or ''}")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        """``a`` and ``b`` have the same shape and values (NaNs match NaNs; str matches the
        UTF-8 bytes of a string tensor)."""
        if isinstance(a, RaggedTensor) or isinstance(b, RaggedTensor):
            a_list = a.to_list() if isinstance(a, RaggedTensor) else _ndarray(a).tolist()
            b_list = b.to_list() if isinstance(b, RaggedTensor) else _ndarray(b).tolist()
            self.assertEqual(a_list, b_list, msg)
            return
        msg = msg or ""
        a, b = _ndarray(a), _ndarray(b)
        contents = f" Contents: {b!r}. \n{msg}." if b.ndim <= 3 or b.size < 500 else f" {msg}"
        self.assertEqual(a.shape, b.shape,
                         f"Shape mismatch: expected {a.shape}, got {b.shape}.{contents}")
        if a.dtype.kind != b.dtype.kind and {a.dtype.kind, b.dtype.kind} <= {"U", "S", "O"}:
            a, b = _encode_strings(a), _encode_strings(b)
        same = numpy.asarray(a == b)
        if _is_floating(a) and _is_floating(b):
            a_f, b_f = _as_float32_if_custom(a), _as_float32_if_custom(b)
            same = numpy.logical_or(same, numpy.logical_and(numpy.isnan(a_f), numpy.isnan(b_f)))
        if numpy.all(same):
            return
        msgs = [msg]
        diff = numpy.logical_not(same)
        if a.ndim:
            x, y = a[_where(diff)], b[_where(diff)]
            msgs.append(f"not equal where = {_where(diff)}")
        else:
            x, y = a, b
        msgs.append(f"not equal lhs = {x!r}")
        msgs.append(f"not equal rhs = {y!r}")
        numpy.testing.assert_array_equal(a, b, err_msg="\n".join(msgs))
        raise AssertionError("\n".join(msgs))   # numpy may call differing objects equal

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        """At least one element of ``a`` and ``b`` differs."""
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        raise AssertionError(f"The two values are equal at all elements. {msg or ''}")

    def assertDictEqual(self, a, b, msg=None):  # noqa: N802
        """Dicts equal; if ``==`` cannot decide (array values), values are compared with
        ``assertAllClose`` (floats) or ``assertAllEqual``."""
        try:
            super().assertDictEqual(a, b, msg)
        except Exception:  # noqa: BLE001 - ambiguous array truth values among them
            self.assertCountEqual(a.keys(), b.keys())
            for k, v in a.items():
                if _is_floating(_ndarray(v)):
                    self.assertAllClose(v, b[k], msg=k)
                else:
                    self.assertAllEqual(v, b[k], msg=k)

    # --- ordering and ranges ---------------------------------------------------------------
    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        """Every element of ``a`` is > ``comparison_target``."""
        self.assertGreater(numpy.min(_ndarray(a)), comparison_target)

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        """Every element of ``a`` is < ``comparison_target``."""
        self.assertLess(numpy.max(_ndarray(a)), comparison_target)

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        """Every element of ``a`` is >= ``comparison_target``."""
        self.assertGreaterEqual(numpy.min(_ndarray(a)), comparison_target)

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        """Every element of ``a`` is <= ``comparison_target``."""
        self.assertLessEqual(numpy.max(_ndarray(a)), comparison_target)

    @staticmethod
    def _format_subscripts(subscripts, value, limit=10, indent=2):
        prefix = " " * indent
        if numpy.ndim(value) == 0:
            return [prefix + "[0] : " + str(value)]
        rows = numpy.transpose(subscripts)
        lines = [prefix + str(s) + " : " + str(value[tuple(s)]) for s in rows[:limit]]
        if len(rows) > limit:
            lines.append(prefix + "...")
        return lines

    def assertAllInRange(self, target, lower_bound, upper_bound,  # noqa: N802
                         open_lower_bound=False, open_upper_bound=False):
        """Every element of ``target`` (an int or float array, no NaN) lies in the range."""
        target = _ndarray(target)
        if not (numpy.issubdtype(target.dtype, numpy.floating)
                or numpy.issubdtype(target.dtype, numpy.integer) or _is_floating(target)):
            raise AssertionError(f"The value of {target} does not have an ordered numeric type, "
                                 f"instead it has type: {target.dtype}")
        target = _as_float32_if_custom(target)
        nans = _where(numpy.isnan(target))
        if numpy.size(nans):
            raise AssertionError(
                f"{len(nans[0])} of the {numpy.size(target)} element(s) are NaN. "
                "Subscripts(s) and value(s) of the NaN element(s):\n"
                + "\n".join(self._format_subscripts(nans, target)))
        range_str = (("(" if open_lower_bound else "[") + str(lower_bound) + ", "
                     + str(upper_bound) + (")" if open_upper_bound else "]"))
        below = target <= lower_bound if open_lower_bound else target < lower_bound
        above = target >= upper_bound if open_upper_bound else target > upper_bound
        bad = _where(numpy.logical_or(below, above))
        if numpy.size(bad):
            raise AssertionError(
                f"{len(bad[0])} of the {numpy.size(target)} element(s) are outside the range "
                f"{range_str}. Subscript(s) and value(s) of the offending elements:\n"
                + "\n".join(self._format_subscripts(bad, target)))

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        """Every element of ``target`` is in ``expected_set``."""
        target = _ndarray(target)
        missing = numpy.setdiff1d(target.reshape(-1), list(expected_set))
        if numpy.size(missing):
            raise AssertionError(f"{numpy.size(missing)} unique element(s) are not in the set "
                                 f"{expected_set}: {missing}")

    # --- scalars and small arrays ----------------------------------------------------------
    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        """``|f1 - f2| <= err`` for two floats (equal infinities pass)."""
        f1, f2 = numpy.squeeze(_ndarray(f1)), numpy.squeeze(_ndarray(f2))
        if f1 != f2:
            diff = abs(float(f1) - float(f2))
            self.assertTrue(diff <= err, "%f != %f +/- %f (difference: %g)%s"
                            % (f1, f2, err, diff, f" ({msg})" if msg is not None else ""))

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        """Two float sequences of the same length are ``assertNear`` element by element."""
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):  # noqa: N802
        """The Frobenius norm of ``ndarray1 - ndarray2`` is below ``err``."""
        near = numpy.linalg.norm(_ndarray(ndarray1) - _ndarray(ndarray2)) < err
        self.assertTrue(near, msg=msg)

    def assertShapeEqual(self, input_a, input_b, msg=None):  # noqa: N802
        """Two numpy arrays, numpy scalars or Tensors have the same (static) shape."""
        for name, value in (("input_a", input_a), ("input_b", input_b)):
            if not isinstance(value, (numpy.ndarray, numpy.generic, Tensor)):
                raise TypeError(f"{name} must be a Numpy ndarray, Numpy scalar, or a Tensor. "
                                f"Instead received {type(value)}")

        def shape(value):
            return value.shape.as_list() if isinstance(value, Tensor) else list(value.shape)

        self.assertAllEqual(shape(input_a), shape(input_b), msg=msg)

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        """``target``'s numpy dtype is ``expected_dtype`` (numpy or minitf dtype)."""
        self.assertEqual(_ndarray(target).dtype, _np_dtype(expected_dtype))

    def assertDeviceEqual(self, device1, device2, msg=None):  # noqa: N802
        """Two device names are the same after canonicalisation (``/cpu:0`` is
        ``/device:CPU:0``)."""
        device1, device2 = _canonical_device(device1), _canonical_device(device2)
        self.assertEqual(device1, device2, f"Devices {device1} and {device2} are not equal. "
                                           f"{msg}")

    def assertStartsWith(self, actual, expected_start, msg=None):  # noqa: N802
        """``actual.startswith(expected_start)``."""
        if not actual.startswith(expected_start):
            self.fail(f"{actual!r} does not start with {expected_start!r}"
                      + (f" : {msg!r}" if msg else ""))

    assertItemsEqual = unittest.TestCase.assertCountEqual

    # --- exceptions ------------------------------------------------------------------------
    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type,  # noqa: N802
                                       expected_err_re_or_predicate):
        """A context in which an ``exception_type`` must be raised whose message matches the
        regular expression (searched), or for which the predicate returns true."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(exc):
                return re.search(expected_err_re_or_predicate, str(exc))
        try:
            yield
            self.fail(exception_type.__name__ + " not raised")
        except Exception as exc:  # noqa: BLE001 - re-raised as a failure below
            if not isinstance(exc, exception_type) or not predicate(exc):
                raise AssertionError(f"Exception of type {type(exc)}: {exc}") from exc

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        """``assertRaisesWithPredicateMatch(tf.errors.OpError, ...)``."""
        return self.assertRaisesWithPredicateMatch(OpError, expected_err_re_or_predicate)

    def assertRaisesIncompatibleShapesError(self,  # noqa: N802
                                            exception_type=InvalidArgumentError):
        """An error about operands whose shapes do not broadcast or match."""
        return self.assertRaisesWithPredicateMatch(
            exception_type, r"Incompatible shapes|Dimensions must be equal|required "
                            r"broadcastable shapes|could not be broadcast|inner dimensions differ")
