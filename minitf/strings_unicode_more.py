"""More Unicode functions of ``tf.strings``: ``unicode_decode_with_offsets``,
``unicode_split_with_offsets``, ``unicode_script`` and ``unicode_transcode``.

``unicode_script`` gives ICU's ``UScriptCode`` numbers, derived from the Unicode character
names of Python's ``unicodedata``: the scripts in ``SCRIPT_CODES`` (codes 0-62, which hold
Latin, Greek, Cyrillic, Han, Arabic, Hebrew, Hiragana, Katakana, Hangul, Devanagari, Thai and
the other long-encoded scripts) are recognised by the name of the character (``"GREEK SMALL
LETTER ALPHA"`` is Greek), combining marks are Inherited, other assigned characters Common,
unassigned and private-use ones Unknown (103), invalid code points -1. Characters of scripts
outside ``SCRIPT_CODES`` come out Common, and a few characters ICU files differently from
their name (``"ARABIC COMMA"`` is Common there, Arabic here) differ.
"""
import codecs
import unicodedata

import numpy

from . import backend as B
from .ops.registry import InvalidArgumentError
from .string_tensors import map_bytes
from .strings_kernel import kernel, numeric_input, numeric_result, run_kernel, string_input
from .strings_split import (_check_errors, _check_replacement, _codec, _rowwise,
                            _string_values)
from .tensor import Tensor

__all__ = ["unicode_decode_with_offsets", "unicode_split_with_offsets", "unicode_script",
           "unicode_transcode"]

# An invalid byte run of n bytes decodes to the lone surrogate U+DC00 + n: no valid UTF-8,
# UTF-16 or UTF-32 text decodes to a lone surrogate, so it marks the run and its length.
_RUN = 0xDC00
codecs.register_error("minitf.strings.run_length",
                      lambda exc: (chr(_RUN + exc.end - exc.start), exc.end))
# Input encodings of unicode_transcode beyond those the other Unicode functions read.
_INPUT_CODECS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be",
                 "ISO-8859-1": "latin-1", "US-ASCII": "ascii"}


def _decoded(text, codec, errors, replacement_char, replace_control_characters, where):
    """``(code points, byte offsets)`` of ``text``: one entry per character, invalid byte
    runs replaced by ``replacement_char`` (or dropped with ``errors='ignore'``)."""
    try:
        chars = text.decode(codec, "strict" if errors == "strict"
                            else "minitf.strings.run_length")
    except UnicodeDecodeError as exc:
        raise InvalidArgumentError(f"{where}: invalid {codec.upper()} in {text!r:.60} at byte "
                                   f"{exc.start} ({exc.reason}); use errors='replace' or "
                                   f"'ignore' to accept it") from None
    points, offsets, at = [], [], 0
    for c in chars:
        p = ord(c)
        if 0xDC00 < p <= 0xDC10:
            width = p - _RUN
            if errors == "replace":
                points.append(replacement_char)
                offsets.append(at)
            at += width
            continue
        if replace_control_characters and p < 0x20:
            p = replacement_char
        points.append(p)
        offsets.append(at)
        at += len(c.encode(codec))
    return points, offsets


def _with_offsets(input, codec, errors, replacement_char, replace_control_characters, where,
                  as_chars):
    cache = {}

    def decode(s):
        if s not in cache:
            cache[s] = _decoded(s, codec, errors, replacement_char, replace_control_characters,
                                where)
        return cache[s]

    def int64_values(pieces):
        return Tensor(B.from_numpy(numpy.asarray(pieces, dtype=numpy.int64).reshape(-1)))

    def int32_values(pieces):
        return Tensor(B.from_numpy(numpy.asarray(pieces, dtype=numpy.int32).reshape(-1)))

    if as_chars:
        values = _rowwise(input, lambda s: [chr(p).encode(codec) for p in decode(s)[0]],
                          _string_values, where)
    else:
        values = _rowwise(input, lambda s: decode(s)[0], int32_values, where)
    offsets = _rowwise(input, lambda s: decode(s)[1], int64_values, where)
    return values, offsets


def unicode_decode_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                                replacement_char=65533, replace_control_characters=False,
                                name=None):
    """``(code points, offsets)``: ``unicode_decode``'s int32 code points and the int64 byte
    offset in its string where each character starts."""
    where = "strings.unicode_decode_with_offsets"
    codec = _codec(input_encoding, where)
    _check_errors(errors, where)
    replacement_char = _check_replacement(replacement_char, where)
    return _with_offsets(input, codec, errors, replacement_char, replace_control_characters,
                         where, as_chars=False)


def unicode_split_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                               replacement_char=65533, name=None):
    """``(characters, offsets)``: ``unicode_split``'s characters and the int64 byte offset in
    its string where each starts."""
    where = "strings.unicode_split_with_offsets"
    codec = _codec(input_encoding, where)
    _check_errors(errors, where)
    replacement_char = _check_replacement(replacement_char, where)
    return _with_offsets(input, codec, errors, replacement_char, False, where, as_chars=True)


# --- unicode_script -----------------------------------------------------------------------
#: ICU ``UScriptCode`` of the scripts recognised from character names.
SCRIPT_CODES = {"COMMON": 0, "INHERITED": 1, "ARABIC": 2, "ARMENIAN": 3, "BENGALI": 4,
                "BOPOMOFO": 5, "CHEROKEE": 6, "COPTIC": 7, "CYRILLIC": 8, "DESERET": 9,
                "DEVANAGARI": 10, "ETHIOPIC": 11, "GEORGIAN": 12, "GOTHIC": 13, "GREEK": 14,
                "GUJARATI": 15, "GURMUKHI": 16, "HAN": 17, "HANGUL": 18, "HEBREW": 19,
                "HIRAGANA": 20, "KANNADA": 21, "KATAKANA": 22, "KHMER": 23, "LAO": 24,
                "LATIN": 25, "MALAYALAM": 26, "MONGOLIAN": 27, "MYANMAR": 28, "OGHAM": 29,
                "OLD ITALIC": 30, "ORIYA": 31, "RUNIC": 32, "SINHALA": 33, "SYRIAC": 34,
                "TAMIL": 35, "TELUGU": 36, "THAANA": 37, "THAI": 38, "TIBETAN": 39,
                "CANADIAN SYLLABICS": 40, "YI": 41, "TAGALOG": 42, "HANUNOO": 43, "BUHID": 44,
                "TAGBANWA": 45, "BRAILLE": 46, "CYPRIOT": 47, "LIMBU": 48, "LINEAR B": 49,
                "OSMANYA": 50, "SHAVIAN": 51, "TAI LE": 52, "UGARITIC": 53, "BUGINESE": 55,
                "GLAGOLITIC": 56, "KHAROSHTHI": 57, "SYLOTI NAGRI": 58, "NEW TAI LUE": 59,
                "TIFINAGH": 60, "OLD PERSIAN": 61, "BALINESE": 62, "UNKNOWN": 103}
_SCRIPT_WORDS = [s for s in SCRIPT_CODES if s not in ("COMMON", "INHERITED", "UNKNOWN")]
# Names that do not start with their script's name, checked first.
_NAME_PREFIXES = [(prefix, SCRIPT_CODES[script]) for prefix, script in [
    ("CJK UNIFIED IDEOGRAPH", "HAN"), ("CJK COMPATIBILITY IDEOGRAPH", "HAN"),
    ("CJK RADICAL", "HAN"), ("KANGXI RADICAL", "HAN"), ("IDEOGRAPHIC ITERATION", "HAN"),
    ("KATAKANA-HIRAGANA", "COMMON"), ("HALFWIDTH KATAKANA", "KATAKANA"),
    ("CIRCLED KATAKANA", "KATAKANA"), ("SQUARED KATAKANA", "KATAKANA"),
    ("HENTAIGANA", "HIRAGANA"), ("HALFWIDTH HANGUL", "HANGUL"),
    ("EXTENDED ARABIC-INDIC", "ARABIC"), ("FEMININE ORDINAL", "LATIN"),
    ("MASCULINE ORDINAL", "LATIN"), ("BRAILLE PATTERN", "BRAILLE")]] + [
    (script, SCRIPT_CODES[script]) for script in _SCRIPT_WORDS]


def _starts_with_word(name, prefix):
    return name.startswith(prefix) and (len(name) == len(prefix) or name[len(prefix)] in " -")


def _script_word_in(name):
    words = f" {name} "
    for script in _SCRIPT_WORDS:
        if f" {script} " in words:
            return SCRIPT_CODES[script]
    return None


def script_of(point):
    """The ICU script code of one code point (see the module docstring)."""
    if not 0 <= point <= 0x10FFFF:
        return -1
    char = chr(point)
    category = unicodedata.category(char)
    if category in ("Cn", "Co", "Cs"):
        return SCRIPT_CODES["UNKNOWN"]
    if 0xAC00 <= point <= 0xD7A3:   # precomposed Hangul syllables have computed names
        return SCRIPT_CODES["HANGUL"]
    name = unicodedata.name(char, "")
    if category in ("Mn", "Me") and name.startswith("COMBINING"):
        for script in ("CYRILLIC", "DEVANAGARI"):   # "COMBINING CYRILLIC TITLO" is Cyrillic
            if name.startswith(f"COMBINING {script} "):
                return SCRIPT_CODES[script]
        return SCRIPT_CODES["INHERITED"]
    if name.startswith("VARIATION SELECTOR") or name in ("ZERO WIDTH JOINER",
                                                          "ZERO WIDTH NON-JOINER"):
        return SCRIPT_CODES["INHERITED"]
    for prefix, code in _NAME_PREFIXES:
        if _starts_with_word(name, prefix):
            return code
    if category[0] in "LMN":   # letters, marks and digits named after their script
        found = _script_word_in(name)
        if found is not None:
            return found
        if category == "Lm" and name.startswith("MODIFIER LETTER SMALL") or \
                name.startswith("MODIFIER LETTER CAPITAL"):
            return SCRIPT_CODES["LATIN"]
    return SCRIPT_CODES["COMMON"]


def _scripts(points):
    host = numpy.asarray(B.to_numpy(points)).astype(numpy.int64)
    out = numpy.fromiter((script_of(int(p)) for p in host.reshape(-1)), numpy.int32,
                         count=host.size)
    return numeric_result(out.reshape(host.shape))


_SCRIPT = kernel("unicode_script", _scripts)


def unicode_script(input, name=None):  # noqa: A002
    """The ICU script code (``UScriptCode``) of each int32 code point; -1 for invalid code
    points. See the module docstring for which scripts are recognised."""
    points = numeric_input(input, "strings.unicode_script", "input", dtype="int32")
    return run_kernel(_SCRIPT, (points,))


# --- unicode_transcode --------------------------------------------------------------------
def _transcode(array, source, target, errors, replacement_char, replace_control_characters):
    def one(text):
        points, _ = _decoded(text, source, errors, replacement_char,
                             replace_control_characters, "strings.unicode_transcode")
        return "".join(map(chr, points)).encode(target)
    return map_bytes(one, array)


_TRANSCODE = kernel("unicode_transcode", _transcode)


def unicode_transcode(input, input_encoding, output_encoding, errors="replace",  # noqa: A002
                      replacement_char=65533, replace_control_characters=False, name=None):
    """Each string decoded from ``input_encoding`` (UTF-8, UTF-16-BE, UTF-32-BE, ISO-8859-1 or
    US-ASCII) and encoded as ``output_encoding`` (UTF-8, UTF-16-BE or UTF-32-BE); invalid
    input as ``errors`` says (see ``unicode_decode``), control characters (below U+0020)
    replaced by ``replacement_char`` with ``replace_control_characters``."""
    where = "strings.unicode_transcode"
    strings = string_input(input, where)
    name_in = str(input_encoding).upper().replace("_", "-")
    if name_in not in _INPUT_CODECS:
        raise ValueError(f"{where}: unsupported input_encoding {input_encoding!r}; expected "
                         f"one of {sorted(_INPUT_CODECS)}")
    target = _codec(output_encoding, where)
    _check_errors(errors, where)
    replacement_char = _check_replacement(replacement_char, where)
    return run_kernel(_TRANSCODE, (strings,), source=_INPUT_CODECS[name_in], target=target,
                      errors=errors, replacement_char=replacement_char,
                      replace_control_characters=bool(replace_control_characters))


def install(tf):
    """Set these functions on ``tf.strings`` (idempotent)."""
    for name in __all__:
        setattr(tf.strings, name, globals()[name])

