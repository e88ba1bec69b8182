"""A loopback HTTP server that answers a script of canned answers, for the retry rules."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional


class Answer:
    def __init__(
        self,
        status: int,
        body: Any = None,
        *,
        headers: Optional[Dict[str, str]] = None,
        raw: Optional[bytes] = None,
        delay: float = 0.0,
    ) -> None:
        self.status = status
        self.body = body
        self.headers = headers or {}
        self.raw = raw
        self.delay = delay


def error_body(code: str, retryable: bool, message: str = "canned") -> Dict[str, Any]:
    return {"error": {"code": code, "message": message, "doc_url": f"http://x/docs/errors#{code}", "retryable": retryable}}


class FaultServer:
    """Answers each request with the next answer of ``script`` (the last one repeats)."""

    def __init__(self, script: List[Answer]) -> None:
        self.script = list(script)
        self.requests: List[Dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                server.requests.append({
                    "method": self.command,
                    "path": self.path,
                    "headers": dict(self.headers),
                    "body": json.loads(raw) if raw else None,
                })
                answer = server.script.pop(0) if len(server.script) > 1 else server.script[0]
                if answer.delay:
                    time.sleep(answer.delay)
                payload = answer.raw if answer.raw is not None else json.dumps(answer.body or {}).encode()
                try:
                    self.send_response(answer.status)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
