"""MNIST loading: data_dir, cache and downloads against a local HTTP server."""

import hashlib
import os
import re
import socket
import urllib.request

import numpy as np
import pytest

from datasets import DatasetError, download, mnist, read_idx, write_idx
from tests.local_http import serve, without_proxies

FILES = mnist.FILES


@pytest.fixture(scope="module")
def server():
    with serve() as srv:
        yield srv


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    without_proxies(monkeypatch)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Small MNIST-like gz files: {name: (bytes, array)}."""
    directory = tmp_path_factory.mktemp("src")
    rng = np.random.default_rng(0)
    arrays = [rng.integers(0, 256, (6, 28, 28), dtype=np.uint8),
              rng.integers(0, 10, 6, dtype=np.uint8),
              rng.integers(0, 256, (3, 28, 28), dtype=np.uint8),
              rng.integers(0, 10, 3, dtype=np.uint8)]
    out = {}
    for name, array in zip(FILES, arrays):
        write_idx(directory / name, array)
        out[name] = ((directory / name).read_bytes(), array)
    return out


@pytest.fixture
def env(server, files, monkeypatch, tmp_path):
    """Fresh routes and log, checksums of the small files, and a cache dir."""
    server.routes.clear()
    server.log.clear()
    monkeypatch.setattr(mnist, "SHA256", {n: hashlib.sha256(b).hexdigest()
                                          for n, (b, _) in files.items()})
    base = f"http://127.0.0.1:{server.server_address[1]}"
    return {"m1": base + "/m1/", "m2": base + "/m2", "cache": tmp_path / "cache"}


def _serve(server, files, mirror, behaviour, names=FILES):
    for name in names:
        body = files[name][0]
        if behaviour == "bad":
            body = body[:-1] + bytes([body[-1] ^ 1])
        server.routes[f"/{mirror}/{name}"] = (behaviour, body)


def _load(env, **kw):
    kw.setdefault("mirrors", [env["m1"], env["m2"]])
    return mnist.load_data(cache_dir=env["cache"], retries=1, backoff=0, timeout=5, **kw)


def _check(result, files):
    (x_train, y_train), (x_test, y_test) = result
    for got, name in zip((x_train, y_train, x_test, y_test), FILES):
        np.testing.assert_array_equal(got, files[name][1])
        assert got.dtype == np.uint8


def _assert_clean(cache, expected=FILES):
    """Only complete files, under their final names, are in the cache."""
    assert sorted(os.listdir(cache)) == sorted(expected)


def _hits(server, mirror):
    return [p for p in server.log if p.startswith(f"/{mirror}/")]


def test_download_from_first_mirror(server, files, env):
    _serve(server, files, "m1", "ok")
    _check(_load(env), files)
    _assert_clean(env["cache"])
    assert sorted(server.log) == sorted(f"/m1/{n}" for n in FILES)
    # A second load is served from the cache, without any request.
    server.log.clear()
    _check(_load(env), files)
    assert server.log == []


def test_checksum_mismatch_falls_back(server, files, env):
    _serve(server, files, "m1", "bad")
    _serve(server, files, "m2", "ok")
    _check(_load(env), files)
    _assert_clean(env["cache"])
    assert len(_hits(server, "m1")) == 4  # a bad checksum is not retried on the same mirror
    assert len(_hits(server, "m2")) == 4


def test_truncated_transfer_is_retried_then_falls_back(server, files, env):
    _serve(server, files, "m1", "truncate")
    _serve(server, files, "m2", "ok")
    _check(_load(env), files)
    _assert_clean(env["cache"])
    assert len(_hits(server, "m1")) == 8  # 1 + retries=1 attempts per file
    assert len(_hits(server, "m2")) == 4


def test_404_falls_back(server, files, env):
    _serve(server, files, "m2", "ok")
    _check(_load(env), files)
    _assert_clean(env["cache"])
    assert len(_hits(server, "m1")) == 4


def _refused_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


def test_all_mirrors_fail(server, files, env):
    _serve(server, files, "m1", "truncate")
    _serve(server, files, "m2", "500")
    mirrors = [env["m1"], env["m2"], _refused_url()]
    with pytest.raises(DatasetError) as info:
        _load(env, mirrors=mirrors)
    message = str(info.value)
    assert f"put them in the directory\n  {env['cache']}\n" in message
    for name in FILES:
        assert name in message and mnist.SHA256[name] in message
    assert "500" in message and "incomplete" in message
    _assert_clean(env["cache"], [])


def test_partial_failure_lists_only_missing_files(server, files, env):
    _serve(server, files, "m1", "ok", names=FILES[:2])
    with pytest.raises(DatasetError) as info:
        _load(env)
    message = str(info.value)
    _assert_clean(env["cache"], FILES[:2])
    assert FILES[0] not in message and FILES[1] not in message
    assert FILES[2] in message and FILES[3] in message
    # Once the rest is available, the cached part is reused.
    server.log.clear()
    _serve(server, files, "m1", "ok")
    _check(_load(env), files)
    assert sorted(server.log) == sorted(f"/m1/{n}" for n in FILES[2:])


def test_corrupt_cache_file_is_replaced(server, files, env):
    _serve(server, files, "m1", "ok")
    os.makedirs(env["cache"])
    (env["cache"] / FILES[1]).write_bytes(b"garbage")
    for name in (FILES[0], FILES[2], FILES[3]):
        (env["cache"] / name).write_bytes(files[name][0])
    _check(_load(env), files)
    assert server.log == [f"/m1/{FILES[1]}"]
    _assert_clean(env["cache"])


def test_data_dir_needs_no_network(server, files, env, tmp_path, monkeypatch):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    for name, (body, _) in files.items():
        (data_dir / name).write_bytes(body)

    def no_network(*args, **kwargs):
        raise AssertionError("network used")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    _check(_load(env, data_dir=data_dir), files)
    assert server.log == [] and not env["cache"].exists()


def test_download_false(server, files, env):
    _serve(server, files, "m1", "ok")
    with pytest.raises(DatasetError, match=re.escape(str(env["cache"]))):
        _load(env, download=False)
    assert server.log == []


def test_cache_directory(monkeypatch, tmp_path):
    monkeypatch.delenv(mnist.CACHE_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert mnist.cache_directory() == str(tmp_path / ".cache/minitf/datasets/mnist")
    monkeypatch.setenv(mnist.CACHE_ENV, str(tmp_path / "c"))
    assert mnist.cache_directory() == str(tmp_path / "c" / "mnist")
    assert mnist.cache_directory(tmp_path / "x") == str(tmp_path / "x")


def test_published_checksums():
    for name in FILES:
        assert re.fullmatch("[0-9a-f]{64}", mnist.SHA256[name])
    assert mnist.SHA256["t10k-labels-idx1-ubyte.gz"] == (
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6")


def test_fetch_existing_file_is_not_downloaded(server, files, tmp_path):
    name = FILES[3]
    body = files[name][0]
    (tmp_path / name).write_bytes(body)
    path = download.fetch(name, hashlib.sha256(body).hexdigest(), ["http://127.0.0.1:9/"],
                          tmp_path, retries=0, backoff=0, timeout=5)
    assert path == str(tmp_path / name)
    np.testing.assert_array_equal(read_idx(path), files[name][1])


def test_fetch_error_lists_attempts(server, tmp_path):
    base = f"http://127.0.0.1:{server.server_address[1]}"
    server.routes.clear()
    with pytest.raises(download.FetchError) as info:
        download.fetch("x.gz", "0" * 64, [base + "/a", base + "/b/"], tmp_path,
                       retries=3, backoff=0, timeout=5)
    assert [url for url, _ in info.value.attempts] == [base + "/a/x.gz", base + "/b/x.gz"]
    assert os.listdir(tmp_path) == []
