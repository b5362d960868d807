"""``tf.signal`` window functions and the mel filterbank matrix.

Windows and the filterbank are constants (no gradients), computed on the host in float64 and
converted to the requested dtype.
"""
import numpy

from . import backend as B
from . import dtypes
from .tensor import Tensor


def _int(value, what, minimum=0):
    if isinstance(value, Tensor):
        value = B.to_numpy(value._value)
    try:
        number = int(numpy.asarray(value).reshape(()))
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be an integer scalar, got {value!r:.60}") from None
    if number < minimum:
        raise ValueError(f"{what} must be at least {minimum}, got {number}")
    return number


def _float_dtype(dtype, what):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{what}: dtype must be a floating point type, got {dtype.name}")
    return dtype


def _constant(array, dtype):
    return Tensor(B.xp.asarray(numpy.asarray(array, dtype=numpy.float64).astype(dtype.np)))


def _raised_cosine(window_length, periodic, dtype, a, b, what):
    length = _int(window_length, f"{what}: window_length")
    dtype = _float_dtype(dtype, what)
    if length == 1:
        return _constant(numpy.ones(1), dtype)
    even = 1 - length % 2
    n = length + int(bool(periodic)) * even - 1
    window = a - b * numpy.cos(2.0 * numpy.pi * numpy.arange(length) / n)
    return _constant(window, dtype)


def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """The Hann window ``0.5 - 0.5 cos(2 pi n / N)``; ``periodic`` uses ``N = length``
    (for spectral analysis), else ``N = length - 1`` (symmetric)."""
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5, "hann_window")


def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """The Hamming window ``0.54 - 0.46 cos(2 pi n / N)`` (``N`` as for ``hann_window``)."""
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46, "hamming_window")


def _kaiser(length, beta):
    if length == 1:
        return numpy.ones(1)
    half = (length - 1) / 2.0
    arg = numpy.arange(length) - half
    num = beta * numpy.sqrt(numpy.maximum(0.0, 1.0 - numpy.square(arg / half)))
    return numpy.i0(num) / numpy.i0(beta)


def kaiser_window(window_length, beta=12.0, dtype=dtypes.float32, name=None):
    """The Kaiser window ``I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta)``."""
    length = _int(window_length, "kaiser_window: window_length")
    dtype = _float_dtype(dtype, "kaiser_window")
    return _constant(_kaiser(length, float(beta)), dtype)


def kaiser_bessel_derived_window(window_length, beta=12.0, dtype=dtypes.float32, name=None):
    """The Kaiser-Bessel derived window (used by the MDCT): the square roots of the normalised
    cumulative sums of a Kaiser window of length ``window_length // 2 + 1``, mirrored."""
    length = _int(window_length, "kaiser_bessel_derived_window: window_length")
    dtype = _float_dtype(dtype, "kaiser_bessel_derived_window")
    csum = numpy.cumsum(_kaiser(length // 2 + 1, float(beta)))
    half = numpy.sqrt(csum[:-1] / csum[-1])
    return _constant(numpy.concatenate([half, half[::-1]]), dtype)


def vorbis_window(window_length, dtype=dtypes.float32, name=None):
    """The Vorbis power-complementary window ``sin(pi/2 sin^2(pi (n + 1/2) / N))``."""
    length = _int(window_length, "vorbis_window: window_length")
    dtype = _float_dtype(dtype, "vorbis_window")
    arg = numpy.arange(length) + 0.5
    return _constant(numpy.sin(numpy.pi / 2 * numpy.square(numpy.sin(numpy.pi / length * arg))),
                     dtype)


def _hertz_to_mel(frequencies):
    return 1127.0 * numpy.log1p(numpy.asarray(frequencies, dtype=numpy.float64) / 700.0)


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype=dtypes.float32, name=None):
    """The ``(num_spectrogram_bins, num_mel_bins)`` matrix of triangular mel filters that maps
    a linear-frequency magnitude spectrogram to a mel spectrogram (HTK's mel scale); the
    zero-frequency bin gets no weight."""
    what = "linear_to_mel_weight_matrix"
    mels = _int(num_mel_bins, f"{what}: num_mel_bins", 1)
    bins = _int(num_spectrogram_bins, f"{what}: num_spectrogram_bins", 1)
    dtype = _float_dtype(dtype, what)
    rate = float(B.to_numpy(sample_rate._value) if isinstance(sample_rate, Tensor)
                 else sample_rate)
    lower, upper = float(lower_edge_hertz), float(upper_edge_hertz)
    if rate <= 0.0:
        raise ValueError(f"{what}: sample_rate must be positive, got {rate}")
    if lower < 0.0:
        raise ValueError(f"{what}: lower_edge_hertz must be non-negative, got {lower}")
    if lower >= upper:
        raise ValueError(f"{what}: lower_edge_hertz {lower} must be smaller than "
                         f"upper_edge_hertz {upper}")
    if upper > rate / 2:
        raise ValueError(f"{what}: upper_edge_hertz {upper} must not exceed the Nyquist "
                         f"frequency sample_rate / 2 = {rate / 2}")
    linear = numpy.linspace(0.0, rate / 2.0, bins)[1:]
    spectrogram_mel = _hertz_to_mel(linear)[:, None]
    edges = numpy.linspace(_hertz_to_mel(lower), _hertz_to_mel(upper), mels + 2)
    low, center, high = edges[:-2], edges[1:-1], edges[2:]
    lower_slopes = (spectrogram_mel - low) / (center - low)
    upper_slopes = (high - spectrogram_mel) / (high - center)
    weights = numpy.maximum(0.0, numpy.minimum(lower_slopes, upper_slopes))
    return _constant(numpy.pad(weights, ((1, 0), (0, 0))), dtype)
