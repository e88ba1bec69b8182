"""Verifying the service's webhook deliveries.

Each delivery carries ``Service-Signature: t=<unix seconds>,v1=<hex>``: the HMAC-SHA256, keyed
with the endpoint's secret, of ``"<t>.<raw body>"``. Verify it on the raw bytes, refuse a ``t``
more than 5 minutes away from now, and drop an event id already handled (deliveries are
retried, so the same event can come twice). After the endpoint's secret is rotated, deliveries
carry a second ``v1=`` entry (the previous secret's) for 24 hours: any entry may match.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Optional, Union

from .errors import ERROR_CLASSES

TOLERANCE_SECONDS = 300
_HEADER = re.compile(r"^t=(\d+)((?:,v1=[0-9a-f]{64})+)$")

#: The error of a delivery that does not verify (the service's own ``invalid_signature`` class).
InvalidSignature = ERROR_CLASSES["invalid_signature"]


def verify_signature(
    secret: str,
    header: Optional[str],
    raw_body: Union[bytes, str],
    *,
    now: Optional[float] = None,
    tolerance: int = TOLERANCE_SECONDS,
) -> Dict[str, Any]:
    """The delivered event, once its signature and time check out; else :class:`InvalidSignature`."""
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else raw_body
    match = _HEADER.match(header or "")
    if match is None:
        raise InvalidSignature("Missing or malformed Service-Signature header")
    timestamp, given = int(match.group(1)), match.group(2).split(",v1=")[1:]
    expected = hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode("utf-8") + body, hashlib.sha256).hexdigest()
    # Every entry is compared, so the time taken does not tell which one matched.
    matches = [hmac.compare_digest(expected, signature) for signature in given]
    if not any(matches):
        raise InvalidSignature("The signature does not match this secret and body")
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise InvalidSignature(f"The signature's time is more than {tolerance} seconds away from now")
    event = json.loads(body)
    if not isinstance(event, dict):
        raise InvalidSignature("The body is not an event")
    return event


class WebhookVerifier:
    """Verifies deliveries and drops repeats of an event id seen in the last ``remember`` events."""

    def __init__(self, secret: str, *, remember: int = 10_000, clock: Callable[[], float] = time.time) -> None:
        self._secret = secret
        self._seen: "OrderedDict[str, None]" = OrderedDict()
        self._remember = remember
        self._clock = clock

    def verify(self, header: Optional[str], raw_body: Union[bytes, str]) -> Optional[Dict[str, Any]]:
        """The event, or None when this event id was handled already."""
        event = verify_signature(self._secret, header, raw_body, now=self._clock())
        event_id = str(event.get("id", ""))
        if event_id in self._seen:
            return None
        self._seen[event_id] = None
        while len(self._seen) > self._remember:
            self._seen.popitem(last=False)
        return event
