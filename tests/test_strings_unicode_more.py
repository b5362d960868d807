"""tf.strings.unicode_decode_with_offsets, unicode_split_with_offsets, unicode_script and
unicode_transcode. Expected values were produced by TensorFlow 2.21 and are pasted here as
literals."""
import pytest

import minitf as tf


def _list(x):
    return x.to_list() if isinstance(x, tf.RaggedTensor) else x.numpy().tolist()


def test_decode_and_split_with_offsets():
    s = tf.constant(["héllo", "\xe9\U0001F600b", ""])
    points, offsets = tf.strings.unicode_decode_with_offsets(s, "UTF-8")
    assert _list(points) == [[104, 233, 108, 108, 111], [233, 128512, 98], []]
    assert _list(offsets) == [[0, 1, 3, 4, 5], [0, 2, 6], []]
    assert points.dtype == tf.int32 and offsets.dtype == tf.int64
    chars, offsets = tf.strings.unicode_split_with_offsets(s, "UTF-8")
    assert _list(chars) == [[b"h", b"\xc3\xa9", b"l", b"l", b"o"],
                            [b"\xc3\xa9", b"\xf0\x9f\x98\x80", b"b"], []]
    assert _list(offsets) == [[0, 1, 3, 4, 5], [0, 2, 6], []]


def test_offsets_of_invalid_bytes_and_other_encodings():
    points, offsets = tf.strings.unicode_decode_with_offsets(b"a\xffb\xc3", "UTF-8")
    assert _list(points) == [97, 65533, 98, 65533] and _list(offsets) == [0, 1, 2, 3]
    points, offsets = tf.strings.unicode_decode_with_offsets(b"a\xffb", "UTF-8", errors="ignore")
    assert _list(points) == [97, 98] and _list(offsets) == [0, 2]
    points, offsets = tf.strings.unicode_decode_with_offsets("ab".encode("utf-16-be"), "UTF-16-BE")
    assert _list(points) == [97, 98] and _list(offsets) == [0, 2]
    points, _ = tf.strings.unicode_decode_with_offsets(b"a\x01", "UTF-8", replacement_char=63,
                                                       replace_control_characters=True)
    assert _list(points) == [97, 63]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"invalid UTF-8 .* at byte 1"):
        tf.strings.unicode_decode_with_offsets(b"a\xff", "UTF-8", errors="strict")
    with pytest.raises(ValueError, match="unsupported encoding 'UTF-7'"):
        tf.strings.unicode_split_with_offsets("a", "UTF-7")


def test_unicode_script_matches_tf():
    points = [ord(c) for c in "aΩЖ漢ءאあア한अก1\u0301 "] + [0x1F600, -1, 0x110000]
    out = tf.strings.unicode_script(points)
    assert out.dtype == tf.int32
    assert _list(out) == [25, 14, 8, 17, 2, 19, 20, 22, 18, 10, 38, 0, 1, 0, 0, -1, -1]
    # an unassigned code point and a private-use one: USCRIPT_UNKNOWN
    assert _list(tf.strings.unicode_script([[0x0378, 0xE000]])) == [[103, 103]]
    with pytest.raises(TypeError, match="`input` must be integers"):
        tf.strings.unicode_script([1.5])


def test_unicode_script_in_function_follows_values():
    script = tf.function(tf.strings.unicode_script)
    assert _list(script(tf.constant([97, 945]))) == [25, 14]
    assert _list(script(tf.constant([1046, 12354]))) == [8, 20]


@pytest.mark.parametrize("text,source,target,kwargs,expected", [
    (["héllo", "a\xffb"], "UTF-8", "UTF-16-BE", {},
     [b"\x00h\x00\xe9\x00l\x00l\x00o", b"\x00a\x00\xff\x00b"]),
    ([b"a\xffb\x01"], "UTF-8", "UTF-8", {"replacement_char": 63,
                                         "replace_control_characters": True}, [b"a?b?"]),
    ([b"a\xffb"], "UTF-8", "UTF-8", {"errors": "ignore"}, [b"ab"]),
    ([b"h\xe9"], "ISO-8859-1", "UTF-8", {}, [b"h\xc3\xa9"]),
    ([b"h\xe9"], "US-ASCII", "UTF-8", {}, [b"h\xef\xbf\xbd"]),
    (["ab"], "UTF-8", "UTF-32-BE", {}, [b"\x00\x00\x00a\x00\x00\x00b"]),
    ([b"a\xffb"], "UTF-8", "UTF-32-BE", {}, [b"\x00\x00\x00a\x00\x00\xff\xfd\x00\x00\x00b"]),
    ([b"\x00a\xd8\x00"], "UTF-16-BE", "UTF-8", {}, [b"a\xef\xbf\xbd"]),
    ([b"a\tb"], "UTF-8", "UTF-8", {"replace_control_characters": True}, [b"a\xef\xbf\xbdb"]),
    ([b"a\xc3"], "UTF-8", "UTF-16-BE", {}, [b"\x00a\xff\xfd"]),
])
def test_unicode_transcode_matches_tf(text, source, target, kwargs, expected):
    assert _list(tf.strings.unicode_transcode(text, source, target, **kwargs)) == expected


def test_unicode_transcode_errors_and_function():
    with pytest.raises(tf.errors.InvalidArgumentError, match="unicode_transcode: invalid UTF-8"):
        tf.strings.unicode_transcode([b"a\xffb"], "UTF-8", "UTF-8", errors="strict")
    with pytest.raises(ValueError, match="unsupported input_encoding 'EBCDIC'"):
        tf.strings.unicode_transcode("a", "EBCDIC", "UTF-8")
    with pytest.raises(ValueError, match="unsupported encoding 'US-ASCII'"):
        tf.strings.unicode_transcode("a", "UTF-8", "US-ASCII")
    transcode = tf.function(lambda s: tf.strings.unicode_transcode(s, "UTF-8", "UTF-16-BE"))
    assert _list(transcode(tf.constant(["a"]))) == [b"\x00a"]
    assert _list(transcode(tf.constant(["é", "b"]))) == [b"\x00\xe9", b"\x00b"]
