"""tf.train.Example and friends (minitf.example_proto) and tf.io.parse_single_example /
parse_example / parse_single_sequence_example (minitf.example_parsing).

Serialized bytes and parsed values marked "TF" were produced by TensorFlow 2.21 (run
separately) and pasted here; the other expected bytes are worked out by hand from the protocol
buffer wire format (protobuf.dev/programming-guides/encoding)."""
import numpy as np
import pytest

import minitf as tf
from minitf import errors
from minitf.example_proto import DecodeError

Feature, FloatList, Int64List, BytesList = (tf.train.Feature, tf.train.FloatList,
                                            tf.train.Int64List, tf.train.BytesList)

# TF: one Example per single feature (a map of several keys is written in hash order by TF).
TF_SINGLE = {
    "f": ("0a130a110a0166120c120a0a080000c03f000000c0",
          Feature(float_list=FloatList(value=[1.5, -2.0]))),
    "i": ("0a180a160a016912111a0f0a0d01ffffffffffffffffff01ac02",
          Feature(int64_list=Int64List(value=[1, -1, 300]))),
    "b": ("0a0f0a0d0a016212080a060a0261620a00", Feature(bytes_list=BytesList(value=[b"ab", b""]))),
    "e": ("0a090a070a016512021200", Feature(float_list=FloatList())),
}
# TF: the five features above plus 'n': tf.train.Feature() (nothing set), in TF's order.
TF_FIVE = bytes.fromhex(
    "0a4a0a110a0166120c120a0a080000c03f000000c00a160a016912111a0f0a0d01ffffffffffffffffff01ac02"
    "0a050a016e12000a0d0a016212080a060a0261620a000a070a016512021200")
# TF: SequenceExample(context {len: [2]}, feature_lists {tok: [[3, 4], [5]]})
TF_SEQUENCE = bytes.fromhex(
    "0a0e0a0c0a036c656e12051a030a010212180a160a03746f6b120f0a061a040a0203040a051a030a0105")
# TF: e1 = {f: [1.5, -2, 3, 4], i: [7], s: [b"a", b"bc"]},
#     e2 = {e: float_list [], f: [0.5, 0.5, 1, 2], s: [b"z"]}
E1 = bytes.fromhex("0a370a0a0a016912051a030a01070a190a0166121412120a100000c03f000000c00000404000"
                   "0080400a0e0a017312090a070a01610a026263")
E2 = bytes.fromhex("0a300a070a0165120212000a190a0166121412120a100000003f0000003f0000803f00000040"
                   "0a0a0a017312050a030a017a")


def sparse_parts(sp):
    return sp.indices.numpy().tolist(), sp.values.numpy().tolist(), sp.dense_shape.numpy().tolist()


# --- messages ---------------------------------------------------------------------------------

@pytest.mark.parametrize("key", sorted(TF_SINGLE))
def test_serialization_equals_tfs(key):
    hex_bytes, feature = TF_SINGLE[key]
    example = tf.train.Example(features=tf.train.Features(feature={key: feature}))
    assert example.SerializeToString().hex() == hex_bytes
    assert tf.train.Example.FromString(bytes.fromhex(hex_bytes)) == example


def test_empty_messages():
    assert tf.train.Example().SerializeToString() == b""       # TF
    assert tf.train.Example(features=tf.train.Features()).SerializeToString() == b"\n\x00"
    read_only = tf.train.Example()
    assert len(read_only.features.feature) == 0      # reading does not set the field
    assert read_only.SerializeToString() == b"" and not read_only.HasField("features")


def test_parses_tfs_bytes_with_attribute_access():
    example = tf.train.Example.FromString(TF_FIVE)
    feature = example.features.feature
    assert sorted(feature) == ["b", "e", "f", "i", "n"]
    assert feature["f"].float_list.value == [1.5, -2.0]
    assert feature["i"].int64_list.value == [1, -1, 300]
    assert feature["b"].bytes_list.value == [b"ab", b""]
    assert feature["e"].WhichOneof("kind") == "float_list" and feature["e"].float_list.value == []
    assert feature["n"].WhichOneof("kind") is None
    assert feature["f"].int64_list.value == []          # another member of the oneof
    again = tf.train.Example()
    again.ParseFromString(example.SerializeToString())
    assert again == example


def test_sequence_example_round_trip():
    seq = tf.train.SequenceExample(
        context=tf.train.Features(feature={"len": Feature(int64_list=Int64List(value=[2]))}),
        feature_lists=tf.train.FeatureLists(feature_list={"tok": tf.train.FeatureList(feature=[
            Feature(int64_list=Int64List(value=[3, 4])),
            Feature(int64_list=Int64List(value=[5]))])}))
    assert seq.SerializeToString() == TF_SEQUENCE
    parsed = tf.train.SequenceExample.FromString(TF_SEQUENCE)
    assert [f.int64_list.value for f in parsed.feature_lists.feature_list["tok"].feature] == \
        [[3, 4], [5]]


def test_building_by_mutation():
    example = tf.train.Example()
    example.features.feature["y"].int64_list.value.append(np.int64(3))
    # Int64List 0a 01 03; Feature 1a 03 ..; map entry 0a 01 'y' 12 05 ..; Features; Example
    assert example.SerializeToString().hex() == "0a0c0a0a0a017912051a030a0103"
    assert example.features.feature["y"].WhichOneof("kind") == "int64_list"


def test_reads_unpacked_lists_and_skips_unknown_fields():
    # FloatList unpacked: 0d + fixed32 (1.5 = 0x3fc00000); Int64List unpacked: 08 + varint;
    # field 15 (varint 5) is unknown: 78 05.
    assert FloatList.FromString(bytes.fromhex("0d0000c03f0d000000c0")).value == [1.5, -2.0]
    assert Int64List.FromString(bytes.fromhex("080108ac027805")).value == [1, 300]
    assert Int64List.FromString(bytes.fromhex("0a0301ac02080f")).value == [1, 300, 15]


def test_values_are_converted_as_protobuf_does():
    assert FloatList(value=[0.1]).value[0] == 0.10000000149011612      # float32, as TF
    assert FloatList(value=np.array([1, 2], np.int32)).value == [1.0, 2.0]
    assert Int64List(value=tf.constant([5, -6])).value == [5, -6]
    assert Int64List(value=[2 ** 63 - 1, -2 ** 63]).SerializeToString().hex() == \
        "0a13ffffffffffffffff7f80808080808080808001"



def test_scalar_tensors_and_bools_as_values():
    # TF takes scalar int tensors and float64 tensors (their __index__ / __float__).
    assert Int64List(value=[tf.constant(3), tf.constant(4, tf.int64)]).value == [3, 4]
    assert FloatList(value=[tf.constant(1.5, tf.float64), tf.constant(2)]).value == [1.5, 2.0]
    assert FloatList(value=[tf.constant(0.1)]).value == [0.10000000149011612]
    # Bools are 0/1 (protobuf before version 5; TF 2.21's protobuf rejects them).
    assert Int64List(value=[True, np.bool_(False), tf.constant(True)]).value == [1, 0, 1]
    with pytest.raises(TypeError, match=r"Int64List: .*1\.5.* has type float32, but expected "
                                        r"one of: int"):
        Int64List(value=[tf.constant(1.5)])
    # TF: numpy.array of a FloatList's values is float32, of an Int64List's int64.
    assert np.array(FloatList(value=[0.25]).value).dtype == np.float32
    assert np.array(Int64List(value=[3]).value).dtype == np.int64


def test_str_is_protobuf_text_format():
    # TF's str() of the same messages.
    assert str(FloatList(value=[1.0, 1e-10, 3e20, float("inf"), float("nan"), -0.0, 0.1,
                                123456789.0, 1e-5, 100000.0, 1e6, np.exp(1)])) == (
        "value: 1\nvalue: 1e-10\nvalue: 3e+20\nvalue: inf\nvalue: nan\nvalue: -0\nvalue: 0.1\n"
        "value: 123456792\nvalue: 1e-05\nvalue: 100000\nvalue: 1e+06\nvalue: 2.71828175\n")
    assert str(BytesList(value=[bytes(range(0, 14)), bytes([31, 32, 126, 127, 128, 255]),
                                b"a\"b'c\\", "\u00e9".encode()])) == (
        'value: "\\000\\001\\002\\003\\004\\005\\006\\007\\010\\t\\n\\013\\014\\r"\n'
        'value: "\\037 ~\\177\\200\\377"\nvalue: "a\\"b\\\'c\\\\"\nvalue: "\\303\\251"\n')
    assert str(Int64List(value=[-5, 2 ** 62])) == "value: -5\nvalue: 4611686018427387904\n"
    assert str(tf.train.Features(feature={"\u00e9\"k": Feature()})) == \
        'feature {\n  key: "\u00e9\\"k"\n  value {\n  }\n}\n'
    assert str(tf.train.Example()) == "" and str(Feature()) == ""
    assert str(tf.train.SequenceExample.FromString(TF_SEQUENCE)) == (
        'context {\n  feature {\n    key: "len"\n    value {\n      int64_list {\n'
        '        value: 2\n      }\n    }\n  }\n}\nfeature_lists {\n  feature_list {\n'
        '    key: "tok"\n    value {\n      feature {\n        int64_list {\n'
        '          value: 3\n          value: 4\n        }\n      }\n      feature {\n'
        '        int64_list {\n          value: 5\n        }\n      }\n    }\n  }\n}\n')
    # Map entries print sorted by key (TF prints them in its map's own order).
    text = str(tf.train.Example.FromString(E1))
    assert [line for line in text.split("\n") if "key:" in line] == \
        ['    key: "f"', '    key: "i"', '    key: "s"']

def test_message_errors():
    with pytest.raises(TypeError, match=r"BytesList: 'abc' has type str, but expected one of: "
                                        r"bytes"):
        BytesList(value=["abc"])
    with pytest.raises(TypeError, match=r"Int64List: 1.5 has type float, but expected one of: "
                                        r"int"):
        Int64List(value=[1.5])
    with pytest.raises(ValueError, match=r"Int64List: value out of range for int64: "
                                         r"9223372036854775808"):
        Int64List(value=[2 ** 63])
    with pytest.raises(TypeError, match=r"Feature: float_list must be a tf.train.FloatList, "
                                        r"got list"):
        Feature(float_list=[1.0])
    with pytest.raises(DecodeError, match=r"runs past the end"):
        tf.train.Example.FromString(b"\x0a\x05\x0a")


# --- parsing ----------------------------------------------------------------------------------

def test_parse_single_example_tf_values():
    parsed = tf.io.parse_single_example(E1, {
        "f": tf.io.FixedLenFeature([2, 2], tf.float32),
        "i": tf.io.FixedLenFeature([], tf.int64),
        "m": tf.io.FixedLenFeature([2], tf.int64, default_value=[9, 8]),
        "s": tf.io.VarLenFeature(tf.string),
        "v": tf.io.VarLenFeature(tf.float32)})
    assert parsed["f"].dtype == tf.float32 and parsed["f"].numpy().tolist() == [[1.5, -2.0],
                                                                                [3.0, 4.0]]
    assert parsed["i"].dtype == tf.int64 and parsed["i"].shape == () and int(parsed["i"]) == 7
    assert parsed["m"].numpy().tolist() == [9, 8]
    assert isinstance(parsed["s"], tf.SparseTensor)
    assert sparse_parts(parsed["s"]) == ([[0], [1]], [b"a", b"bc"], [2])
    assert sparse_parts(parsed["v"]) == ([], [], [0])


def test_parse_example_batch_tf_values():
    parsed = tf.io.parse_example(tf.constant([E1, E2]), {
        "f": tf.io.FixedLenFeature([4], tf.float32),
        "s": tf.io.VarLenFeature(tf.string),
        "i": tf.io.FixedLenFeature([1], tf.int64, default_value=-1)})
    assert parsed["f"].numpy().tolist() == [[1.5, -2.0, 3.0, 4.0], [0.5, 0.5, 1.0, 2.0]]
    assert sparse_parts(parsed["s"]) == ([[0, 0], [0, 1], [1, 0]], [b"a", b"bc", b"z"], [2, 2])
    assert parsed["i"].numpy().tolist() == [[7], [-1]]
    seq = tf.io.parse_example([E1, E2], {
        "i": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True, default_value=-5),
        "s": tf.io.FixedLenSequenceFeature([], tf.string, allow_missing=True)})
    assert seq["i"].numpy().tolist() == [[7], [-5]]
    assert seq["s"].numpy().tolist() == [[b"a", b"bc"], [b"z", b""]]


def test_fixed_len_sequence_single():
    parsed = tf.io.parse_single_example(E1, {
        "f": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
        "q": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True)})
    assert parsed["f"].numpy().tolist() == [[1.5, -2.0], [3.0, 4.0]]
    assert parsed["q"].shape == (0, 2)


def test_parse_example_of_no_records():
    parsed = tf.io.parse_example([], {"f": tf.io.FixedLenFeature([2], tf.float32),
                                      "v": tf.io.VarLenFeature(tf.int64)})
    assert parsed["f"].shape == (0, 2)
    assert sparse_parts(parsed["v"]) == ([], [], [0, 0])


def test_parse_errors():
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"feature 'm' \(data type: int64\) is required but could not be "
                             r"found"):
        tf.io.parse_single_example(E1, {"m": tf.io.FixedLenFeature([], tf.int64)})
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"feature 'f': expected 3 values for shape \[3\], found 4"):
        tf.io.parse_single_example(E1, {"f": tf.io.FixedLenFeature([3], tf.float32)})
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"'f': data types don't match: the data has type float, the spec "
                             r"expects int64"):
        tf.io.parse_single_example(E1, {"f": tf.io.VarLenFeature(tf.int64)})
    with pytest.raises(errors.InvalidArgumentError, match=r"divisible by 3 \(shape \[3\]\), "
                                                          r"found 4"):
        tf.io.parse_single_example(E1, {"f": tf.io.FixedLenSequenceFeature(
            [3], tf.float32, allow_missing=True)})
    with pytest.raises(ValueError, match=r"FixedLenSequenceFeature 'f' requires "
                                         r"allow_missing=True"):
        tf.io.parse_single_example(E1, {"f": tf.io.FixedLenSequenceFeature([2], tf.float32)})
    with pytest.raises(errors.InvalidArgumentError, match=r"unsupported dtype int32"):
        tf.io.parse_single_example(E1, {"i": tf.io.FixedLenFeature([], tf.int32)})
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"parse_example: could not parse the serialized Example"):
        tf.io.parse_example([b"garbage\xff"], {"i": tf.io.FixedLenFeature([], tf.int64)})
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"expected serialized to be a scalar or vector, got shape \[2, 1\]"):
        tf.io.parse_example([[E1], [E2]], {"i": tf.io.FixedLenFeature([], tf.int64, 0)})
    with pytest.raises(errors.InvalidArgumentError, match=r"parse_single_example: serialized "
                                                          r"must be a scalar"):
        tf.io.parse_single_example([E1], {"i": tf.io.FixedLenFeature([], tf.int64)})
    with pytest.raises(TypeError, match=r"feature 'i': expected a FixedLenFeature"):
        tf.io.parse_single_example(E1, {"i": tf.int64})


def test_feature_specs_are_named_tuples():
    spec = tf.io.FixedLenFeature([2], tf.float32)
    assert spec.shape == [2] and spec.dtype == tf.float32 and spec.default_value is None
    assert tf.io.VarLenFeature(tf.int64).dtype == tf.int64
    assert tf.io.FixedLenSequenceFeature([], tf.string).allow_missing is False


def test_parse_single_sequence_example():
    context, sequences = tf.io.parse_single_sequence_example(
        TF_SEQUENCE, context_features={"len": tf.io.FixedLenFeature([], tf.int64)},
        sequence_features={"tok": tf.io.VarLenFeature(tf.int64),
                           "missing": tf.io.FixedLenSequenceFeature([2], tf.float32,
                                                                    allow_missing=True)})
    assert int(context["len"]) == 2
    assert sparse_parts(sequences["tok"]) == ([[0, 0], [0, 1], [1, 0]], [3, 4, 5], [2, 2])
    assert sequences["missing"].shape == (0, 2)
    with pytest.raises(errors.InvalidArgumentError, match=r"feature list 'tok': expected 2 "
                                                          r"values per step"):
        tf.io.parse_single_sequence_example(TF_SEQUENCE, sequence_features={
            "tok": tf.io.FixedLenSequenceFeature([2], tf.int64)})


def test_pipeline_tfrecord_map_parse_batch(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(5):
            example = tf.train.Example(features=tf.train.Features(feature={
                "x": Feature(float_list=FloatList(value=[i, i + 0.5])),
                "y": Feature(int64_list=Int64List(value=[i * 10])),
                "name": Feature(bytes_list=BytesList(value=[b"n%d" % i]))}))
            writer.write(example.SerializeToString())
    spec = {"x": tf.io.FixedLenFeature([2], tf.float32),
            "y": tf.io.FixedLenFeature([], tf.int64),
            "name": tf.io.FixedLenFeature([], tf.string)}
    ds = tf.data.TFRecordDataset(path).map(lambda r: tf.io.parse_single_example(r, spec))
    batches = list(ds.batch(2).as_numpy_iterator())
    assert [b["y"].tolist() for b in batches] == [[0, 10], [20, 30], [40]]
    assert batches[0]["x"].tolist() == [[0.0, 0.5], [1.0, 1.5]]
    assert batches[2]["name"].tolist() == [b"n4"]
    # Datasets do not hold SparseTensor elements yet: densify VarLenFeature values in map.
    batch_spec = {"x": spec["x"], "y": tf.io.VarLenFeature(tf.int64)}
    batched = tf.data.TFRecordDataset(path).batch(5).map(
        lambda r: {k: tf.sparse.to_dense(v) if isinstance(v, tf.SparseTensor) else v
                   for k, v in tf.io.parse_example(r, batch_spec).items()})
    (element,) = list(batched.as_numpy_iterator())
    assert element["y"].tolist() == [[0], [10], [20], [30], [40]]
    assert element["x"][4].tolist() == [4.0, 4.5]
