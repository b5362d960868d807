"""minitf: TensorFlow's autodiff and Keras training API on numpy (CPU) or cupy (GPU).

    import minitf as tf
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x ** 2
    tape.gradient(y, x)  # 6.0
"""
import sys as _sys
import warnings as _warnings
from types import SimpleNamespace as _NS

# TF computes inf/NaN silently; numpy's floating-point RuntimeWarnings raised inside minitf's
# kernels are not shown (debugging.enable_check_numerics() is the tool to find them).
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"minitf(\.|$)")

from . import backend as _backend
from . import dtypes
from .backend import get_backend, set_backend
from .dtypes import (DType, as_dtype, bfloat16, bool, double, float16, float32, float64,  # noqa: A004
                     half, int8, int16, int32, int64, saturate_cast, string, uint8, uint16,
                     uint32, uint64)
from .tensor import Tensor, TensorShape, Variable
from .variable_updates import IndexedSlices
from . import ops as _ops
from .ops.convert import convert_to_tensor
from .ops.math_ops import (abs, add, add_n, cast, ceil, clip_by_value, cos, divide,  # noqa: A004
                           divide_no_nan, equal, erf, exp, expm1, floor, floordiv, floormod,
                           greater, greater_equal, identity, is_finite, is_inf, is_nan, less,
                           less_equal, log, log1p, log_sigmoid, logical_and, logical_not,
                           logical_or, logical_xor, maximum, minimum, multiply, negative,
                           not_equal, pow, reciprocal, round, rsqrt, scalar_mul, sigmoid, sign,
                           sin, softplus, sqrt, square, squared_difference, stop_gradient,
                           subtract, tan, tanh, truediv, atan)
from .ops.array_ops import (boolean_mask, broadcast_to, concat, constant, cumsum, expand_dims,
                            eye, fill, gather, linspace, one_hot, ones, ones_like, pad, range,
                            rank, reshape, shape, size, split, squeeze, stack, tile, transpose,
                            unstack, zeros, zeros_like)
from .ops.math_ops import where
from .ops.array_ops import repeat
from .ops.reduce_ops import (argmax, argmin, count_nonzero, reduce_all, reduce_any,
                             reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod,
                             reduce_sum)
from .ops.linalg_ops import matmul, norm, tensordot
from .ops.einsum_ops import einsum
from .ops import conv_ops as _conv
from .ops import linalg_ops as _linalg, nn_ops as _nn, random_ops as _random
from .ops.registry import InvalidArgumentError, RegisterGradient
from .clip import clip_by_global_norm, clip_by_norm, global_norm
from .tape import GradientTape, UnconnectedGradients
from .custom_gradient import custom_gradient, recompute_grad
from .forward import ForwardAccumulator
from . import debugging
from . import errors
from .function import Function, TraceError, function
from .function import ConcreteFunction, EagerFallbackWarning
from .tensor_spec import TensorSpec
from .tensor_array import TensorArray
from .printing import print_ as print  # noqa: A004 - TF's name
from . import nest

newaxis = None

math = _NS(
    abs=abs, add=add, add_n=add_n, cos=cos, divide=divide, divide_no_nan=divide_no_nan,
    equal=equal, erf=erf, exp=exp, expm1=expm1, floor=floor, floordiv=floordiv,
    floormod=floormod, greater=greater, greater_equal=greater_equal, is_finite=is_finite,
    is_inf=is_inf, is_nan=is_nan, less=less, less_equal=less_equal, log=log, log1p=log1p,
    log_sigmoid=log_sigmoid, logical_and=logical_and, logical_not=logical_not,
    logical_or=logical_or, maximum=maximum, minimum=minimum, multiply=multiply,
    negative=negative, not_equal=not_equal, pow=pow, reciprocal=reciprocal, round=round,
    rsqrt=rsqrt, sigmoid=sigmoid, sign=sign, sin=sin, softplus=softplus, sqrt=sqrt,
    square=square, squared_difference=squared_difference, subtract=subtract, tan=tan,
    tanh=tanh, truediv=truediv, atan=atan, reduce_sum=reduce_sum, reduce_mean=reduce_mean,
    reduce_max=reduce_max, reduce_min=reduce_min, reduce_prod=reduce_prod,
    reduce_logsumexp=reduce_logsumexp, reduce_any=reduce_any, reduce_all=reduce_all,
    argmax=argmax, argmin=argmin, cumsum=cumsum, count_nonzero=count_nonzero, mod=floormod)
linalg = _NS(matmul=matmul, einsum=einsum, solve=_linalg.solve, inv=_linalg.inv, det=_linalg.det,
             norm=norm, matrix_transpose=_linalg.matrix_transpose, tensordot=tensordot,
             global_norm=global_norm)
nn = _NS(relu=_nn.relu, relu6=_nn.relu6, leaky_relu=_nn.leaky_relu, elu=_nn.elu,
         gelu=_nn.gelu, sigmoid=sigmoid, tanh=tanh, softmax=_nn.softmax,
         log_softmax=_nn.log_softmax, softplus=softplus, silu=_nn.silu, swish=_nn.swish,
         softsign=_nn.softsign,
         sparse_softmax_cross_entropy_with_logits=_nn.sparse_softmax_cross_entropy_with_logits,
         softmax_cross_entropy_with_logits=_nn.softmax_cross_entropy_with_logits,
         sigmoid_cross_entropy_with_logits=_nn.sigmoid_cross_entropy_with_logits,
         dropout=_nn.dropout, moments=_nn.moments, batch_normalization=_nn.batch_normalization,
         l2_loss=_nn.l2_loss, bias_add=_nn.bias_add, conv2d=_conv.conv2d,
         max_pool2d=_conv.max_pool2d, avg_pool2d=_conv.avg_pool2d, max_pool=_conv.max_pool,
         avg_pool=_conv.avg_pool)
random = _NS(normal=_random.normal, uniform=_random.uniform, set_seed=_random.set_seed,
             truncated_normal=_random.truncated_normal, shuffle=_random.shuffle)
autodiff = _NS(ForwardAccumulator=ForwardAccumulator)
autodiff.GradientTape = GradientTape
linalg.diag = _linalg.diag
linalg.diag_part = _linalg.diag_part
nn.embedding_lookup = _nn.embedding_lookup
from .functional import foldl, foldr, map_fn, scan, vectorized_map  # noqa: E402

from .module import Module, init_scope, name_scope  # noqa: E402
from . import keras  # noqa: E402 - the Keras layer builds on everything above
from . import checkpoint as _checkpoint  # noqa: E402
train = _NS(Checkpoint=_checkpoint.Checkpoint, CheckpointManager=_checkpoint.CheckpointManager)
from . import checkpoint_reader as _checkpoint_reader  # noqa: E402 - load_checkpoint, list_variables
_checkpoint_reader.install(_sys.modules[__name__])
from .train_ema import ExponentialMovingAverage as _EMA  # noqa: E402
train.ExponentialMovingAverage = _EMA
from .keras import (activations, initializers, layers, losses, metrics,  # noqa: E402
                    mixed_precision, optimizers)
from . import distributed  # noqa: E402,F401 - data parallelism over MPI (mpi4py imported lazily)

__version__ = "0.1.0"
version = _NS(VERSION=__version__)   # tf.version.VERSION (minitf's own version)
from . import data  # noqa: E402 - tf.data input pipelines
from . import config  # noqa: E402 - tf.config
from .control_flow import case, cond, switch_case, while_loop  # noqa: E402
from .ops import composite_ops as _composite  # noqa: E402
from .ops.composite_ops import (argsort, ensure_shape,  # noqa: E402
                                executing_eagerly, gather_nd, get_static_value, is_tensor,
                                meshgrid, sort, unique)
from .ops.composite_ops import inside_function, shape_n, unique_with_counts  # noqa: E402
from .debugging import (Assert, assert_equal, assert_greater, assert_less,  # noqa: E402
                        assert_rank, control_dependencies, get_logger)
from .config import device  # noqa: E402
autograph = _NS(set_verbosity=debugging.set_verbosity,
                experimental=_NS(do_not_convert=debugging.do_not_convert))
test = _NS(is_gpu_available=config._is_gpu_available, gpu_device_name=config._gpu_device_name)
from . import test_platform as _test_platform  # noqa: E402 - tf.test.TestCase, main, ...
_test_platform.install(_sys.modules[__name__])
math.reduce_variance = _composite.reduce_variance
math.reduce_std = _composite.reduce_std
math.l2_normalize = nn.l2_normalize = linalg.l2_normalize = _composite.l2_normalize
math.top_k = nn.top_k = _composite.top_k
linalg.matvec = _composite.matvec
nn.compute_average_loss = _composite.compute_average_loss
nn.scale_regularization_loss = _composite.scale_regularization_loss
from . import summary  # noqa: E402 - tf.summary (TensorBoard)
math.softmax = nn.softmax
nn.selu = activations.selu
from .ops import segment_ops as _segment  # noqa: E402
from .ops.partition_ops import dynamic_partition, dynamic_stitch  # noqa: E402
from .ops.scatter_ops import (scatter_nd, tensor_scatter_nd_add,  # noqa: E402
                              tensor_scatter_nd_max, tensor_scatter_nd_min,
                              tensor_scatter_nd_sub, tensor_scatter_nd_update)
from .ops.slice_ops import reverse, roll, slice, strided_slice  # noqa: E402,A004
from .ops.sequence_ops import searchsorted, sequence_mask  # noqa: E402
from .ops.sequence_ops import cumprod as _cumprod  # noqa: E402
math.cumprod = _cumprod
for _name in ("segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod",
              "unsorted_segment_sum", "unsorted_segment_mean", "unsorted_segment_max",
              "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_sqrt_n",
              "bincount", "in_top_k"):
    setattr(math, _name, getattr(_segment, _name))
nn.in_top_k = _segment.in_top_k
del _name
from .ops import special_ops as _special, trig_ops as _trig  # noqa: E402
from .ops import math_extra_ops as _math_extra, bitwise_ops as _bitwise  # noqa: E402
from .ops import random_more as _random_more  # noqa: E402
from .ops.trig_ops import acos, acosh, asin, asinh, atan2, atanh, cosh, sinh  # noqa: E402
from .ops.math_extra_ops import truncatediv, truncatemod  # noqa: E402
for _name in ("acos", "acosh", "asin", "asinh", "atan2", "atanh", "cosh", "sinh"):
    setattr(math, _name, getattr(_trig, _name))
for _name in ("lgamma", "digamma", "polygamma", "zeta", "erfc", "erfinv", "xlogy", "xdivy",
              "xlog1py"):
    setattr(math, _name, getattr(_special, _name))
math.special = _NS(bessel_i0=_special.bessel_i0, bessel_i0e=_special.bessel_i0e,
                   bessel_i1=_special.bessel_i1, bessel_i1e=_special.bessel_i1e)
vars(math).update(vars(math.special))   # tf.math.bessel_i0 ... as well
for _name in ("truncatediv", "truncatemod", "polyval", "reduce_euclidean_norm",
              "cumulative_logsumexp", "is_non_decreasing", "is_strictly_increasing"):
    setattr(math, _name, getattr(_math_extra, _name))
math.rint = _math_extra.rint
math.nextafter = _math_extra.nextafter
math.reciprocal_no_nan = _math_extra.reciprocal_no_nan
math.ceil = ceil
math.log_softmax = nn.log_softmax
bitwise = _NS(bitwise_and=_bitwise.bitwise_and, bitwise_or=_bitwise.bitwise_or,
              bitwise_xor=_bitwise.bitwise_xor, invert=_bitwise.invert,
              left_shift=_bitwise.left_shift, right_shift=_bitwise.right_shift)
for _name in ("categorical", "stateless_uniform", "stateless_normal", "stateless_truncated_normal",
              "stateless_categorical", "stateless_gamma", "stateless_poisson", "gamma", "poisson",
              "Generator", "get_global_generator", "set_global_generator"):
    setattr(random, _name, getattr(_random_more, _name))
del _name
from .ops import matrix_ops as _matrix, decomposition_ops as _decomp  # noqa: E402
linalg.band_part = _matrix.band_part
linalg.trace = _matrix.trace
linalg.eye = eye
linalg.set_diag = _matrix.set_diag
linalg.adjoint = _matrix.adjoint
linalg.cross = _matrix.cross
linalg.expm = _matrix.expm
linalg.triangular_solve = _matrix.triangular_solve
linalg.cholesky_solve = _matrix.cholesky_solve
linalg.cholesky = _decomp.cholesky
linalg.qr = _decomp.qr
linalg.svd = _decomp.svd
linalg.eigh = _decomp.eigh
linalg.eigvalsh = _decomp.eigvalsh
linalg.slogdet = _decomp.slogdet
linalg.logdet = _decomp.logdet
linalg.pinv = _decomp.pinv
linalg.lstsq = _decomp.lstsq
linalg.normalize = _linalg.normalize
from .py_function import numpy_function, py_function  # noqa: E402 - Python code in a pipeline
from . import image_ops as _image_ops  # noqa: E402
image = _NS(**{_n: getattr(_image_ops, _n) for _n in _image_ops.__all__})
from .ops import nn_extra_ops as _nn_extra, depthwise_conv_ops as _depthwise  # noqa: E402
for _name in _nn_extra.__all__:
    setattr(nn, _name, getattr(_nn_extra, _name))
for _name in _depthwise.__all__:
    setattr(nn, _name, getattr(_depthwise, _name))
del _name
from . import strategy as _strategy  # noqa: E402 - tf.distribute (one replica per process)
distribute = _NS(**{_n: getattr(_strategy, _n) for _n in _strategy.__all__})
VariableAggregation = _strategy.VariableAggregation
VariableSynchronization = _strategy.VariableSynchronization
from .ops import misc_ops as _misc  # noqa: E402
from .ops.misc_ops import (broadcast_dynamic_shape, broadcast_static_shape,  # noqa: E402
                           histogram_fixed_width, identity_n, unravel_index)
math.confusion_matrix = _misc.confusion_matrix
math.multiply_no_nan = _misc.multiply_no_nan
math.accumulate_n = _misc.accumulate_n
random.experimental = _NS(stateless_split=_misc.stateless_split,
                          stateless_fold_in=_misc.stateless_fold_in)
from . import compat_v1 as _compat  # noqa: E402 - tf.compat.v1's logging and eager switches
compat = _NS(v1=_compat.v1, v2=_sys.modules[__name__])
saved_model = _compat.saved_model
from .ops import conv3d_ops as _conv3d  # noqa: E402 - 3-D and transposed convolutions, pools
for _name in _conv3d.__all__:
    setattr(nn, _name, getattr(_conv3d, _name))
del _name
from .ops import ctc_ops as _ctc  # noqa: E402 - tf.nn.ctc_* and tf.compat.v1.nn's CTC
_ctc.install(nn, compat.v1)
from .image_transform import raw_ops  # noqa: E402 - tf.raw_ops.ImageProjectiveTransformV3
from .sparse_tensor import SparseTensor  # noqa: E402 - tf.SparseTensor and tf.sparse
from .ops import sparse_ops as _sparse_ops  # noqa: E402
sparse = _NS(**_sparse_ops.PUBLIC)
abs = math.abs = _sparse_ops.sparse_aware_abs  # noqa: A001 - also takes a SparseTensor, as in TF
from . import namespace_imports as _namespace_imports  # noqa: E402 - `import minitf.compat.v1`
_namespace_imports.install()
from . import io_gfile as _io_gfile  # noqa: E402 - tf.io.gfile (local files)
from . import io_files as _io_files  # noqa: E402 - tf.io.read_file / write_file / matching_files
from . import io_csv as _io_csv  # noqa: E402 - tf.io.decode_csv
io = _NS(gfile=_NS(**{_n: getattr(_io_gfile, _n) for _n in _io_gfile.__all__}),
         decode_csv=_io_csv.decode_csv,
         **{_n: getattr(_io_files, _n) for _n in _io_files.__all__})
from .ops import special_more_ops as _special_more  # noqa: E402 - incomplete gamma/beta, ndtr
from .ops import special_more_unary_ops as _special_unary  # noqa: E402 - J, Y, K, Ei, ...
for _name in ("igamma", "igammac", "betainc", "ndtr", "log_ndtr", "ndtri", "erfcinv", "lbeta"):
    setattr(math, _name, getattr(_special_more, _name))
for _name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "bessel_k0", "bessel_k0e",
              "bessel_k1", "bessel_k1e", "dawsn", "expint", "fresnel_cos", "fresnel_sin", "spence"):
    setattr(math.special, _name, getattr(_special_unary, _name))
del _name
from . import ragged as _ragged  # noqa: E402 - RaggedTensor, tf.ragged
from . import strings_ops as _strings_ops  # noqa: E402 - tf.strings
from . import strings_split as _strings_split  # noqa: E402 - tf.strings.split and friends
strings = _NS(**{_n: getattr(_strings_ops, _n) for _n in _strings_ops.__all__},
              **{_n: getattr(_strings_split, _n) for _n in _strings_split.__all__})
ragged = _NS(**{_n: getattr(_ragged, _n) for _n in _ragged.__all__ if _n != "RaggedTensor"})
RaggedTensor = getattr(_ragged, "RaggedTensor", None)
from .ops import candidate_sampling as _candidates  # noqa: E402 - candidate samplers, sampled losses
for _name in ("uniform_candidate_sampler", "log_uniform_candidate_sampler",
              "fixed_unigram_candidate_sampler", "all_candidate_sampler"):
    setattr(random, _name, getattr(_candidates, _name))
    setattr(nn, _name, getattr(_candidates, _name))
for _name in ("compute_accidental_hits", "nce_loss", "sampled_softmax_loss"):
    setattr(nn, _name, getattr(_candidates, _name))
del _name
from . import tfrecord as _tfrecord, example_proto as _example_proto  # noqa: E402 - TFRecord, tf.train.Example
from . import example_parsing as _example_parsing, io_codecs as _io_codecs  # noqa: E402
from . import audio_ops as _audio_ops  # noqa: E402 - tf.audio
from .data import tfrecord_dataset as _tfrecord_dataset  # noqa: E402
from . import image_color as _image_color  # noqa: E402 - HSV/YIQ/YUV, hue, saturation, SSIM
from . import image_stateless as _image_stateless  # noqa: E402 - tf.image.stateless_random_*
from .ops import stateless_seeds as _stateless_seeds  # noqa: E402 - tf.random.split / fold_in
from .ops import lu_ops as _lu_ops, tridiagonal_ops as _tridiagonal_ops  # noqa: E402
from .ops import linalg_more as _linalg_more  # noqa: E402 - sqrtm, matrix_rank, eigh_tridiagonal
from .ops import space_batch_ops as _space_batch  # noqa: E402 - space_to_batch_nd, reverse_sequence
from .ops import misc_more_ops as _misc_more  # noqa: E402 - bitcast, edit_distance, fingerprint
from . import sets_ops as _sets_ops  # noqa: E402 - tf.sets
from . import initializers_v2 as _initializers_v2  # noqa: E402 - tf.zeros_initializer, ...
from . import debugging_more as _debugging_more  # noqa: E402 - more of tf.debugging
from . import image_boxes as _image_boxes  # noqa: E402 - tf.image NMS, crop_and_resize, boxes
from . import image_codecs as _image_codecs  # noqa: E402 - PNG/BMP/GIF codecs (tf.io, tf.image)
from . import lookup_tables as _lookup_tables  # noqa: E402 - tf.lookup, tf.data.experimental tables
from .data import experimental_more as _data_more  # noqa: E402 - SparseTensorSpec, Optional, ...
from . import linear_operator as _linear_operator  # noqa: E402 - tf.linalg.LinearOperator*
from . import experimental_numpy as _experimental_numpy  # noqa: E402 - tf.experimental.numpy
for _module in (_tfrecord, _example_proto, _example_parsing, _io_codecs, _audio_ops,
                _tfrecord_dataset, _image_color, _image_stateless, _stateless_seeds, _lu_ops,
                _tridiagonal_ops, _linalg_more, _space_batch, _misc_more, _sets_ops,
                _initializers_v2, _debugging_more, _image_boxes, _image_codecs, _lookup_tables,
                _data_more, _linear_operator, _experimental_numpy):
    _module.install(_sys.modules[__name__])
del _module
from .ops import nn_more_ops as _nn_more, morphology_ops as _morphology  # noqa: E402
from .ops import fractional_pool_ops as _fractional_pool  # noqa: E402
from . import nn_cell_wrappers as _nn_cell_wrappers  # noqa: E402 - tf.nn.RNNCell*Wrapper
for _module in (_nn_more, _morphology, _fractional_pool, _nn_cell_wrappers):
    _module.install(_sys.modules[__name__])
del _module
from . import sparse_more as _sparse_more, ragged_more as _ragged_more  # noqa: E402
from . import strings_unicode_more as _strings_unicode_more  # noqa: E402
from . import tensor_proto as _tensor_proto  # noqa: E402 - tf.io.serialize_tensor, parse_tensor
from .ops import random_stateless_more as _random_stateless_more  # noqa: E402
from . import ragged_ops_more as _ragged_ops_more  # noqa: E402 - TF ops on RaggedTensors
for _module in (_sparse_more, _ragged_more, _strings_unicode_more, _tensor_proto,
                _random_stateless_more, _ragged_ops_more):
    _module.install(_sys.modules[__name__])
del _module
from .dtypes import complex64, complex128  # noqa: E402,F401
from . import signal_ops as _signal_ops  # noqa: E402 - tf.complex, tf.math.real/imag, tf.signal
_signal_ops.install(_sys.modules[__name__])
