"""tf.audio.decode_wav / encode_wav (minitf.audio_ops). Expected bytes and values were
produced by TensorFlow 2.21 (run separately) and are pasted here; headers are also checked
field by field against the canonical 44-byte PCM WAV layout."""
import struct

import numpy as np
import pytest

import minitf as tf
from minitf import errors


STEREO = np.array([[0.0, 0.5], [-0.5, 1.0], [-1.0, 0.999], [0.25, -0.25001], [1.5, -1.5]],
                  np.float32)
# TF: tf.audio.encode_wav(STEREO, 16000)
TF_STEREO_WAV = bytes.fromhex(
    "524946463800000057415645666d74201000000001000200803e000000fa0000040010006461746114000000"
    "0000004000c0ff7f0080df7f002000e0ff7f0080")
# TF: tf.audio.decode_wav(TF_STEREO_WAV)
TF_STEREO_DECODED = [[0.0, 0.5], [-0.5, 0.999969482421875], [-1.0, 0.998992919921875],
                     [0.25, -0.25], [0.999969482421875, -1.0]]
# TF: tf.audio.encode_wav([[0.1], [0.2], [-0.3]], 8000)
TF_MONO_WAV = bytes.fromhex(
    "524946462a00000057415645666d74201000000001000100401f0000803e0000020010006461746106000000"
    "cd0c9a199ad9")


def test_encode_equals_tfs_bytes():
    wav = tf.audio.encode_wav(tf.constant(STEREO), tf.constant(16000))
    assert wav.dtype == tf.string and wav.shape == ()
    assert wav.numpy() == TF_STEREO_WAV
    assert tf.audio.encode_wav([[0.1], [0.2], [-0.3]], 8000).numpy() == TF_MONO_WAV


def test_header_fields():
    wav = tf.audio.encode_wav(np.zeros((3, 2), np.float32), 22050).numpy()
    riff, size, wave, fmt, fmt_size, tag, channels, rate, byte_rate, align, bits, data, \
        data_size = struct.unpack("<4sI4s4sIHHIIHH4sI", wav[:44])
    assert (riff, wave, fmt, data) == (b"RIFF", b"WAVE", b"fmt ", b"data")
    assert (size, fmt_size, tag, channels, rate) == (36 + 12, 16, 1, 2, 22050)
    assert (byte_rate, align, bits, data_size) == (22050 * 4, 4, 16, 12)


def test_rounding_halves_away_from_zero():
    # TF: samples 1/65536, 3/65536, -1/65536, -3/65536 and NaN -> 1, 2, -1, -2, 0
    audio = np.array([[1 / 65536], [3 / 65536], [-1 / 65536], [-3 / 65536], [np.nan]],
                     np.float32)
    assert tf.audio.encode_wav(audio, 8000).numpy()[44:].hex() == "01000200fffffeff0000"


def test_decode_tf_values():
    audio, rate = tf.audio.decode_wav(TF_STEREO_WAV)
    assert audio.dtype == tf.float32 and rate.dtype == tf.int32
    assert audio.numpy().tolist() == TF_STEREO_DECODED and int(rate) == 16000


def test_desired_channels_and_samples():
    audio, _ = tf.audio.decode_wav(tf.constant(TF_STEREO_WAV), desired_channels=3,
                                   desired_samples=7)
    expected = [row + [row[-1]] for row in TF_STEREO_DECODED] + [[0.0] * 3] * 2     # TF
    assert audio.numpy().tolist() == expected
    audio, _ = tf.audio.decode_wav(TF_STEREO_WAV, desired_channels=1, desired_samples=2)
    assert audio.numpy().tolist() == [[0.0], [-0.5]]
    audio, rate = tf.audio.decode_wav(TF_MONO_WAV, desired_channels=2)
    assert audio.numpy().tolist() == [[0.100006103515625] * 2, [0.20001220703125] * 2,
                                      [-0.29998779296875] * 2]
    assert int(rate) == 8000


def test_round_trip_and_extra_chunks():
    rng = np.random.default_rng(1)
    samples = rng.integers(-32768, 32768, (50, 3)).astype(np.float32) / 32768
    wav = tf.audio.encode_wav(samples, 44100).numpy()
    # a LIST chunk of odd size (padded to even) before the data chunk is skipped
    extra = b"LIST" + struct.pack("<I", 3) + b"abc\0"
    patched = wav[:36] + extra + wav[36:]
    for data in (wav, patched):
        audio, rate = tf.audio.decode_wav(data)
        np.testing.assert_array_equal(audio.numpy(), samples)
        assert int(rate) == 44100


def test_decode_errors():
    with pytest.raises(errors.InvalidArgumentError, match=r"decode_wav: data too short"):
        tf.audio.decode_wav(b"RIFF")
    with pytest.raises(errors.InvalidArgumentError, match=r"decode_wav: data too short"):
        tf.audio.decode_wav(TF_MONO_WAV[:40])
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"header mismatch: expected b'RIFF' but found b'XXXX'"):
        tf.audio.decode_wav(b"XXXX" + TF_MONO_WAV[4:])
    eight_bit = TF_MONO_WAV[:34] + struct.pack("<H", 8) + TF_MONO_WAV[36:]
    with pytest.raises(errors.InvalidArgumentError, match=r"can only read 16-bit WAV files, "
                                                          r"but the file has 8 bits"):
        tf.audio.decode_wav(eight_bit)
    with pytest.raises(errors.InvalidArgumentError, match=r"contents must be a scalar"):
        tf.audio.decode_wav([TF_MONO_WAV])


def test_encode_errors():
    with pytest.raises(errors.InvalidArgumentError, match=r"encode_wav: audio must be 2-D "
                                                          r"\[samples, channels\], got shape "
                                                          r"\[3\]"):
        tf.audio.encode_wav(np.zeros(3, np.float32), 8000)
    with pytest.raises(errors.InvalidArgumentError, match=r"sample_rate must be a positive "
                                                          r"integer scalar, got 0"):
        tf.audio.encode_wav(np.zeros((3, 1), np.float32), 0)
    with pytest.raises(TypeError, match=r"encode_wav: audio must be float32, got int32"):
        tf.audio.encode_wav(np.zeros((3, 1), np.int32), 8000)
