"""tf.io.decode_raw, encode_base64 / decode_base64 and decode_compressed (minitf.io_codecs).
Expected values were produced by TensorFlow 2.21 (run separately) and pasted here, or follow
from RFC 4648 (base64url)."""
import gzip
import zlib

import numpy as np
import pytest

import minitf as tf
from minitf import errors


def test_decode_raw_tf_values():
    out = tf.io.decode_raw(tf.constant([b"\x01\x00\x02\x00", b"\xff\xff\x00\x80"]), tf.int16)
    assert out.dtype == tf.int16 and out.numpy().tolist() == [[1, 2], [-1, -32768]]
    assert tf.io.decode_raw(b"\x01\x00\x02\x00", tf.int16,
                            little_endian=False).numpy().tolist() == [256, 512]
    assert tf.io.decode_raw(b"\x00\x00\x80\x3f", tf.float32).numpy().tolist() == [1.0]
    padded = tf.io.decode_raw(tf.constant([b"\x01\x00\x02\x00\x03", b"\x05"]), tf.int16,
                              fixed_length=4)
    assert padded.numpy().tolist() == [[1, 2], [5, 0]]
    assert tf.io.decode_raw([[b"\x01\x00"], [b"\x05\x06"]], tf.uint8).shape == (2, 1, 2)
    assert tf.io.decode_raw(b"", tf.float32).shape == (0,)


def test_decode_raw_float64_and_int64():
    values = np.array([1.5, -2.25], np.float64)
    assert tf.io.decode_raw(values.tobytes(), tf.float64).numpy().tolist() == [1.5, -2.25]
    big_endian = np.array([7, -3], ">i8").tobytes()
    assert tf.io.decode_raw(big_endian, tf.int64, little_endian=False).numpy().tolist() == \
        [7, -3]


def test_decode_raw_errors():
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"decode_raw: input has length 3 that is not a multiple of 4, "
                             r"the size of float32"):
        tf.io.decode_raw(b"abc", tf.float32)
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"must all be the same size, but element 1 has size 2 != 4"):
        tf.io.decode_raw([b"ab", b"abcd"][::-1], tf.int16)
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"fixed_length \(3\) must be a non-negative multiple of the size "
                             r"of int16 \(2\)"):
        tf.io.decode_raw(b"ab", tf.int16, fixed_length=3)
    with pytest.raises(TypeError, match=r"decode_raw: out_type must be one of .*, got string"):
        tf.io.decode_raw(b"ab", tf.string)


def test_base64_tf_values():
    data = [b"", b"f", b"\xfb\xff\xfe", b"hello world"]
    assert tf.io.encode_base64(data).numpy().tolist() == [b"", b"Zg", b"-__-",
                                                          b"aGVsbG8gd29ybGQ"]
    assert tf.io.encode_base64(data, pad=True).numpy().tolist() == [b"", b"Zg==", b"-__-",
                                                                    b"aGVsbG8gd29ybGQ="]
    assert tf.io.decode_base64(["-__-", "Zg", "Zg==", ""]).numpy().tolist() == \
        [b"\xfb\xff\xfe", b"f", b"f", b""]
    nested = tf.constant([[b"ab"], [b"cde"]])
    assert tf.io.decode_base64(tf.io.encode_base64(nested)).numpy().tolist() == \
        [[b"ab"], [b"cde"]]


def test_base64_errors():
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"decode_base64: base64 string length cannot be 1 modulo 4"):
        tf.io.decode_base64(b"Z")
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"decode_base64: invalid character found in base64 b'a\+b/'"):
        tf.io.decode_base64(b"a+b/")
    with pytest.raises(errors.InvalidArgumentError, match=r"invalid character .*b'YQ='"):
        tf.io.decode_base64(b"YQ=")
    with pytest.raises(TypeError, match=r"encode_base64: expected a string tensor"):
        tf.io.encode_base64(3.5)


def test_decode_compressed():
    blobs = tf.constant([zlib.compress(b"xyz"), zlib.compress(b"")])
    assert tf.io.decode_compressed(blobs, "ZLIB").numpy().tolist() == [b"xyz", b""]
    assert tf.io.decode_compressed(gzip.compress(b"xyz"), "GZIP").numpy() == b"xyz"
    assert tf.io.decode_compressed(b"raw").numpy() == b"raw"
    with pytest.raises(errors.DataLossError, match=r"decode_compressed: cannot decompress "
                                                   r"b'raw' as ZLIB"):
        tf.io.decode_compressed(b"raw", "ZLIB")
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"unsupported compression_type 'zlib'; expected '' \(none\), "
                             r"'ZLIB' or 'GZIP'"):
        tf.io.decode_compressed(b"raw", "zlib")
