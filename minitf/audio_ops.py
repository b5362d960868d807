"""``tf.audio.decode_wav`` and ``tf.audio.encode_wav``: 16-bit PCM WAV files, as TF reads and
writes them.

    audio, rate = tf.audio.decode_wav(tf.io.read_file("speech.wav"), desired_channels=1)
    tf.io.write_file("out.wav", tf.audio.encode_wav(audio, rate))

Samples are float32 in [-1, 1): a 16-bit sample ``s`` is ``s / 32768``, and a float ``x`` is
written as ``round(x * 32768)`` clipped to [-32768, 32767].
"""
import struct

import numpy

from . import backend as B, errors
from .namespace_imports import namespace
from .ops.convert import convert_to_tensor
from .string_tensors import OBJECT, scalar_bytes, string_tensor
from .tensor import Tensor

__all__ = ["decode_wav", "encode_wav"]

_PCM, _EXTENSIBLE = 1, 0xFFFE


def _bad(message):
    return errors.InvalidArgumentError(None, None, f"decode_wav: {message}")


def _read(data, pos, size, what):
    if pos + size > len(data):
        raise _bad(f"data too short when reading the {what} at byte {pos}: needs {size} "
                   f"bytes, {max(len(data) - pos, 0)} left")
    return data[pos:pos + size], pos + size


def _parse_wav(data):
    """``(int16 samples [frames, channels], sample_rate)`` of a WAV file's bytes."""
    riff, pos = _read(data, 0, 4, "RIFF header")
    if riff != b"RIFF":
        raise _bad(f"header mismatch: expected b'RIFF' but found {riff!r}")
    _, pos = _read(data, pos, 4, "RIFF size")
    wave, pos = _read(data, pos, 4, "WAVE tag")
    if wave != b"WAVE":
        raise _bad(f"header mismatch: expected b'WAVE' but found {wave!r}")
    fmt = None
    while True:
        chunk_id, pos = _read(data, pos, 4, "chunk id")
        size_bytes, pos = _read(data, pos, 4, "chunk size")
        size = struct.unpack("<I", size_bytes)[0]
        if chunk_id == b"fmt ":
            body, _ = _read(data, pos, size, "fmt chunk")
            if size < 16:
                raise _bad(f"the fmt chunk has {size} bytes, at least 16 expected")
            tag, channels, rate, _, _, bits = struct.unpack("<HHIIHH", body[:16])
            if tag not in (_PCM, _EXTENSIBLE):
                raise _bad(f"bad audio format {tag}: only PCM (1) is supported")
            if channels < 1:
                raise _bad(f"the file has {channels} channels, at least 1 expected")
            if bits != 16:
                raise _bad(f"can only read 16-bit WAV files, but the file has {bits} bits "
                           f"per sample")
            fmt = (channels, rate)
        elif chunk_id == b"data":
            if fmt is None:
                raise _bad("the data chunk comes before the fmt chunk")
            body, _ = _read(data, pos, size, "data chunk")
            channels, rate = fmt
            frames = len(body) // (2 * channels)
            samples = numpy.frombuffer(body[:frames * 2 * channels], "<i2")
            return samples.reshape(frames, channels), rate
        pos += size + (size & 1)      # chunks are padded to an even size


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """``(audio, sample_rate)`` of a 16-bit PCM WAV file (a scalar string): ``audio``
    float32 ``[samples, channels]`` in [-1, 1), ``sample_rate`` an int32 scalar.

    ``desired_channels``: keep the first channels, or repeat the last one, to get this many
    (-1: the file's). ``desired_samples``: crop or pad with zeros to this many (-1: all)."""
    samples, rate = _parse_wav(scalar_bytes(contents, "decode_wav: contents"))
    audio = samples.astype(numpy.float32) / numpy.float32(32768)
    channels, count = int(desired_channels), int(desired_samples)
    if channels == 0 or channels < -1:
        raise errors.InvalidArgumentError(
            None, None, f"decode_wav: desired_channels must be -1 or positive, got {channels}")
    if channels > 0:
        have = audio.shape[1]
        audio = audio[:, [min(c, have - 1) for c in range(channels)]]
    if count >= 0:
        frames = audio.shape[0]
        if count <= frames:
            audio = audio[:count]
        else:
            audio = numpy.concatenate(
                [audio, numpy.zeros((count - frames, audio.shape[1]), numpy.float32)])
    elif count < -1:
        raise errors.InvalidArgumentError(
            None, None, f"decode_wav: desired_samples must be -1 or >= 0, got {count}")
    return (Tensor(B.from_numpy(numpy.array(audio, numpy.float32, order="C"))),
            Tensor(B.from_numpy(numpy.array(rate, numpy.int32))))


def encode_wav(audio, sample_rate, name=None):
    """A 16-bit PCM WAV file (a scalar string) of ``audio`` (float32 ``[samples,
    channels]``) at ``sample_rate`` (an int32 scalar)."""
    audio = convert_to_tensor(audio)
    if not audio.dtype.is_floating:
        raise TypeError(f"encode_wav: audio must be float32, got {audio.dtype.name}")
    values = numpy.asarray(B.to_numpy(audio._value), numpy.float32)
    if values.ndim != 2:
        raise errors.InvalidArgumentError(
            None, None, f"encode_wav: audio must be 2-D [samples, channels], got shape "
                        f"{list(values.shape)}")
    rate = sample_rate
    if isinstance(rate, Tensor):
        rate = B.to_numpy(rate._value)
    rate = numpy.asarray(rate)
    if rate.ndim != 0 or rate.dtype.kind not in "iu" or not 0 < int(rate) < 2 ** 31:
        raise errors.InvalidArgumentError(
            None, None, f"encode_wav: sample_rate must be a positive integer scalar, got "
                        f"{sample_rate!r}")
    rate = int(rate)
    frames, channels = values.shape
    if channels < 1:
        raise errors.InvalidArgumentError(
            None, None, f"encode_wav: audio needs at least 1 channel, got shape "
                        f"{list(values.shape)}")
    scaled = numpy.nan_to_num(values, nan=0.0) * numpy.float32(32768)
    # halves round away from zero, as C's roundf in TF
    scaled = numpy.sign(scaled) * numpy.floor(numpy.abs(scaled) + numpy.float32(0.5))
    scaled = numpy.clip(scaled, -32768, 32767)
    data = scaled.astype("<i2").tobytes()
    header = (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt " +
              struct.pack("<IHHIIHH", 16, _PCM, channels, rate, rate * channels * 2,
                          channels * 2, 16) + b"data" + struct.pack("<I", len(data)))
    out = numpy.empty((), OBJECT)
    out[()] = header + data
    return string_tensor(out)


def install(tf):
    """Set ``tf.audio.decode_wav`` and ``tf.audio.encode_wav``, creating ``tf.audio`` if
    needed (idempotent)."""
    audio = namespace(tf, "audio")
    audio.decode_wav = decode_wav
    audio.encode_wav = encode_wav
