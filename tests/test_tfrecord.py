"""tf.io.TFRecordWriter / TFRecordOptions, tf.data.TFRecordDataset and
tf.data.FixedLengthRecordDataset (minitf.tfrecord, minitf.data.tfrecord_dataset).

Expected bytes were produced by TensorFlow 2.21 (tf.io.TFRecordWriter, run separately) and are
pasted here as hex; CRC-32C check values are the standard ones (the "123456789" check value of
the CRC catalogue, and the test vectors of RFC 3720, appendix B.4)."""
import gzip
import os
import zlib

import numpy as np
import pytest

import minitf as tf
from minitf import errors, tfrecord


# TF: writer.write(b"hello"); writer.write(b""); writer.write(Example(x: float_list [0.25, 4.0]))
TF_PLAIN = bytes.fromhex(
    "0500000000000000eab2043e68656c6c6fbb1f1c19000000000000000029039807d8ea82a21500000000000000"
    "d6ab6b2b0a130a110a0178120c120a0a080000803e00008040ea58d395")
TF_EXAMPLE = bytes.fromhex("0a130a110a0178120c120a0a080000803e00008040")
# TF: options="GZIP" / TFRecordOptions(compression_type="ZLIB"); records b"abc", b"defg"
TF_GZIP = bytes.fromhex(
    "1f8b0800000000000003636680800d333df9129392f3c23f2ab240859c5c83585252d3d2d5d9a5170200d7ce"
    "76ac27000000")
TF_ZLIB = bytes.fromhex(
    "789c636680800d333df9129392f3c23f2ab240859c5c83585252d3d2d5d9a51702008e960802")


def write(path, data):
    path.write_bytes(data)
    return str(path)


def records(ds):
    return list(ds.as_numpy_iterator())


# --- CRC-32C and framing ----------------------------------------------------------------------

def test_crc32c_standard_check_values():
    assert tfrecord.crc32c(b"123456789") == 0xE3069283
    assert tfrecord.crc32c(bytes(32)) == 0x8A9136AA              # RFC 3720 B.4
    assert tfrecord.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert tfrecord.crc32c(bytes(range(32))) == 0x46DD794E
    assert tfrecord.crc32c(b"") == 0


def test_crc32c_of_large_data_matches_the_byte_loop():
    rng = np.random.default_rng(0)
    for size in (16 * 1024, 16 * 1024 + 3, 70001):
        data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
        expected = tfrecord._crc_raw_bytes(0xFFFFFFFF, data) ^ 0xFFFFFFFF
        assert tfrecord.crc32c(data) == expected


def test_crc32c_of_a_megabyte_is_reasonably_fast():
    import time
    data = bytes(range(256)) * 4096
    start = time.perf_counter()
    tfrecord.crc32c(data)
    assert time.perf_counter() - start < 2.0


def test_frame_record_matches_tf():
    assert tfrecord.frame_record(b"hello") == TF_PLAIN[:21]
    assert tfrecord.masked_crc32c(b"hello") == 0x191C1FBB


# --- TFRecordWriter ---------------------------------------------------------------------------

def test_writer_bytes_equal_tfs(tmp_path):
    path = tmp_path / "out.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        writer.write(b"hello")
        writer.write(tf.constant(b""))        # a scalar string tensor
        writer.write(TF_EXAMPLE)
    assert path.read_bytes() == TF_PLAIN


def test_writer_accepts_str_and_pathlike(tmp_path):
    path = tmp_path / "s.tfrecord"
    writer = tf.io.TFRecordWriter(path)
    writer.write("hello")
    writer.flush()
    writer.close()
    writer.close()       # a second close does nothing
    assert path.read_bytes() == TF_PLAIN[:21]


def test_writer_publishes_only_on_close(tmp_path):
    path = tmp_path / "late.tfrecord"
    writer = tf.io.TFRecordWriter(str(path))
    writer.write(b"hello")
    writer.flush()
    assert not path.exists()
    writer.close()
    assert path.read_bytes() == TF_PLAIN[:21]


def test_writer_leaves_nothing_on_error(tmp_path):
    path = tmp_path / "failed.tfrecord"
    with pytest.raises(RuntimeError, match="boom"):
        with tf.io.TFRecordWriter(str(path)) as writer:
            writer.write(b"hello")
            raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []


def test_writer_errors(tmp_path):
    writer = tf.io.TFRecordWriter(str(tmp_path / "a.tfrecord"))
    with pytest.raises(TypeError, match=r"TFRecordWriter.write: `record` must be bytes.*int 5"):
        writer.write(5)
    with pytest.raises(TypeError, match=r"TFRecordWriter.write: `record` must be .*scalar"):
        writer.write(tf.constant([b"a", b"b"]))
    writer.close()
    with pytest.raises(errors.FailedPreconditionError, match=r"TFRecordWriter.write: .*closed"):
        writer.write(b"x")
    with pytest.raises(ValueError, match=r"TFRecordWriter: unsupported compression_type 'LZ4'"):
        tf.io.TFRecordWriter(str(tmp_path / "b.tfrecord"), options="LZ4")


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB"])
def test_compressed_writer_round_trip(tmp_path, kind):
    path = str(tmp_path / "c.tfrecord")
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type=kind,
                                                          compression_level=9)) as writer:
        for i in range(50):
            writer.write(b"record %d " % i * 10)
    raw = (tmp_path / "c.tfrecord").read_bytes()
    plain = gzip.decompress(raw) if kind == "GZIP" else zlib.decompress(raw)
    assert plain[:8] == (len(b"record 0 ") * 10).to_bytes(8, "little")
    got = records(tf.data.TFRecordDataset(path, compression_type=kind))
    assert got == [b"record %d " % i * 10 for i in range(50)]


def test_options():
    options = tf.io.TFRecordOptions("GZIP")
    assert options.compression_type == "GZIP" and options.compression_level is None
    assert tf.io.TFRecordOptions.get_compression_type_string("ZLIB") == "ZLIB"
    assert tf.io.TFRecordOptions.get_compression_type_string(None) == ""
    assert tf.io.TFRecordOptions.get_compression_type_string(options) == "GZIP"
    with pytest.raises(ValueError, match=r"TFRecordOptions: compression_level must be in "
                                         r"\[-1, 9\], got 12"):
        tf.io.TFRecordOptions("ZLIB", compression_level=12)


# --- TFRecordDataset --------------------------------------------------------------------------

def test_reads_a_file_written_by_tf(tmp_path):
    path = write(tmp_path / "tf.tfrecord", TF_PLAIN)
    ds = tf.data.TFRecordDataset(path)
    assert isinstance(ds, tf.data.Dataset)
    assert ds.element_spec == tf.TensorSpec((), tf.string)
    got = records(ds)
    assert got == [b"hello", b"", TF_EXAMPLE]
    example = tf.train.Example.FromString(got[2])
    assert example.features.feature["x"].float_list.value == [0.25, 4.0]


@pytest.mark.parametrize("kind,data", [("GZIP", TF_GZIP), ("ZLIB", TF_ZLIB)])
def test_reads_compressed_files_written_by_tf(tmp_path, kind, data):
    path = write(tmp_path / "tf.tfrecord", data)
    assert records(tf.data.TFRecordDataset([path], compression_type=kind)) == [b"abc", b"defg"]


def test_several_files_in_order_and_interleaved(tmp_path):
    paths = []
    for name, items in (("a", [b"a0", b"a1", b"a2"]), ("b", [b"b0", b"b1"])):
        path = str(tmp_path / f"{name}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for item in items:
                writer.write(item)
        paths.append(path)
    assert records(tf.data.TFRecordDataset(paths)) == [b"a0", b"a1", b"a2", b"b0", b"b1"]
    assert records(tf.data.TFRecordDataset(paths, num_parallel_reads=2)) == \
        [b"a0", b"b0", b"a1", b"b1", b"a2"]
    files = tf.data.Dataset.from_tensor_slices(tf.constant(paths[::-1]))
    assert records(tf.data.TFRecordDataset(files).take(2)) == [b"b0", b"b1"]


def test_corrupt_data_checksum(tmp_path):
    data = bytearray(TF_PLAIN)
    data[21 + 16 + 12 + 3] ^= 1          # a byte of the third record's data
    path = write(tmp_path / "bad.tfrecord", bytes(data))
    ds = tf.data.TFRecordDataset(path)
    it = iter(ds)
    assert next(it).numpy() == b"hello"
    with pytest.raises(errors.DataLossError,
                       match=r"TFRecordDataset: corrupted record at byte offset 37 in "
                             r"'.*bad.tfrecord': the data's checksum"):
        records(ds)


def test_corrupt_length_checksum(tmp_path):
    data = bytearray(TF_PLAIN)
    data[8] ^= 0x80
    path = write(tmp_path / "bad.tfrecord", bytes(data))
    with pytest.raises(errors.DataLossError, match=r"corrupted record at byte offset 0 in "
                                                   r"'.*bad.tfrecord': the length's checksum"):
        records(tf.data.TFRecordDataset(path))


def test_truncated_file(tmp_path):
    path = write(tmp_path / "short.tfrecord", TF_PLAIN[:-3])
    with pytest.raises(errors.DataLossError, match=r"truncated record at byte offset 37"):
        records(tf.data.TFRecordDataset(path))
    path = write(tmp_path / "header.tfrecord", TF_PLAIN[:5])
    with pytest.raises(errors.DataLossError, match=r"header needs 12 bytes, found 5"):
        records(tf.data.TFRecordDataset(path))


def test_bad_gzip_and_missing_file(tmp_path):
    path = write(tmp_path / "plain.tfrecord", TF_PLAIN)
    with pytest.raises(errors.DataLossError, match=r"TFRecordDataset: cannot read .* as GZIP"):
        records(tf.data.TFRecordDataset(path, compression_type="GZIP"))
    with pytest.raises(errors.NotFoundError, match=r"missing.tfrecord"):
        records(tf.data.TFRecordDataset(str(tmp_path / "missing.tfrecord")))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"TFRecordDataset: unsupported compression_type 'BZ2'"):
        tf.data.TFRecordDataset(path, compression_type="BZ2")


def test_large_record_round_trip(tmp_path):
    big = np.arange(300_000, dtype=np.int32).tobytes()
    path = str(tmp_path / "big.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(big)
        writer.write(b"tail")
    assert records(tf.data.TFRecordDataset(path)) == [big, b"tail"]


# --- FixedLengthRecordDataset -----------------------------------------------------------------

def test_fixed_length_records(tmp_path):
    path = write(tmp_path / "f.bin", b"HHabcdefFF")
    ds = tf.data.FixedLengthRecordDataset(path, 3, header_bytes=2, footer_bytes=2)
    assert records(ds) == [b"abc", b"def"]
    assert records(tf.data.FixedLengthRecordDataset([path, path], 2)) == \
        [b"HH", b"ab", b"cd", b"ef", b"FF"] * 2
    gz = write(tmp_path / "f.gz", gzip.compress(b"HHabcdefFF"))
    assert records(tf.data.FixedLengthRecordDataset(gz, 3, 2, 2, compression_type="GZIP")) \
        == [b"abc", b"def"]


def test_fixed_length_body_not_a_multiple(tmp_path):
    # TF: "... has body length 7 bytes, which is not an exact multiple of the record length"
    path = write(tmp_path / "f.bin", b"HHabcdefgFF")
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"has a body of 7 bytes, which is not an exact multiple of the "
                             r"record length \(3 bytes\)"):
        records(tf.data.FixedLengthRecordDataset(path, 3, header_bytes=2, footer_bytes=2))
    gz = write(tmp_path / "f.gz", gzip.compress(b"HHabcdefgFF"))
    with pytest.raises(errors.DataLossError, match=r"body of 7 bytes"):
        records(tf.data.FixedLengthRecordDataset(gz, 3, 2, 2, compression_type="GZIP"))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"FixedLengthRecordDataset: record_bytes must be an integer >= 1, "
                             r"got 0"):
        tf.data.FixedLengthRecordDataset(path, 0)


# --- tf.data.experimental.TFRecordWriter ------------------------------------------------------

def test_data_experimental_writer_writes_a_dataset(tmp_path):
    path = str(tmp_path / "d.tfrecord")
    writer = tf.data.experimental.TFRecordWriter(path)
    assert writer.write(tf.data.Dataset.from_tensor_slices([b"a", b"bc"])) is None
    # TF: the same writer on the same dataset.
    with open(path, "rb") as f:
        assert f.read().hex() == ("01000000000000000175de4161786ee428020000000000000078270b34"
                                  "62633433dba7")
    gz = str(tmp_path / "d.gz")
    tf.data.experimental.TFRecordWriter(gz, "GZIP").write(
        tf.data.Dataset.from_tensor_slices(["q"]))
    assert records(tf.data.TFRecordDataset(gz, "GZIP")) == [b"q"]


def test_data_experimental_writer_errors(tmp_path):
    writer = tf.data.experimental.TFRecordWriter(str(tmp_path / "e.tfrecord"))
    # TF's messages.
    with pytest.raises(TypeError, match=r"Invalid `dataset.` Expected a `tf.data.Dataset` "
                                        r"object but got <class 'list'>"):
        writer.write([b"a"])
    with pytest.raises(TypeError, match=r"produces scalar `tf.string` elements, but got a "
                                        r"dataset which produces elements with shapes \(\) and "
                                        r"types <dtype: 'int64'>"):
        writer.write(tf.data.Dataset.range(3))
    with pytest.raises(TypeError, match=r"with shapes \(1,\) and types <dtype: 'string'>"):
        writer.write(tf.data.Dataset.from_tensor_slices([["a"]]))
    with pytest.raises(ValueError, match=r"TFRecordWriter: unsupported compression_type 'BAD'"):
        tf.data.experimental.TFRecordWriter(str(tmp_path / "e.tfrecord"), "BAD")
    assert not os.path.exists(tmp_path / "e.tfrecord")
