"""FarmHash ``Fingerprint64`` (farmhash-na ``Hash64``) of short byte strings, vectorised with
numpy ``uint64`` arithmetic (wrapping, as the C++ code). TF's ``to_hash_bucket_fast`` is this
fingerprint modulo the bucket count, so Keras' Hashing and IntegerLookup OOV indices of
integers (hashed as their decimal strings) are reproduced. Strings up to 32 bytes, which
covers every int64."""
import numpy as np

_K0 = np.uint64(0xc3a5c85c97cb3127)
_K1 = np.uint64(0xb492b66fbe98f273)
_K2 = np.uint64(0x9ae16a3b2f90404f)


def _u(value):
    return np.uint64(value)


def _rotate(v, shift):
    return (v >> _u(shift)) | (v << _u(64 - shift))


def _shift_mix(v):
    return v ^ (v >> _u(47))


def _hash_len16(u, v, mul):
    a = (u ^ v) * mul
    a ^= a >> _u(47)
    b = (v ^ a) * mul
    b ^= b >> _u(47)
    return b * mul


def _fetch(rows, offset, width):
    """Little-endian ``uint<8*width>`` at byte ``offset`` of each row, as uint64."""
    chunk = np.ascontiguousarray(rows[:, offset:offset + width])
    return chunk.view("<u8" if width == 8 else "<u4")[:, 0].astype(np.uint64)


def _hash_rows(rows, n):
    """Fingerprint64 of rows of a uint8 matrix, each string being the first ``n`` bytes."""
    count = rows.shape[0]
    length = _u(n)
    if n > 32:
        raise ValueError(f"fingerprint64: strings longer than 32 bytes are not supported "
                         f"(got {n})")
    if n > 16:
        mul = _K2 + length * _u(2)
        a = _fetch(rows, 0, 8) * _K1
        b = _fetch(rows, 8, 8)
        c = _fetch(rows, n - 8, 8) * mul
        d = _fetch(rows, n - 16, 8) * _K2
        return _hash_len16(_rotate(a + b, 43) + _rotate(c, 30) + d,
                           a + _rotate(b + _K2, 18) + c, mul)
    if n >= 8:
        mul = _K2 + length * _u(2)
        a = _fetch(rows, 0, 8) + _K2
        b = _fetch(rows, n - 8, 8)
        c = _rotate(b, 37) * mul + a
        d = (_rotate(a, 25) + b) * mul
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = _K2 + length * _u(2)
        a = _fetch(rows, 0, 4)
        return _hash_len16(length + (a << _u(3)), _fetch(rows, n - 4, 4), mul)
    if n > 0:
        a = rows[:, 0].astype(np.uint64)
        b = rows[:, n >> 1].astype(np.uint64)
        c = rows[:, n - 1].astype(np.uint64)
        y = a + (b << _u(8))
        z = length + (c << _u(2))
        return _shift_mix((y * _K2) ^ (z * _K0)) * _K2
    return np.full(count, _K2, np.uint64)


def fingerprint64(strings):
    """Fingerprint64 of each of ``strings`` (bytes or str, UTF-8 encoded) as a uint64 array."""
    encoded = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in strings]
    out = np.zeros(len(encoded), np.uint64)
    width = max((len(s) for s in encoded), default=0)
    rows = np.zeros((len(encoded), max(width, 1)), np.uint8)
    for i, s in enumerate(encoded):
        rows[i, :len(s)] = np.frombuffer(s, np.uint8)
    lengths = np.array([len(s) for s in encoded], np.int64)
    with np.errstate(over="ignore"):
        for n in np.unique(lengths):
            sel = lengths == n
            out[sel] = _hash_rows(rows[sel], int(n))
    return out


def fingerprint64_of_ints(values):
    """Fingerprint64 of the decimal strings of integer ``values`` (any shape)."""
    values = np.asarray(values, np.int64)
    text = values.reshape(-1).astype("S20")        # ASCII decimal, zero padded on the right
    rows = text.view(np.uint8).reshape(-1, 20) if text.size else np.zeros((0, 20), np.uint8)
    lengths = np.char.str_len(text) if text.size else np.zeros(0, np.int64)
    out = np.zeros(text.size, np.uint64)
    with np.errstate(over="ignore"):
        for n in np.unique(lengths):
            sel = lengths == n
            out[sel] = _hash_rows(rows[sel], int(n))
    return out.reshape(values.shape)
