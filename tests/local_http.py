"""A file server on 127.0.0.1 for download tests (tests never touch the network).

``server.routes[path]`` is the body (bytes) or ``(behaviour, body)`` with behaviour ``"ok"``,
``"404"``, ``"500"`` or ``"truncate"`` (promise the whole body, send half, hang up); each
request path is appended to ``server.log``; ``server.base`` is the server's URL.
"""
import contextlib
import http.server
import threading

PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                   "ALL_PROXY")


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.server.log.append(self.path)
        route = self.server.routes.get(self.path, ("404", b""))
        behaviour, body = route if isinstance(route, tuple) else ("ok", route)
        if behaviour in ("404", "500"):
            self.send_error(int(behaviour))
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if behaviour == "truncate":
            self.wfile.write(body[:len(body) // 2])
            self.close_connection = True
        else:
            self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    srv.routes, srv.log = {}, []
    srv.base = f"http://127.0.0.1:{srv.server_address[1]}"
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def without_proxies(monkeypatch):
    """Requests to 127.0.0.1 must not go through a proxy set in the environment."""
    for var in PROXY_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "*")
