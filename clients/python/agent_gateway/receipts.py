"""Proving what an agent bought: checking the service's signed receipts.

Receipts, gateway call records and disputes carry ``signature``: ``{"alg": "EdDSA", "kid": ...,
"jws": "<header>..<signature>"}``, a detached JWS over the RFC 8785 canonical JSON of the
record without ``signature``. :func:`verify_receipt` checks one with the keys the service
publishes at ``/.well-known/jwks.json``::

    from agent_gateway import verify_receipt
    kid = verify_receipt(client.receipt(receipt_id), base_url="https://api.example.com")

It takes the record, or the answer of ``GET /v1/receipts/{id}`` or ``GET /v1/disputes/{id}``
that wraps it (``{"receipt": ...}``, ``{"dispute": ...}``).

A changed record, a key id that did not sign it, or a key the service never published raise
:class:`ReceiptVerificationError` with a ``reason``.
"""
from __future__ import annotations

import base64
import binascii
import json
import os
import threading
import urllib.request
from decimal import Decimal
from typing import Any, Dict, List, Mapping, Optional

from . import _ed25519
from .client import DEFAULT_BASE_URL

REASONS = ("unsigned", "malformed_signature", "kid_mismatch", "unknown_key", "signature_mismatch", "not_json")


class ReceiptVerificationError(Exception):
    """A signed record that does not verify; ``reason`` is one of :data:`REASONS`."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _number(value: float) -> str:
    """ECMAScript's Number::toString, which RFC 8785 prescribes for numbers."""
    if value != value or value in (float("inf"), float("-inf")):
        raise ReceiptVerificationError("not_json", f"{value} has no JSON form")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = list(digit_tuple)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exponent += 1  # type: ignore[operator]
    text = "".join(str(d) for d in digits)
    k, n = len(text), int(exponent) + len(text)
    if k <= n <= 21:
        return sign + text + "0" * (n - k)
    if 0 < n <= 21:
        return sign + text[:n] + "." + text[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + text
    e = n - 1
    mantissa = text if k == 1 else text[0] + "." + text[1:]
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def _utf16(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def canonical_json(value: Any) -> str:
    """RFC 8785 canonical JSON: members sorted by UTF-16 code units, ECMAScript number forms."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        return str(value) if abs(value) < 2**53 else _number(float(value))
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(item) for item in value) + "]"
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise ReceiptVerificationError("not_json", "object member names must be strings")
        members = sorted(value.keys(), key=_utf16)
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical_json(value[k]) for k in members) + "}"
    raise ReceiptVerificationError("not_json", f"a {type(value).__name__} is not JSON")


def _b64url(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as error:
        raise ReceiptVerificationError("malformed_signature", f"not base64url: {error}") from None


def _b64url_encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


#: The single-record answers that wrap a signed record.
_WRAPPERS = ("receipt", "dispute")


def _unwrapped(answer: Mapping[str, Any]) -> Mapping[str, Any]:
    if len(answer) == 1:
        name = next(iter(answer))
        if name in _WRAPPERS and isinstance(answer[name], Mapping):
            return answer[name]
    return answer


_cache: Dict[str, List[Dict[str, Any]]] = {}
_cache_lock = threading.Lock()


def _fetch_keys(url: str, timeout: float) -> List[Dict[str, Any]]:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        keys = json.loads(answer.read()).get("keys", [])
    with _cache_lock:
        _cache[url] = keys
    return keys


def _keys_for(kid: str, jwks: Optional[Mapping[str, Any]], url: str, timeout: float) -> List[Dict[str, Any]]:
    if jwks is not None:
        return list(jwks.get("keys", []))
    with _cache_lock:
        keys = _cache.get(url)
    # Fetched once per address, and again for a key id not seen yet (the service rotated).
    if keys is None or not any(key.get("kid") == kid for key in keys):
        keys = _fetch_keys(url, timeout)
    return keys


def verify_receipt(
    record: Mapping[str, Any],
    *,
    jwks: Optional[Mapping[str, Any]] = None,
    base_url: Optional[str] = None,
    jwks_url: Optional[str] = None,
    timeout: float = 10.0,
) -> str:
    """Checks a signed receipt, call record or dispute (or an answer wrapping one); answers the id
    of the key that signed it.

    Keys come from ``jwks`` when given, else from ``jwks_url`` (default
    ``<base_url>/.well-known/jwks.json``, ``base_url`` defaulting to SERVICE_API_URL, then
    :data:`DEFAULT_BASE_URL`).
    """
    record = _unwrapped(record)
    signature = record.get("signature")
    if not signature:
        raise ReceiptVerificationError("unsigned", "The record has no `signature`")
    jws, kid = signature.get("jws"), signature.get("kid")
    parts = jws.split(".") if isinstance(jws, str) else []
    if len(parts) != 3 or parts[1] != "" or not isinstance(kid, str):
        raise ReceiptVerificationError("malformed_signature", "`signature.jws` must be a detached JWS: <header>..<signature>")
    try:
        header = json.loads(_b64url(parts[0]))
    except ValueError:
        raise ReceiptVerificationError("malformed_signature", "The JWS header is not JSON") from None
    if not isinstance(header, dict) or header.get("alg") != "EdDSA":
        raise ReceiptVerificationError("malformed_signature", f"Unexpected algorithm {header.get('alg') if isinstance(header, dict) else header}")
    if header.get("kid") != kid:
        raise ReceiptVerificationError("kid_mismatch", f"`signature.kid` {kid} is not the key id the JWS names ({header.get('kid')})")

    base = (base_url or os.environ.get("SERVICE_API_URL") or DEFAULT_BASE_URL).rstrip("/")
    keys = _keys_for(kid, jwks, jwks_url or f"{base}/.well-known/jwks.json", timeout)
    key = next((k for k in keys if k.get("kid") == kid), None)
    if key is None:
        raise ReceiptVerificationError("unknown_key", f"The service publishes no key {kid}")
    if key.get("kty") != "OKP" or key.get("crv") != "Ed25519" or not isinstance(key.get("x"), str):
        raise ReceiptVerificationError("unknown_key", f"Key {kid} is not an Ed25519 key")

    signed = {name: value for name, value in record.items() if name != "signature"}
    payload = _b64url_encode(canonical_json(signed).encode("utf-8"))
    signing_input = f"{parts[0]}.{payload}".encode("ascii")
    if not _ed25519.verify(_b64url(key["x"]), signing_input, _b64url(parts[2])):
        raise ReceiptVerificationError("signature_mismatch", "The signature does not match the record: it was changed")
    return kid
