"""Stateless random ops, categorical/gamma/poisson sampling and ``tf.random.Generator``.

Every sampler here is a *stateless* op: its first input is a seed pair ``[a, b]`` and its
values depend only on that pair (a Philox counter-based generator keyed by it, drawn on the
host and moved to the backend, so numpy and cupy give the same numbers). The stateful
functions (``categorical``, ``gamma``, ``poisson``) first draw a fresh seed pair from the
global generator with ``random_ops.uniform``: a ``minitf.function`` replays that draw on every
call (it is a stateful op with no inputs), so each call gets new samples, in eager order, and
``random.set_seed`` makes the whole sequence repeatable. A ``Generator`` keeps its counter in a
Variable and bumps it with ``assign_add`` on each draw, which a trace also replays.
"""
import numpy

from .. import backend as B
from .. import dtypes
from ..module import Module
from ..tensor import Tensor, Variable
from . import random_ops
from .array_ops import _shape_tuple, stack
from .convert import convert_to_tensor
from .math_ops import cast, divide
from .registry import InvalidArgumentError, apply, defop

_SEED_MAX = 2 ** 62


def _seed_tensor(seed, op):
    """A stateless op's seed as an int64 tensor of shape [2]."""
    seed = seed if isinstance(seed, Tensor) else convert_to_tensor(seed)
    if seed._value.dtype.kind not in "iu" or tuple(seed.shape) != (2,):
        raise InvalidArgumentError(f"{op}: seed must be an integer tensor of shape [2], got "
                                   f"shape {tuple(seed.shape)} dtype {seed.dtype.name}", op=op)
    return cast(seed, "int64")


def _host_rng(seed):
    """The Philox generator keyed by the seed pair (an int64 backend array of shape [2])."""
    if seed.dtype.kind not in "iu":
        raise TypeError(f"the seed must be an integer array, got dtype {seed.dtype}")
    if tuple(seed.shape) != (2,):
        raise ValueError(f"the seed must have shape [2], got {tuple(seed.shape)}")
    a, b = (int(v) % 2 ** 64 for v in B.to_numpy(seed).tolist())
    return numpy.random.Generator(numpy.random.Philox(key=a | (b << 64)))


def _to_backend(values, dtype):
    return B.from_numpy(numpy.asarray(values, dtype=dtype, order="C"))   # keeps 0-d draws 0-d


def _host_float(dtype):
    """Draw in float64 for half precision dtypes (numpy draws only float32/float64)."""
    return dtype if dtype in (numpy.float32, numpy.float64) else numpy.float64


def _fresh_seed(seed):
    """A seed pair drawn from the global generator (a replayed stateful op in a trace)."""
    return random_ops.uniform([2], 0, _SEED_MAX, dtype="int64", seed=seed)


# --- stateless kernels -----------------------------------------------------------------------

def _unit_uniform_forward(seed, shape, dtype):
    return _to_backend(_host_rng(seed).random(size=shape, dtype=_host_float(dtype)), dtype)


def _uniform_int_forward(seed, minval, maxval, shape, dtype):
    if minval.dtype.kind not in "iu" or maxval.dtype.kind not in "iu":
        raise TypeError(f"minval and maxval must be integers, got {minval.dtype} and "
                        f"{maxval.dtype}")
    low, high = int(B.scalar(minval)), int(B.scalar(maxval))
    if low >= high:
        raise ValueError(f"need minval < maxval, got minval={low}, maxval={high}")
    return _to_backend(_host_rng(seed).integers(low, high, size=shape, dtype=dtype), dtype)


def _uniform_full_int_forward(seed, shape, dtype):
    info = numpy.iinfo(dtype)
    values = _host_rng(seed).integers(info.min, info.max, size=shape, dtype=dtype,
                                      endpoint=True)
    return _to_backend(values, dtype)


def _standard_normal_forward(seed, shape, dtype):
    values = _host_rng(seed).standard_normal(size=shape, dtype=_host_float(dtype))
    return _to_backend(values, dtype)


def _truncated_normal_forward(seed, shape, dtype):
    rng = _host_rng(seed)
    values = rng.standard_normal(size=shape)
    bad = numpy.abs(values) > 2
    while bad.any():
        values[bad] = rng.standard_normal(size=int(bad.sum()))
        bad = numpy.abs(values) > 2
    return _to_backend(values, dtype)


def _categorical_forward(seed, logits, num_samples, dtype):
    # Gumbel-max: argmax(logits + Gumbel noise) is a draw from softmax(logits).
    xp = B.xp
    if logits.ndim != 2:
        raise ValueError(f"logits must be a matrix [batch_size, num_classes], got shape "
                         f"{tuple(logits.shape)}")
    batch, classes = logits.shape
    if classes == 0 and num_samples > 0:
        raise ValueError("logits have no classes to sample from")
    noise = _host_rng(seed).random(size=(batch, num_samples, classes))
    gumbel = -numpy.log(-numpy.log(noise))
    scores = logits.astype(numpy.float64)[:, None, :] + B.from_numpy(gumbel)
    if classes == 0:
        return xp.zeros((batch, num_samples), dtype=dtype)
    return xp.argmax(scores, axis=-1).astype(dtype)


def _gamma_forward(seed, alpha, shape):
    if not dtypes.is_float(alpha.dtype):
        raise TypeError(f"alpha must be a floating-point array, got dtype {alpha.dtype}")
    alpha_host = B.to_numpy(alpha).astype(numpy.float64)
    size = tuple(shape) + alpha_host.shape
    values = _host_rng(seed).standard_gamma(numpy.broadcast_to(alpha_host, size), size=size)
    return _to_backend(values, alpha.dtype)


def _poisson_forward(seed, lam, shape, dtype):
    if lam.dtype.kind not in "iuf" and not dtypes.is_float(lam.dtype):
        raise TypeError(f"lam must be a float or integer array, got dtype {lam.dtype}")
    lam_host = B.to_numpy(lam).astype(numpy.float64)
    size = tuple(shape) + lam_host.shape
    if (lam_host < 0).any():
        raise ValueError("lam must be non-negative")
    return _to_backend(_host_rng(seed).poisson(numpy.broadcast_to(lam_host, size), size=size),
                       dtype)


# Samples are templates for the property tests of every op (these ops have no gradient).
_SEED = numpy.array([1, 2], dtype=numpy.int64)


def _drawn(dtype, **extra):
    return lambda: [((_SEED,), {"shape": (2, 3), "dtype": numpy.dtype(dtype), **extra})]


_unit_uniform = defop("stateless_random_uniform", _unit_uniform_forward,
                      type="StatelessRandomUniformV2", samples=_drawn("float32"))
_uniform_int = defop("stateless_random_uniform_int", _uniform_int_forward, arity=3,
                     type="StatelessRandomUniformIntV2",
                     samples=lambda: [((_SEED, numpy.array(0), numpy.array(5)),
                                       {"shape": (2, 3), "dtype": numpy.dtype("int32")})])
_uniform_full_int = defop("stateless_random_uniform_full_int", _uniform_full_int_forward,
                          type="StatelessRandomUniformFullIntV2", samples=_drawn("int64"))
_standard_normal = defop("stateless_random_normal", _standard_normal_forward,
                         type="StatelessRandomNormalV2", samples=_drawn("float32"))
_truncated = defop("stateless_truncated_normal", _truncated_normal_forward,
                   type="StatelessTruncatedNormalV2", samples=_drawn("float32"))
_categorical = defop("stateless_multinomial", _categorical_forward, arity=2,
                     type="StatelessMultinomial",
                     samples=lambda: [((_SEED, numpy.linspace(-1, 1, 6).reshape(2, 3)),
                                       {"num_samples": 4, "dtype": numpy.dtype("int64")})])
_gamma = defop("stateless_random_gamma", _gamma_forward, arity=2, type="StatelessRandomGammaV2",
               samples=lambda: [((_SEED, numpy.array([0.5, 2.0, 3.0])), {"shape": (2,)})])
_poisson = defop("stateless_random_poisson", _poisson_forward, arity=2,
                 type="StatelessRandomPoisson",
                 samples=lambda: [((_SEED, numpy.array([0.5, 2.0, 3.0])),
                                   {"shape": (2,), "dtype": numpy.dtype("int32")})])


# --- stateless public functions --------------------------------------------------------------

def _float_dtype(dtype, op):
    dt = dtypes.as_dtype(dtype)
    if not dt.is_floating:
        raise ValueError(f"{op}: dtype must be a floating-point type, got {dt.name}")
    return dt


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype="float32", name=None,
                      alg="auto_select"):
    """Uniform samples in [minval, maxval) determined by ``seed`` (shape [2] integers).

    Integer dtypes need both bounds, or neither for the full range of the dtype.
    """
    dt = dtypes.as_dtype(dtype)
    seed = _seed_tensor(seed, "stateless_uniform")
    shape = _shape_tuple(shape)
    if dt.is_integer:
        if minval is None and maxval is None:
            return apply(_uniform_full_int.op, (seed,), {"shape": shape, "dtype": dt.np})
        if minval is None or maxval is None:
            raise ValueError("stateless_uniform: integer dtypes need both minval and maxval, "
                             "or neither (for the full range)")
        low = convert_to_tensor(minval, dtype=dt)
        high = convert_to_tensor(maxval, dtype=dt)
        return apply(_uniform_int.op, (seed, low, high), {"shape": shape, "dtype": dt.np})
    if not dt.is_floating:
        raise ValueError(f"stateless_uniform: unsupported dtype {dt.name}")
    unit = apply(_unit_uniform.op, (seed,), {"shape": shape, "dtype": dt.np})
    maxval = 1.0 if maxval is None else maxval
    low = convert_to_tensor(minval, dtype=dt)
    return unit * (convert_to_tensor(maxval, dtype=dt) - low) + low


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype="float32", name=None,
                     alg="auto_select"):
    """Normal samples N(mean, stddev^2) determined by ``seed`` (shape [2] integers)."""
    dt = _float_dtype(dtype, "stateless_normal")
    seed = _seed_tensor(seed, "stateless_normal")
    z = apply(_standard_normal.op, (seed,), {"shape": _shape_tuple(shape), "dtype": dt.np})
    return z * convert_to_tensor(stddev, dtype=dt) + convert_to_tensor(mean, dtype=dt)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype="float32", name=None,
                               alg="auto_select"):
    """Normal samples redrawn beyond two standard deviations, determined by ``seed``."""
    dt = _float_dtype(dtype, "stateless_truncated_normal")
    seed = _seed_tensor(seed, "stateless_truncated_normal")
    z = apply(_truncated.op, (seed,), {"shape": _shape_tuple(shape), "dtype": dt.np})
    return z * convert_to_tensor(stddev, dtype=dt) + convert_to_tensor(mean, dtype=dt)


def _shape_of(value):
    """The shape of an optional parameter (a Tensor, array, list or number)."""
    if value is None:
        return ()
    return tuple(value.shape) if isinstance(value, Tensor) else numpy.shape(value)


def _logits(logits, op):
    logits = logits if isinstance(logits, Tensor) else convert_to_tensor(logits)
    if not dtypes.is_float(logits._value.dtype):
        raise TypeError(f"{op}: logits must be a floating-point tensor, got "
                        f"{logits.dtype.name}")
    return logits


def stateless_categorical(logits, num_samples, seed, dtype="int64", name=None):
    """``num_samples`` class indices per row of ``logits`` [batch, classes], drawn from
    softmax(logits) and determined by ``seed``; the result is [batch, num_samples]."""
    dt = dtypes.as_dtype(dtype)
    if dt.name not in ("int32", "int64"):
        raise ValueError(f"stateless_categorical: dtype must be int32 or int64, got {dt.name}")
    logits = _logits(logits, "stateless_categorical")
    seed = _seed_tensor(seed, "stateless_categorical")
    return apply(_categorical.op, (seed, logits), {"num_samples": int(num_samples),
                                                   "dtype": dt.np})


def stateless_gamma(shape, seed, alpha, beta=None, dtype="float32", name=None):
    """Gamma(alpha, beta) samples determined by ``seed``, of shape ``shape`` (which must end
    with the broadcast shape of alpha and beta, as in TF)."""
    dt = _float_dtype(dtype, "stateless_gamma")
    seed = _seed_tensor(seed, "stateless_gamma")
    alpha = convert_to_tensor(alpha, dtype=dt)
    shape = _shape_tuple(shape)
    params = numpy.broadcast_shapes(tuple(alpha.shape), _shape_of(beta))
    if tuple(shape[len(shape) - len(params):]) != params:
        raise InvalidArgumentError(f"stateless_gamma: shape {shape} must end with the broadcast "
                                   f"shape {params} of alpha and beta", op="stateless_gamma")
    from .array_ops import broadcast_to
    alpha = broadcast_to(alpha, params)
    sample = apply(_gamma.op, (seed, alpha), {"shape": shape[:len(shape) - len(params)]})
    return sample if beta is None else divide(sample, convert_to_tensor(beta, dtype=dt))


def stateless_poisson(shape, seed, lam, dtype="int32", name=None):
    """Poisson(lam) samples determined by ``seed``; ``shape`` must end with lam's shape."""
    dt = dtypes.as_dtype(dtype)
    seed = _seed_tensor(seed, "stateless_poisson")
    lam = lam if isinstance(lam, Tensor) else convert_to_tensor(lam, dtype_hint="float32")
    shape = _shape_tuple(shape)
    params = tuple(lam.shape)
    if tuple(shape[len(shape) - len(params):]) != params:
        raise InvalidArgumentError(f"stateless_poisson: shape {shape} must end with lam's "
                                   f"shape {params}", op="stateless_poisson")
    return apply(_poisson.op, (seed, lam), {"shape": shape[:len(shape) - len(params)],
                                            "dtype": dt.np})


# --- stateful public functions ---------------------------------------------------------------

def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """``num_samples`` class indices per row of ``logits`` [batch, classes] drawn from
    softmax(logits); int64 unless ``dtype`` says otherwise."""
    logits = _logits(logits, "categorical")
    return stateless_categorical(logits, num_samples, _fresh_seed(seed),
                                 dtype="int64" if dtype is None else dtype)


def gamma(shape, alpha, beta=None, dtype="float32", seed=None, name=None):
    """Gamma(alpha, beta) samples (beta is the rate) of shape
    ``shape + broadcast_shape(alpha, beta)``."""
    dt = _float_dtype(dtype, "gamma")
    alpha = convert_to_tensor(alpha, dtype=dt) if not isinstance(alpha, Tensor) else alpha
    params = numpy.broadcast_shapes(tuple(alpha.shape), _shape_of(beta))
    return stateless_gamma(tuple(_shape_tuple(shape)) + tuple(params), _fresh_seed(seed), alpha,
                           beta, dtype=dt)


def poisson(shape, lam, dtype="float32", seed=None, name=None):
    """Poisson(lam) samples of shape ``shape + lam.shape`` (float32 by default, as in TF)."""
    lam = lam if isinstance(lam, Tensor) else convert_to_tensor(lam, dtype_hint="float32")
    return stateless_poisson(tuple(_shape_tuple(shape)) + tuple(lam.shape), _fresh_seed(seed),
                             lam, dtype=dtype)


# --- Generator -------------------------------------------------------------------------------

class Generator(Module):
    """A random generator with its own state (``tf.random.Generator``): a Variable holding a
    counter and a key. Each draw uses the pair (key, counter) as a stateless seed and then
    increments the counter, so draws are repeatable from the seed and fresh in a traced
    function. It is a ``tf.Module``, so ``tf.train.Checkpoint`` saves and restores its state."""

    def __init__(self, copy_from=None, state=None, alg=None):
        super().__init__(name="generator")
        self._alg = _algorithm(alg)
        if copy_from is not None:
            state = B.to_numpy(copy_from.state._value).copy()
            self._alg = copy_from.algorithm
        if state is None:
            raise ValueError("Generator: give copy_from or state (or use Generator.from_seed)")
        state = numpy.asarray(B.to_numpy(state._value) if isinstance(state, Tensor) else state)
        if state.dtype.kind not in "iu" or state.size != 3:
            raise ValueError(f"Generator: state must be 3 integers [counter, 0, key], got "
                             f"{state!r:.80}")
        self._state_var = Variable(state.astype(numpy.int64).reshape(3), trainable=False,
                                   name="generator_state")

    @classmethod
    def from_seed(cls, seed, alg=None):
        """A generator whose draws are determined by the integer ``seed``."""
        key = numpy.random.SeedSequence(int(seed) % 2 ** 64).generate_state(1, numpy.uint64)[0]
        return cls(state=[0, 0, int(key) % _SEED_MAX], alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """A generator seeded from operating-system entropy."""
        return cls.from_seed(numpy.random.SeedSequence().entropy % 2 ** 63, alg=alg)

    @classmethod
    def from_state(cls, state, alg=None):
        return cls(state=state, alg=alg)

    @property
    def state(self):
        """The Variable of the state ([counter, 0, key], int64)."""
        return self._state_var

    @property
    def algorithm(self):
        """The algorithm's number (1: Philox, 2: ThreeFry, 3: auto-select), as TF's."""
        return self._alg

    def reset_from_seed(self, seed):
        """Restart from the state ``from_seed(seed)`` has."""
        self._state_var.assign(Generator.from_seed(seed).state.read_value())

    def reset(self, state):
        """Set the state Variable to ``state`` (3 integers)."""
        self._state_var.assign(numpy.asarray(state, dtype=numpy.int64).reshape(3))

    def _next_seed(self):
        v = self._state_var
        seed = stack([v[2], v[0]])
        v.assign_add(numpy.array([1, 0, 0], dtype=numpy.int64))
        return seed

    def normal(self, shape, mean=0.0, stddev=1.0, dtype="float32", name=None):
        """Samples from N(mean, stddev^2)."""
        return stateless_normal(shape, self._next_seed(), mean, stddev, dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype="float32", name=None):
        """Uniform samples in [minval, maxval) (integer dtypes need maxval)."""
        if dtypes.as_dtype(dtype).is_integer and maxval is None:
            raise ValueError("Generator.uniform: integer dtypes need maxval")
        return stateless_uniform(shape, self._next_seed(), minval, maxval, dtype)

    def uniform_full_int(self, shape, dtype="int64", name=None):
        """Integers over the whole range of ``dtype`` (int64 by default: minitf has no
        uint64, TF's default)."""
        return stateless_uniform(shape, self._next_seed(), None, None, dtype)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype="float32", name=None):
        """Normal samples redrawn beyond two standard deviations."""
        return stateless_truncated_normal(shape, self._next_seed(), mean, stddev, dtype)

    def binomial(self, shape, counts, probs, dtype="int32", name=None):
        """Binomial(counts, probs) samples of ``shape`` (counts and probs broadcast to it)."""
        from .random_stateless_more import stateless_binomial
        return stateless_binomial(shape, self._next_seed(), counts, probs, output_dtype=dtype)

    def make_seeds(self, count=1):
        """``count`` new seed pairs for stateless ops, as an int64 tensor of shape [2, count]."""
        return stateless_uniform([2, int(count)], self._next_seed(), 0, _SEED_MAX, "int64")

    def split(self, count=1):
        """``count`` new independent generators (this one advances)."""
        seeds = B.to_numpy(self.make_seeds(count)._value)
        return [Generator(state=[0, 0, (int(seeds[0, i]) ^ int(seeds[1, i])) % _SEED_MAX],
                          alg=self._alg) for i in range(int(count))]


_ALGORITHMS = {"philox": 1, "threefry": 2, "auto_select": 3}


def _algorithm(alg):
    """TF's algorithm number for ``alg`` (a name, a number or ``tf.random.Algorithm``);
    every algorithm draws from minitf's Philox stream."""
    if alg is None:
        return 1
    value = getattr(alg, "value", alg)
    if isinstance(value, str) and value.lower() in _ALGORITHMS:
        return _ALGORITHMS[value.lower()]
    if isinstance(value, (int, numpy.integer)) and int(value) in _ALGORITHMS.values():
        return int(value)
    raise ValueError(f"Generator: unsupported alg {alg!r}; expected 'philox', 'threefry', "
                     f"'auto_select' or their numbers 1, 2, 3")


_global = {"generator": None}


def get_global_generator():
    """The global ``Generator``, created from operating-system entropy on first use."""
    if _global["generator"] is None:
        _global["generator"] = Generator.from_non_deterministic_state()
    return _global["generator"]


def set_global_generator(generator):
    """Replace the global ``Generator``."""
    _global["generator"] = generator
