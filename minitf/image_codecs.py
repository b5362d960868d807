"""Image codecs of ``tf.io`` / ``tf.image`` that need no third-party library.

    data = tf.io.read_file("cat.png")
    image = tf.io.decode_png(data, channels=3)          # uint8, (height, width, 3)
    again = tf.io.encode_png(image)                      # a scalar tf.string

PNG is decoded and encoded here with ``zlib`` and numpy: every colour type (grey, grey with
alpha, RGB, RGBA, palette), bit depths 1, 2, 4, 8 and 16, all five row filters and Adam7
interlacing; the channel and depth conversions follow TF's (libpng's). BMP (uncompressed 24-
and 32-bit, bottom-up or top-down) and GIF (every frame, LZW) are decoded. There is no JPEG
codec: ``decode_jpeg`` and JPEG data given to ``decode_image`` raise
``tf.errors.UnimplementedError``. Contents are scalar string tensors (or ``bytes``); images are
host-decoded and returned as backend tensors, so the functions also work in ``Dataset.map``.
"""
import struct
import zlib

import numpy

from . import backend as B
from . import dtypes, errors
from ._state import state
from .string_tensors import OBJECT, scalar_bytes, string_tensor
from .tensor import Tensor

__all__ = ["decode_png", "encode_png", "decode_bmp", "decode_gif", "decode_image", "is_jpeg",
           "decode_jpeg", "encode_jpeg"]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"
_NO_JPEG = ("minitf has no JPEG codec; store the images as PNG (tf.io.encode_png), or decode "
            "them with Pillow (numpy.asarray(PIL.Image.open(path))) and pass the array to "
            "tf.convert_to_tensor")


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _contents(contents, where):
    """The bytes of a scalar string ``contents``. A ``minitf.function`` calling a codec runs
    eagerly: the codecs are Python code on the host."""
    if state.tracer is not None:
        state.tracer.run_eagerly(f"it calls tf.io.{where}, which runs in Python")
    return scalar_bytes(contents, f"{where}: contents")


def _channels(channels, allowed, where):
    value = 0 if channels is None else int(channels)
    if value not in allowed:
        raise _invalid(f"{where}: channels must be one of {allowed}, got {channels!r}")
    return value


def _out_dtype(dtype, allowed, where):
    d = dtypes.as_dtype(dtype)
    if d not in allowed:
        raise TypeError(f"{where}: dtype must be one of {[a.name for a in allowed]}, got "
                        f"{d.name}")
    return d


def _tensor(array):
    array = numpy.asarray(array)
    return Tensor(B.from_numpy(array if array.flags.c_contiguous else array.copy()))


# --- PNG reading -------------------------------------------------------------------------

# colour type -> samples per pixel, allowed bit depths
_PNG_TYPES = {0: (1, (1, 2, 4, 8, 16)), 2: (3, (8, 16)), 3: (1, (1, 2, 4, 8)),
              4: (2, (8, 16)), 6: (4, (8, 16))}
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
          (0, 1, 1, 2))


def _png_chunks(data, where):
    """``(type, body)`` of each chunk up to IEND, checking the CRCs."""
    if not data.startswith(_PNG_SIGNATURE):
        raise _invalid(f"{where}: the contents are not a PNG image (no PNG signature)")
    pos = len(_PNG_SIGNATURE)
    while True:
        if pos + 12 > len(data):
            raise _invalid(f"{where}: the PNG data is truncated (no IEND chunk)")
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        end = pos + 8 + length
        if end + 4 > len(data):
            raise _invalid(f"{where}: the PNG data is truncated inside a {kind!r} chunk")
        body = data[pos + 8:end]
        if zlib.crc32(kind + body) != struct.unpack(">I", data[end:end + 4])[0]:
            raise _invalid(f"{where}: CRC error in the PNG {kind!r} chunk (corrupt data)")
        yield kind, body
        if kind == b"IEND":
            return
        pos = end + 4


def _unfilter(raw, offset, rows, stride, unit, where):
    """Undo the PNG row filters of ``rows`` scanlines of ``stride`` bytes (``unit`` bytes per
    pixel, at least 1) starting at ``raw[offset]``; returns ``(bytes (rows, stride), end)``."""
    if offset + rows * (stride + 1) > len(raw):
        raise _invalid(f"{where}: the PNG image data is shorter than its size says")
    out = numpy.zeros((rows, stride), numpy.uint8)
    prior = numpy.zeros(stride, numpy.uint8)
    for y in range(rows):
        kind = raw[offset]
        line = numpy.frombuffer(raw, numpy.uint8, stride, offset + 1)
        offset += stride + 1
        if kind == 0:
            cur = line
        elif kind == 1:    # Sub: a running sum along each byte of the pixel
            cur = numpy.cumsum(line.reshape(-1, unit), axis=0, dtype=numpy.uint8).reshape(-1)
        elif kind == 2:    # Up
            cur = line + prior
        elif kind in (3, 4):
            cur = numpy.frombuffer(_average_or_paeth(kind, bytearray(line), prior.tobytes(),
                                                     unit), numpy.uint8)
        else:
            raise _invalid(f"{where}: bad PNG filter type {kind} in row {y} (expected 0-4)")
        out[y] = cur
        prior = out[y]
    return out, offset


def _average_or_paeth(kind, cur, prior, unit):
    """Filters 3 (Average) and 4 (Paeth), which depend on the bytes already decoded."""
    if kind == 3:
        for i in range(len(cur)):
            left = cur[i - unit] if i >= unit else 0
            cur[i] = (cur[i] + ((left + prior[i]) >> 1)) & 255
        return bytes(cur)
    for i in range(len(cur)):
        if i >= unit:
            a, c = cur[i - unit], prior[i - unit]
        else:
            a = c = 0
        b = prior[i]
        pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
        cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    return bytes(cur)


def _unpack(rows_bytes, width, samples, depth):
    """Scanline bytes ``(rows, stride)`` -> sample values ``(rows, width, samples)``."""
    rows = rows_bytes.shape[0]
    if depth == 8:
        return rows_bytes[:, :width * samples].reshape(rows, width, samples).astype(numpy.uint16)
    if depth == 16:
        values = rows_bytes.reshape(rows, -1).view(">u2")[:, :width * samples]
        return values.astype(numpy.uint16).reshape(rows, width, samples)
    bits = numpy.unpackbits(rows_bytes, axis=1).reshape(rows, -1, depth)
    weights = (1 << numpy.arange(depth - 1, -1, -1)).astype(numpy.uint16)
    values = (bits.astype(numpy.uint16) * weights).sum(axis=2, dtype=numpy.uint16)
    return values[:, :width * samples].reshape(rows, width, samples)


def _png_read(data, where):
    """The header fields and the raw sample values ``(height, width, samples)`` of a PNG."""
    header, palette, transparency, idat = None, None, None, []
    for kind, body in _png_chunks(data, where):
        if kind == b"IHDR":
            if len(body) != 13:
                raise _invalid(f"{where}: bad PNG IHDR chunk of {len(body)} bytes")
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = numpy.frombuffer(body, numpy.uint8).reshape(-1, 3)
        elif kind == b"tRNS":
            transparency = body
        elif kind == b"IDAT":
            idat.append(body)
    if header is None:
        raise _invalid(f"{where}: the PNG has no IHDR chunk")
    width, height, depth, color, compression, filtering, interlace = header
    if color not in _PNG_TYPES or depth not in _PNG_TYPES[color][1]:
        raise _invalid(f"{where}: unsupported PNG colour type {color} with bit depth {depth}")
    if width == 0 or height == 0 or compression or filtering or interlace not in (0, 1):
        raise _invalid(f"{where}: bad PNG header (size {width}x{height}, compression "
                       f"{compression}, filter method {filtering}, interlace {interlace})")
    if color == 3 and palette is None:
        raise _invalid(f"{where}: a palette PNG without a PLTE chunk")
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as exc:
        raise _invalid(f"{where}: corrupt PNG image data: {exc}") from None
    samples = _PNG_TYPES[color][0]
    unit = max(1, samples * depth // 8)
    image = numpy.zeros((height, width, samples), numpy.uint16)
    passes = _ADAM7 if interlace else ((0, 0, 1, 1),)
    offset = 0
    for x0, y0, dx, dy in passes:
        pass_w, pass_h = -(-(width - x0) // dx), -(-(height - y0) // dy)
        if pass_w <= 0 or pass_h <= 0:
            continue
        stride = -(-pass_w * samples * depth // 8)
        rows, offset = _unfilter(raw, offset, pass_h, stride, unit, where)
        image[y0::dy, x0::dx] = _unpack(rows, pass_w, samples, depth)
    return dict(color=color, depth=depth, palette=palette, transparency=transparency,
                image=image)


def _png_colour_and_alpha(info, where):
    """``(colour, alpha, depth)``: colour ``(h, w, 1 or 3)`` and alpha ``(h, w, 1)`` or None, at
    depth 8 or 16, after libpng's expansion of palettes, small grey depths and tRNS."""
    image, depth, color, trns = info["image"], info["depth"], info["color"], info["transparency"]
    if color == 3:
        palette, index = info["palette"], image[..., 0]
        if int(index.max()) >= len(palette):
            raise _invalid(f"{where}: a PNG palette index {int(index.max())} is past the "
                           f"{len(palette)} palette entries")
        alpha = None
        if trns is not None:
            table = numpy.full(len(palette), 255, numpy.uint16)
            table[:min(len(trns), len(palette))] = numpy.frombuffer(trns, numpy.uint8)[
                :len(palette)]
            alpha = table[index][..., None]
        return palette.astype(numpy.uint16)[index], alpha, 8
    colour = image[..., :1] if color in (0, 4) else image[..., :3]
    alpha = image[..., -1:] if color in (4, 6) else None
    if trns is not None and color in (0, 2):
        key = numpy.frombuffer(trns, ">u2")[:colour.shape[-1]].astype(numpy.uint16)
        opaque = ~numpy.all(colour == key, axis=-1, keepdims=True)
        alpha = numpy.where(opaque, (1 << depth) - 1, 0).astype(numpy.uint16)
    if depth < 8:       # libpng's png_set_expand_gray_1_2_4_to_8 rescales to 0..255
        scale = 255 // ((1 << depth) - 1)
        colour = colour * scale
        alpha = None if alpha is None else alpha * (255 // ((1 << depth) - 1))
        depth = 8
    return colour, alpha, depth


def _rgb_to_gray(colour, depth):
    """libpng's ``png_set_rgb_to_gray(1, 0.299, 0.587)`` without gamma: 15-bit fixed-point
    weights, truncated; grey pixels stay exact."""
    red, green = 9797, 19234          # int(0.299 * 32768), int(0.587 * 32768)
    c = colour.astype(numpy.uint32)
    gray = (red * c[..., 0] + green * c[..., 1] + (32768 - red - green) * c[..., 2]) >> 15
    same = (c[..., 0] == c[..., 1]) & (c[..., 0] == c[..., 2])
    return numpy.where(same, c[..., 0], gray).astype(numpy.uint16)[..., None]


def _png_to_image(info, channels, dtype, where):
    """TF's channel and depth conversions (libpng transforms) of a decoded PNG."""
    colour, alpha, depth = _png_colour_and_alpha(info, where)
    if channels == 0:
        channels = (4 if info["transparency"] is not None else 3) if info["color"] == 3 \
            else _PNG_TYPES[info["color"]][0]
    if channels % 2:
        alpha = None
    elif alpha is None:
        alpha = numpy.full(colour.shape[:2] + (1,), (1 << depth) - 1, numpy.uint16)
    if channels < 3 and colour.shape[-1] == 3:
        colour = _rgb_to_gray(colour, depth)
    elif channels >= 3 and colour.shape[-1] == 1:
        colour = numpy.repeat(colour, 3, axis=-1)
    out = colour if alpha is None else numpy.concatenate([colour, alpha], axis=-1)
    if dtype == dtypes.uint8:
        return (out >> 8 if depth == 16 else out).astype(numpy.uint8)
    return (out * 257 if depth == 8 else out).astype(numpy.uint16)


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """Decode a PNG image to ``(height, width, channels)`` uint8 or uint16 values.

    ``channels`` 0 keeps the image's own (palette images give RGB, or RGBA with a tRNS chunk),
    1 grey, 2 grey + alpha, 3 RGB, 4 RGBA. 16-bit images decoded as uint8 keep the high byte;
    8-bit images decoded as uint16 are scaled by 257."""
    where = "decode_png"
    channels = _channels(channels, (0, 1, 3, 4), where)
    dtype = _out_dtype(dtype, (dtypes.uint8, dtypes.uint16), where)
    info = _png_read(_contents(contents, where), where)
    return _tensor(_png_to_image(info, channels, dtype, where))


# --- PNG writing -------------------------------------------------------------------------

def _chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _filter_rows(raw, unit):
    """Each row filtered with the filter whose output has the smallest sum of absolute
    (signed) bytes: libpng's default heuristic. ``raw`` is ``(rows, stride)`` uint8."""
    x = raw.astype(numpy.int16)
    left = numpy.zeros_like(x)
    left[:, unit:] = x[:, :-unit]
    up = numpy.zeros_like(x)
    up[1:] = x[:-1]
    upper_left = numpy.zeros_like(x)
    upper_left[1:, unit:] = x[:-1, :-unit]
    pa, pb, pc = (numpy.abs(up - upper_left), numpy.abs(left - upper_left),
                  numpy.abs(left + up - 2 * upper_left))
    paeth = numpy.where((pa <= pb) & (pa <= pc), left, numpy.where(pb <= pc, up, upper_left))
    candidates = numpy.stack([x, x - left, x - up, x - (left + up) // 2, x - paeth]) & 255
    signed = numpy.where(candidates < 128, candidates, 256 - candidates)
    best = numpy.argmin(signed.sum(axis=2), axis=0)
    rows = candidates[best, numpy.arange(x.shape[0])].astype(numpy.uint8)
    return numpy.concatenate([best.astype(numpy.uint8)[:, None], rows], axis=1)


def encode_png(image, compression=-1, name=None):
    """Encode a ``(height, width, channels)`` uint8 or uint16 image (1 grey, 2 grey + alpha,
    3 RGB, 4 RGBA channels) as PNG; ``compression`` -1 (zlib's default) or 0-9."""
    where = "encode_png"
    if state.tracer is not None:
        state.tracer.run_eagerly(f"it calls tf.io.{where}, which runs in Python")
    x = image if isinstance(image, Tensor) else Tensor(B.xp.asarray(numpy.asarray(image)))
    if x.dtype not in (dtypes.uint8, dtypes.uint16):
        raise TypeError(f"{where}: image must be uint8 or uint16, got {x.dtype.name}")
    if x.ndim != 3 or x.shape[2] not in (1, 2, 3, 4):
        raise _invalid(f"{where}: image must have shape (height, width, channels) with 1-4 "
                       f"channels, got shape {tuple(x.shape)}")
    compression = int(compression)
    if not -1 <= compression <= 9:
        raise _invalid(f"{where}: compression must be -1 (default) or 0-9, got {compression}")
    height, width, channels = (int(d) for d in x.shape)
    values = B.to_numpy(x._value)
    depth = 8 * values.dtype.itemsize
    raw = values.astype(">u2" if depth == 16 else numpy.uint8).reshape(height, -1)
    raw = raw.view(numpy.uint8).reshape(height, -1) if depth == 16 else raw
    color = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    header = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0)
    if height * width == 0:
        raise _invalid(f"{where}: cannot encode an empty image of shape {tuple(x.shape)}")
    filtered = _filter_rows(raw, channels * depth // 8)
    data = (_PNG_SIGNATURE + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(filtered.tobytes(), compression))
            + _chunk(b"IEND", b""))
    out = numpy.empty((), OBJECT)
    out[()] = data
    return string_tensor(out)


# --- BMP ---------------------------------------------------------------------------------

def decode_bmp(contents, channels=0, name=None):
    """Decode an uncompressed 24-bit (BGR) or 32-bit (BGRA) BMP, bottom-up or top-down, to
    ``(height, width, channels)`` uint8 RGB / RGBA. ``channels`` 0 keeps the file's 3 or 4;
    3 drops the alpha, 4 adds an opaque one (255)."""
    where = "decode_bmp"
    channels = _channels(channels, (0, 3, 4), where)
    data = _contents(contents, where)
    if len(data) < 26 or data[:2] != b"BM":
        raise _invalid(f"{where}: the contents are not a BMP image (no 'BM' header)")
    offset, header_size = struct.unpack("<II", data[10:18])
    if header_size < 40 or len(data) < 14 + header_size:
        raise _invalid(f"{where}: unsupported BMP header of {header_size} bytes (expected a "
                       f"BITMAPINFOHEADER or later, at least 40 bytes)")
    width, height, _, bpp, compression = struct.unpack("<iiHHI", data[18:34])
    if bpp not in (24, 32) or compression not in (0, 3):
        raise _invalid(f"{where}: only uncompressed 24- and 32-bit BMP images are supported, "
                       f"got {bpp} bits per pixel with compression {compression}")
    file_channels = bpp // 8
    top_down, height = height < 0, abs(height)
    if width <= 0 or height == 0:
        raise _invalid(f"{where}: bad BMP size {width}x{height}")
    stride = (width * file_channels + 3) // 4 * 4
    if offset + stride * height > len(data):
        raise _invalid(f"{where}: the BMP pixel data is truncated ({len(data)} bytes for a "
                       f"{width}x{height} image at offset {offset})")
    rows = numpy.frombuffer(data, numpy.uint8, stride * height, offset).reshape(height, stride)
    pixels = rows[:, :width * file_channels].reshape(height, width, file_channels)
    if not top_down:
        pixels = pixels[::-1]
    rgb = pixels[..., [2, 1, 0, 3][:file_channels]]    # BGR(A) -> RGB(A)
    if channels == 3:
        rgb = rgb[..., :3]
    elif channels == 4 and file_channels == 3:
        rgb = numpy.concatenate([rgb, numpy.full(rgb.shape[:2] + (1,), 255, numpy.uint8)], 2)
    return _tensor(rgb)


# --- GIF ---------------------------------------------------------------------------------

def _gif_sub_blocks(data, pos, where):
    """The concatenated data sub-blocks starting at ``pos`` and the position after them."""
    parts = []
    while True:
        if pos >= len(data):
            raise _invalid(f"{where}: the GIF data is truncated")
        size = data[pos]
        if size == 0:
            return b"".join(parts), pos + 1
        parts.append(data[pos + 1:pos + 1 + size])
        pos += 1 + size


def _lzw_decode(data, min_size, count, where):
    """GIF's variable-width LZW (codes packed least significant bit first)."""
    if not 2 <= min_size <= 11:
        raise _invalid(f"{where}: bad GIF LZW minimum code size {min_size}")
    clear, end = 1 << min_size, (1 << min_size) + 1
    table = [bytes([i]) for i in range(clear)] + [b"", b""]
    size, buffer, bits, pos = min_size + 1, 0, 0, 0
    out, prev = bytearray(), None
    while len(out) < count:
        while bits < size and pos < len(data):
            buffer |= data[pos] << bits
            bits, pos = bits + 8, pos + 1
        if bits < size:
            break
        code = buffer & ((1 << size) - 1)
        buffer, bits = buffer >> size, bits - size
        if code == clear:
            del table[end + 1:]
            size, prev = min_size + 1, None
            continue
        if code == end:
            break
        if code < len(table):
            entry = table[code]
            if prev is not None:
                table.append(prev + entry[:1])
        elif code == len(table) and prev is not None:
            entry = prev + prev[:1]
            table.append(entry)
        else:
            raise _invalid(f"{where}: corrupt GIF image data (LZW code {code})")
        out += entry
        prev = entry
        if len(table) == 1 << size and size < 12:
            size += 1
    if len(out) < count:
        raise _invalid(f"{where}: the GIF image data is truncated ({len(out)} of {count} "
                       f"pixels)")
    return numpy.frombuffer(bytes(out[:count]), numpy.uint8)


def _color_table(data, pos, packed, where):
    n = 3 << ((packed & 7) + 1)
    if pos + n > len(data):
        raise _invalid(f"{where}: the GIF colour table is truncated")
    return numpy.frombuffer(data, numpy.uint8, n, pos).reshape(-1, 3), pos + n


def _gif_parse(data, where):
    """``[(left, top, index (h, w), colour table, transparent index or None)]`` per frame."""
    if data[:6] not in (b"GIF87a", b"GIF89a") or len(data) < 13:
        raise _invalid(f"{where}: the contents are not a GIF image (no GIF87a/GIF89a header)")
    packed = data[10]
    pos, global_table = 13, None
    if packed & 0x80:
        global_table, pos = _color_table(data, pos, packed, where)
    frames, transparent = [], None
    while pos < len(data) and data[pos] != 0x3B:
        block = data[pos]
        if block == 0x21:
            label = data[pos + 1] if pos + 1 < len(data) else None
            body, pos = _gif_sub_blocks(data, pos + 2, where)
            if label == 0xF9 and len(body) >= 4:
                transparent = body[3] if body[0] & 1 else None
            continue
        if block != 0x2C or pos + 11 > len(data):
            raise _invalid(f"{where}: corrupt GIF data (block 0x{block:02x} at byte {pos})")
        left, top, w, h, flags = struct.unpack("<HHHHB", data[pos + 1:pos + 10])
        pos += 10
        table = global_table
        if flags & 0x80:
            table, pos = _color_table(data, pos, flags, where)
        if table is None:
            raise _invalid(f"{where}: a GIF frame has no colour map")
        min_size = data[pos]
        body, pos = _gif_sub_blocks(data, pos + 1, where)
        index = _lzw_decode(body, min_size, w * h, where).reshape(h, w)
        if flags & 0x40:   # interlaced: rows stored in four passes
            order = numpy.concatenate([numpy.arange(s, h, d) for s, d in
                                       ((0, 8), (4, 8), (2, 4), (1, 2))])
            index = index[numpy.argsort(order, kind="stable")]
        frames.append((left, top, index, table, transparent))
        transparent = None
    if not frames:
        raise _invalid(f"{where}: the GIF has no frames")
    return frames


def _gif_frames(data, where):
    """The frames of a GIF composed as TF composes them (``(n, h, w, 3)`` uint8): the canvas is
    as large as the largest frame, each frame starts from the previous one and transparent
    pixels keep it (black in the first frame)."""
    parsed = _gif_parse(data, where)
    height = max(index.shape[0] for _, _, index, _, _ in parsed)
    width = max(index.shape[1] for _, _, index, _, _ in parsed)
    frames, canvas = [], numpy.zeros((height, width, 3), numpy.uint8)
    for left, top, index, table, transparent in parsed:
        canvas = canvas.copy()
        window = index[:max(0, min(index.shape[0], height - top)),
                       :max(0, min(index.shape[1], width - left))]
        draw = window != transparent if transparent is not None else numpy.ones(window.shape,
                                                                                bool)
        if int(window[draw].max(initial=0)) >= len(table):
            raise _invalid(f"{where}: a GIF colour index is outside the {len(table)}-entry "
                           f"colour map")
        region = canvas[top:top + window.shape[0], left:left + window.shape[1]]
        region[draw] = table[window[draw]]
        frames.append(canvas)
    return numpy.stack(frames)


def decode_gif(contents, name=None):
    """Decode every frame of a GIF to ``(num_frames, height, width, 3)`` uint8 RGB."""
    where = "decode_gif"
    return _tensor(_gif_frames(_contents(contents, where), where))


# --- format dispatch ---------------------------------------------------------------------

def _is_jpeg_bytes(data):
    return data[:3] == _JPEG_MAGIC


def is_jpeg(contents, name=None):
    """True when ``contents`` starts with the JPEG magic bytes (a scalar bool tensor)."""
    return _tensor(numpy.array(_is_jpeg_bytes(_contents(contents, "is_jpeg"))))


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """Not available: raises ``tf.errors.UnimplementedError`` saying what to use instead."""
    raise errors.UnimplementedError(None, None, f"decode_jpeg: {_NO_JPEG}")


def encode_jpeg(image, *args, **kwargs):
    """Not available: raises ``tf.errors.UnimplementedError`` saying what to use instead."""
    raise errors.UnimplementedError(None, None, f"encode_jpeg: {_NO_JPEG}")


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None,
                 expand_animations=True):
    """Decode a PNG, BMP or GIF image, the format told by its first bytes. PNG/BMP give
    ``(height, width, channels)``; GIF gives ``(frames, height, width, 3)``, or its first
    frame when ``expand_animations`` is False. Other dtypes than uint8 rescale as
    ``tf.image.convert_image_dtype`` does (PNGs are read at 16 bits for them, as in TF)."""
    from .image_ops import convert_image_dtype
    where = "decode_image"
    channels = _channels(channels, (0, 1, 3, 4), where)
    target = dtypes.as_dtype(dtype)
    data = _contents(contents, where)
    if data.startswith(_PNG_SIGNATURE):
        native = dtypes.uint8 if target == dtypes.uint8 else dtypes.uint16
        image = _png_to_image(_png_read(data, where), channels, native, where)
    elif data[:2] == b"BM":
        image = B.to_numpy(decode_bmp(data, channels)._value)
    elif data[:6] in (b"GIF87a", b"GIF89a"):
        if channels not in (0, 3):
            raise _invalid(f"{where}: GIF images have 3 channels, got channels={channels}")
        image = _gif_frames(data, where)
        image = image if expand_animations else image[0]
    elif _is_jpeg_bytes(data):
        raise errors.UnimplementedError(None, None, f"{where}: the contents are a JPEG image; "
                                                    f"{_NO_JPEG}")
    else:
        raise _invalid(f"{where}: unknown image format (expected PNG, BMP or GIF data; the "
                       f"contents start with {data[:8]!r})")
    return convert_image_dtype(_tensor(image), target)


def install(tf):
    """Set the codecs on ``tf.io`` and ``tf.image`` (as TF has them in both)."""
    for name in __all__:
        setattr(tf.io, name, globals()[name])
        setattr(tf.image, name, globals()[name])
