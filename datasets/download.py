"""Downloading a file from a list of mirrors, with retries and SHA-256 checks."""

import hashlib
import http.client
import os
import time
import urllib.error
import urllib.request

from ._fsutil import create_temp, remove_quietly
from .errors import DatasetError

__all__ = ["fetch", "download_url", "FetchError", "sha256_file"]

_CHUNK = 1 << 16
_USER_AGENT = "minitf-datasets/1"


class FetchError(DatasetError):
    """Every mirror failed.  ``attempts`` lists ``(url, reason)`` per failed try."""

    def __init__(self, message, attempts):
        super().__init__(message)
        self.attempts = attempts


class _Permanent(Exception):
    """A failure that retrying the same URL will not fix (404, bad checksum)."""


def sha256_file(path):
    """Hex SHA-256 of the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _download(url, tmp_path, expected, timeout, algorithm="sha256"):
    """Stream ``url`` into ``tmp_path``; raise unless the bytes are complete and (when
    ``expected`` is given) their ``algorithm`` digest matches it."""
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        exc.close()
        # 408 / 429 / 5xx are worth retrying; other HTTP errors are not.
        if exc.code in (408, 429) or exc.code >= 500:
            raise
        raise _Permanent(f"HTTP {exc.code} {exc.reason}") from exc
    digest = hashlib.new(algorithm)
    received = 0
    with response, open(tmp_path, "wb") as out:
        length = response.headers.get("Content-Length")
        for chunk in iter(lambda: response.read(_CHUNK), b""):
            out.write(chunk)
            digest.update(chunk)
            received += len(chunk)
    # http.client does not flag a body cut short when read in chunks.
    if length is not None and length.isdigit() and received != int(length):
        raise OSError(f"transfer incomplete: got {received} of {length} bytes")
    got = digest.hexdigest()
    if expected is not None and got != expected:
        raise _Permanent(f"checksum mismatch: got {algorithm} {got}, expected {expected} "
                         f"({received} bytes received)")


def download_url(url, path, expected_hash=None, hash_algorithm="sha256", retries=2,
                 timeout=30.0, backoff=0.5, attempts=None):
    """Download ``url`` to ``path`` (checked against ``expected_hash`` when given).

    Retries and temporary files work as in ``fetch``: the bytes go to a hidden temporary
    file next to ``path``, renamed only once complete and verified. Returns True on success;
    on failure returns False after appending ``(url, reason)`` pairs to ``attempts``.
    """
    attempts = [] if attempts is None else attempts
    directory, name = os.path.split(os.fspath(path))
    expected = None if expected_hash is None else expected_hash.lower()
    for attempt in range(1 + max(0, retries)):
        if attempt:
            time.sleep(backoff * 2 ** (attempt - 1))
        fd, tmp = create_temp(directory or ".", name, suffix=".part")
        os.close(fd)
        try:
            _download(url, tmp, expected, timeout, hash_algorithm)
            os.replace(tmp, path)
            return True
        except _Permanent as exc:
            attempts.append((url, str(exc)))
            return False
        except ValueError as exc:  # malformed URL: retrying cannot help
            attempts.append((url, f"{type(exc).__name__}: {exc}"))
            return False
        except (OSError, http.client.HTTPException) as exc:  # network trouble
            attempts.append((url, f"attempt {attempt + 1}: {type(exc).__name__}: {exc}"))
        finally:
            remove_quietly(tmp)
    return False


def fetch(filename, sha256, mirrors, dest_dir, retries=2, timeout=30.0, backoff=0.5):
    """Make ``dest_dir/filename`` a verified copy of the file, downloading if needed.

    If the file already exists with the right SHA-256 it is returned as is.
    Otherwise each mirror is tried in order with URL ``mirror + filename``
    (a missing trailing ``/`` on the mirror is added).  Per mirror there are
    up to ``1 + retries`` attempts, sleeping ``backoff * 2**k`` seconds
    before retry ``k``; only transient failures (network errors, timeouts,
    short transfers, HTTP 408/429/5xx) are retried, while a 4xx answer or a
    checksum mismatch moves on to the next mirror at once.

    Bytes go to a hidden temporary file in ``dest_dir`` and are renamed to
    ``filename`` only after the checksum matches, so a partial or wrong file
    never appears under the final name; the temporary file is removed on any
    failure.  ``timeout`` (seconds) applies to connecting and to each read.

    Returns the path of the file.  Raises ``FetchError`` (a DatasetError) if
    every attempt on every mirror fails.
    """
    if isinstance(mirrors, str):
        mirrors = [mirrors]
    sha256 = sha256.lower()
    dest_dir = os.fspath(dest_dir)
    final = os.path.join(dest_dir, filename)
    if os.path.isfile(final) and sha256_file(final) == sha256:
        return final
    os.makedirs(dest_dir, exist_ok=True)
    attempts = []
    for mirror in mirrors:
        url = mirror if mirror.endswith("/") else mirror + "/"
        if download_url(url + filename, final, sha256, "sha256", retries, timeout, backoff,
                        attempts):
            return final
    tried = "\n".join(f"  {url}: {reason}" for url, reason in attempts) or "  (no mirrors given)"
    raise FetchError(f"could not download {filename}; attempts:\n{tried}", attempts)
