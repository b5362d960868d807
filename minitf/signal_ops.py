"""``tf.signal``: framing, short-time Fourier transforms, DCTs and MFCCs.

Everything is composed from differentiable minitf ops, so gradients flow from a spectrogram
back to the waveform. The DFTs are in ``minitf.ops.complex_ops``; windows and the mel
filterbank in ``minitf.signal_windows``.
"""
import math

import numpy

from . import backend as B
from .namespace_imports import namespace
from .ops import complex_ops as C
from .ops.complex_ops import _tensor
from .ops.array_ops import concat, gather, pad, reshape
from .ops.math_ops import cast
from .signal_windows import (_int, hamming_window, hann_window, kaiser_bessel_derived_window,
                             kaiser_window, linear_to_mel_weight_matrix, vorbis_window)
from .tensor import Tensor



def _axis(axis, rank, what):
    axis = _int(axis, f"{what}: axis", -rank)
    if axis >= rank:
        raise ValueError(f"{what}: axis {axis} is out of range for a signal of rank {rank}")
    return axis % rank


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Split ``axis`` of ``signal`` into frames of ``frame_length`` samples, ``frame_step``
    apart: that axis becomes ``(frames, frame_length)``. ``pad_end`` pads the end with
    ``pad_value`` so that every sample is in a frame."""
    signal = _tensor(signal, "frame")
    length = _int(frame_length, "frame: frame_length", 1)
    step = _int(frame_step, "frame: frame_step", 1)
    rank = len(signal.shape)
    if rank == 0:
        raise ValueError("frame: signal must have rank at least 1, got a scalar")
    axis = _axis(axis, rank, "frame")
    n = int(signal.shape[axis])
    if pad_end:
        count = -(-n // step)
        needed = max(0, (count - 1) * step + length - n)
        if needed:
            widths = [[0, 0] for _ in range(rank)]
            widths[axis][1] = needed
            signal = pad(signal, widths, constant_values=pad_value)
    else:
        count = max(0, 1 + (n - length) // step) if n >= length else 0
    index = (numpy.arange(count)[:, None] * step + numpy.arange(length)[None, :])
    return gather(signal, B.xp.asarray(index.astype(numpy.int64)), axis=axis)


def overlap_and_add(signal, frame_step, name=None):
    """Sum frames ``(..., frames, frame_length)`` placed ``frame_step`` apart: the result has
    ``(frames - 1) * frame_step + frame_length`` samples."""
    signal = _tensor(signal, "overlap_and_add")
    step = _int(frame_step, "overlap_and_add: frame_step", 1)
    if len(signal.shape) < 2:
        raise ValueError(f"overlap_and_add: signal must have rank at least 2, got shape "
                         f"{tuple(signal.shape)}")
    lead = tuple(int(d) for d in signal.shape[:-2])
    frames, length = int(signal.shape[-2]), int(signal.shape[-1])
    out_length = max(0, (frames - 1) * step + length) if frames else 0
    if frames == 0:
        return reshape(signal, lead + (0,))
    chunks = -(-length // step)   # pieces of ``step`` samples per frame
    edge = [[0, 0]] * len(lead)
    padded = pad(signal, edge + [[0, 0], [0, chunks * step - length]])
    total = None
    for j in range(chunks):
        piece = reshape(padded[..., j * step:(j + 1) * step], lead + (frames * step,))
        placed = pad(piece, edge + [[j * step, (chunks - 1 - j) * step]])
        total = placed if total is None else total + placed
    return total[..., :out_length]


def _default_fft_length(frame_length):
    return 1 << max(0, (frame_length - 1).bit_length())


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """The short-time Fourier transform of real ``signals`` (..., samples): complex
    ``(..., frames, fft_length // 2 + 1)``. ``fft_length`` defaults to the smallest power of 2
    holding a frame; ``window_fn(frame_length, dtype=...)`` weights each frame (None: no
    window)."""
    signals = _tensor(signals, "stft")
    if signals.dtype.name not in ("float32", "float64"):
        raise TypeError(f"stft: signals must be float32 or float64, got {signals.dtype.name}")
    length = _int(frame_length, "stft: frame_length", 1)
    fft_length = _default_fft_length(length) if fft_length is None else _int(
        fft_length, "stft: fft_length", 1)
    frames = frame(signals, length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        frames = frames * window_fn(length, dtype=signals.dtype)
    return C.rfft(frames, [fft_length])


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window,
                 name=None):
    """The real signal whose ``stft`` is ``stfts`` (``window_fn`` should be
    ``inverse_stft_window_fn(frame_step)`` for a perfect reconstruction)."""
    stfts = _tensor(stfts, "inverse_stft")
    length = _int(frame_length, "inverse_stft: frame_length", 1)
    fft_length = _default_fft_length(length) if fft_length is None else _int(
        fft_length, "inverse_stft: fft_length", 1)
    frames = C.irfft(stfts, [fft_length])
    if fft_length >= length:
        frames = frames[..., :length]
    else:
        frames = pad(frames, [[0, 0]] * (len(frames.shape) - 1) + [[0, length - fft_length]])
    if window_fn is not None:
        frames = frames * window_fn(length, dtype=frames.dtype)
    return overlap_and_add(frames, frame_step)


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """The window function for ``inverse_stft`` that inverts ``stft`` with
    ``forward_window_fn``: the forward window divided by the overlapping sum of its
    squares."""
    step = _int(frame_step, "inverse_stft_window_fn: frame_step", 1)

    def inverse_window(frame_length, dtype):
        window = forward_window_fn(frame_length, dtype=dtype)
        squares = numpy.square(B.to_numpy(window._value).astype(numpy.float64))
        overlaps = -(-frame_length // step)
        squares = numpy.pad(squares, (0, overlaps * step - frame_length))
        denominator = numpy.tile(squares.reshape(overlaps, step).sum(0), overlaps)
        result = B.to_numpy(window._value) / denominator[:frame_length]
        return Tensor(B.xp.asarray(result.astype(window._value.dtype)))

    return inverse_window


# --- DCT -------------------------------------------------------------------------------------

def _fit_last(x, n):
    size = int(x.shape[-1])
    if n < size:
        return x[..., :n]
    if n > size:
        return pad(x, [[0, 0]] * (len(x.shape) - 1) + [[0, n - size]])
    return x


def _scale_vector(first, rest, size, dtype):
    weights = numpy.full(size, rest)
    weights[0] = first
    return Tensor(B.xp.asarray(weights.astype(dtype.np)))


def _phase(size, sign, dtype):
    """``2 exp(sign i pi k / (2 size))`` for k < size, as a complex constant."""
    k = numpy.arange(size)
    values = 2.0 * numpy.exp(sign * 1j * numpy.pi * k / (2.0 * size))
    complex_np = numpy.complex64 if dtype.name == "float32" else numpy.complex128
    return Tensor(B.xp.asarray(values.astype(complex_np)))


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF's names
    """The discrete cosine transform of types 1-4 over the last axis (scipy's conventions);
    ``norm="ortho"`` (types 2-4) makes it orthonormal; ``n`` crops or zero-pads the input."""
    x = _tensor(input, "dct")
    if x.dtype.name not in ("float32", "float64"):
        raise TypeError(f"dct: input must be float32 or float64, got {x.dtype.name}")
    if type not in (1, 2, 3, 4):
        raise ValueError(f"dct: type must be 1, 2, 3 or 4, got {type!r}")
    if axis != -1 and not (len(x.shape) and axis == len(x.shape) - 1):
        raise NotImplementedError(f"dct: only axis=-1 is supported, got axis={axis!r}")
    if norm not in (None, "ortho"):
        raise ValueError(f"dct: norm must be None or 'ortho', got {norm!r}")
    if type == 1 and norm == "ortho":
        raise ValueError("dct: norm='ortho' is not supported for type 1")
    if len(x.shape) == 0:
        raise ValueError("dct: input must have rank at least 1, got a scalar")
    if n is not None:
        x = _fit_last(x, _int(n, "dct: n", 1))
    size = int(x.shape[-1])
    if type == 1:
        if size < 2:
            raise ValueError(f"dct: type 1 needs at least 2 samples on the last axis, got "
                             f"{size}")
        return C.real(C.rfft(concat([x, x[..., -2:0:-1]], -1)))
    if type == 2:
        spectrum = C.rfft(x, [2 * size])[..., :size]
        result = C.real(spectrum * _phase(size, -1.0, x.dtype))
        if norm == "ortho":
            first = 0.5 / math.sqrt(size)
            result = result * _scale_vector(first, first * math.sqrt(2.0), size, x.dtype)
        return result
    if type == 3:
        if norm == "ortho":
            x = x * _scale_vector(math.sqrt(size), math.sqrt(size) * math.sqrt(0.5), size,
                                  x.dtype)
        else:
            x = x * float(size)
        spectrum = cast(x, C._complex_dtype_of(x, "dct")) * _phase(size, 1.0, x.dtype)
        return C.irfft(spectrum, [2 * size])[..., :size]
    result = dct(_fit_last(x, 2 * size), type=2)[..., 1::2]
    if norm == "ortho":
        result = result * (math.sqrt(0.5) / math.sqrt(size))
    return result


_INVERSE_TYPE = {1: 1, 2: 3, 3: 2, 4: 4}


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """The inverse DCT: the DCT of the inverse type (unnormalised unless ``norm="ortho"``, as
    TF: ``idct(dct(x)) == 2 * N * x`` for types 2 and 3 without a norm)."""
    if type not in _INVERSE_TYPE:
        raise ValueError(f"idct: type must be 1, 2, 3 or 4, got {type!r}")
    return dct(input, type=_INVERSE_TYPE[type], n=n, axis=axis, norm=norm)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """Mel-frequency cepstral coefficients: the orthonormal-scaled DCT-II of log mel
    spectrograms ``(..., num_mel_bins)``."""
    x = _tensor(log_mel_spectrograms, "mfccs_from_log_mel_spectrograms")
    if len(x.shape) == 0 or int(x.shape[-1]) < 1:
        raise ValueError(f"mfccs_from_log_mel_spectrograms: expected a last axis of mel bins, "
                         f"got shape {tuple(x.shape)}")
    bins = int(x.shape[-1])
    return dct(x, type=2) * (1.0 / math.sqrt(2.0 * bins))


# --- MDCT ------------------------------------------------------------------------------------

def mdct(signals, frame_length, window_fn=vorbis_window, pad_end=False, norm=None, name=None):
    """The modified discrete cosine transform of real ``signals`` (..., samples): frames of
    ``frame_length`` (a multiple of 4) samples, half a frame apart, each giving
    ``frame_length // 2`` bins (a DCT-IV of the folded, windowed frame)."""
    signals = _tensor(signals, "mdct")
    length = _int(frame_length, "mdct: frame_length", 4)
    if length % 4:
        raise ValueError(f"mdct: frame_length must be a multiple of 4, got {length}")
    frames = frame(signals, length, length // 2, pad_end=pad_end)
    if window_fn is not None:
        frames = frames * window_fn(length, dtype=signals.dtype)
    else:
        frames = frames * (1.0 / math.sqrt(2.0))
    q = length // 4
    a, b, c, d = (frames[..., k * q:(k + 1) * q] for k in range(4))
    folded = concat([-c[..., ::-1] - d, a - b[..., ::-1]], -1)
    return dct(folded, type=4, norm=norm)


def inverse_mdct(mdcts, window_fn=vorbis_window, norm=None, name=None):
    """The signal whose ``mdct`` (with the same ``window_fn`` and ``norm``) is ``mdcts``
    ``(..., frames, frame_length // 2)``, by overlap-adding the unfolded frames."""
    mdcts = _tensor(mdcts, "inverse_mdct")
    if len(mdcts.shape) < 2:
        raise ValueError(f"inverse_mdct: mdcts must have rank at least 2, got shape "
                         f"{tuple(mdcts.shape)}")
    if norm not in (None, "ortho"):
        raise ValueError(f"inverse_mdct: norm must be None or 'ortho', got {norm!r}")
    half = int(mdcts.shape[-1])
    if norm is None:
        unfolded = dct(mdcts, type=4) * (0.5 / half)
    else:
        unfolded = dct(mdcts, type=4, norm="ortho")
    first, second = unfolded[..., :half // 2], unfolded[..., half // 2:]
    frames = concat([second, -second[..., ::-1], -first[..., ::-1], -first], -1)
    if window_fn is not None:
        frames = frames * window_fn(2 * half, dtype=mdcts.dtype)
    else:
        frames = frames * (1.0 / math.sqrt(2.0))
    return overlap_and_add(frames, half)


_PUBLIC = dict(
    fft=C.fft, ifft=C.ifft, fft2d=C.fft2d, ifft2d=C.ifft2d, fft3d=C.fft3d, ifft3d=C.ifft3d,
    rfft=C.rfft, irfft=C.irfft, rfft2d=C.rfft2d, irfft2d=C.irfft2d, rfft3d=C.rfft3d,
    irfft3d=C.irfft3d, fftshift=C.fftshift, ifftshift=C.ifftshift, frame=frame,
    overlap_and_add=overlap_and_add, stft=stft, inverse_stft=inverse_stft,
    inverse_stft_window_fn=inverse_stft_window_fn, hann_window=hann_window,
    hamming_window=hamming_window, kaiser_window=kaiser_window,
    kaiser_bessel_derived_window=kaiser_bessel_derived_window, vorbis_window=vorbis_window,
    linear_to_mel_weight_matrix=linear_to_mel_weight_matrix,
    mfccs_from_log_mel_spectrograms=mfccs_from_log_mel_spectrograms, dct=dct, idct=idct,
    mdct=mdct, inverse_mdct=inverse_mdct, fftnd=C.fftnd, ifftnd=C.ifftnd, rfftnd=C.rfftnd,
    irfftnd=C.irfftnd)


def install(tf):
    """Set ``tf.signal`` (and the complex dtypes and functions) on ``tf`` (idempotent)."""
    C.install(tf)
    signal = namespace(tf, "signal")
    for key, value in _PUBLIC.items():
        setattr(signal, key, value)
