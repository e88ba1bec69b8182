"""One HTTP exchange with the service: JSON in and out, no redirects followed, every
failure mapped to a typed error (the service's code, or a client-side code with status 0)."""
from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from typing import Any, Dict, Mapping, Optional, Tuple

from .errors import ServiceError, client_error, error_from_body


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


_opener = urllib.request.build_opener(_NoRedirects())


def _retry_after(headers: Any) -> Optional[float]:
    value = headers.get("Retry-After") if headers is not None else None
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def exchange(
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Optional[Any] = None,
    timeout: float,
) -> Tuple[int, Dict[str, Any]]:
    """The decoded JSON answer of one request; raises the typed error of a failure."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, method=method, headers=dict(headers))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with _opener.open(request, timeout=timeout) as response:
            status = response.status
            payload = _decode(response.read())
            answer_headers = response.headers
    except urllib.error.HTTPError as failure:
        status = failure.code
        if 300 <= status < 400:
            raise client_error(
                "unexpected_redirect", f"The service answered a redirect ({status}) to {failure.headers.get('Location')}"
            ) from None
        payload = _decode(failure.read())
        answer_headers = failure.headers
    except (socket.timeout, TimeoutError):
        raise client_error("timeout", f"No answer within {timeout} seconds") from None
    except urllib.error.URLError as failure:
        if isinstance(failure.reason, (socket.timeout, TimeoutError)):
            raise client_error("timeout", f"No answer within {timeout} seconds") from None
        raise client_error("network_error", f"Could not reach the service: {failure.reason}") from None
    except (ConnectionError, OSError) as failure:
        raise client_error("network_error", f"The connection failed: {failure}") from None
    # Some answers carry the error body with a success status (check_failed 200, approval_required 202).
    if isinstance(payload, dict) and "error" in payload:
        raise error_from_body(status, payload, _retry_after(answer_headers))
    if status >= 400:
        raise error_from_body(status, payload, _retry_after(answer_headers))
    return status, payload if isinstance(payload, dict) else {}


__all__ = ["exchange", "ServiceError"]
