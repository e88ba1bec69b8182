"""Errors of the Agent Purchasing and Gateway Service, one class per code.

Every error the service sends has the body ``{"error": {"code", "message", "doc_url",
"retryable"}}`` and becomes the class of its code (``InsufficientCredits``, ``RateLimited``,
...), all subclasses of :class:`ServiceError`, so callers catch exactly what they handle.
Errors made on this side of the wire carry status 0 and the client-side codes.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Type

# Every code of the service's error catalogue (checked against the service's own table in
# the service's test suite, so a new code cannot be forgotten here).
SERVICE_ERROR_CODES = (
    "invalid_input", "unauthenticated", "forbidden", "not_found", "rate_limited", "invalid_token",
    "invalid_code", "phone_in_use", "email_unverified", "phone_unverified", "ip_not_allowed",
    "unknown_tool", "unknown_task_type", "live_execute_unavailable", "credits_frozen",
    "insufficient_credits", "over_budget", "approval_required", "approval_expired",
    "approval_rejected", "trial_limit", "approval_mismatch", "plan_limit", "not_purchasable",
    "price_above_max", "tool_paused", "provider_error", "check_failed", "request_in_progress",
    "provider_quota", "aup_limit", "idempotency_conflict", "reason_required", "conflict",
    "unverified_email", "invalid_state", "idp_failed", "not_configured", "invalid_amount",
    "capture_exceeds_hold", "not_a_hold", "already_settled", "invalid_credentials", "locked",
    "weak_password", "resale_rights_missing", "price_missing", "tool_unavailable",
    "adapter_not_ready", "benchmark_missing", "below_accuracy_floor", "not_disputable",
    "dispute_window_closed", "topup_cap", "confirmation_required", "offer_unavailable",
    "no_saved_card", "payment_unavailable", "invalid_signature", "method_not_allowed",
    "fx_unavailable", "last_owner", "payload_too_large", "internal_error", "unknown_endpoint",
    "endpoint_on_request", "endpoint_unavailable", "service_unavailable", "payment_required",
    "payment_invalid", "payment_replayed", "payer_spend_cap",
)

# Codes made by the client itself (status 0). network_error, timeout and connection_failed are retried.
CLIENT_ERROR_CODES = (
    "network_error", "timeout", "connection_failed", "aborted", "http_error", "unexpected_redirect",
)


class ServiceError(Exception):
    """An error answer of the service, or one made by the client (status 0)."""

    code: str = "service_error"

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        status: int = 0,
        retryable: bool = False,
        doc_url: Optional[str] = None,
        body: Optional[Mapping[str, Any]] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.status = status
        self.retryable = retryable
        self.doc_url = doc_url
        #: The whole answer body: some codes carry fields beside ``error``
        #: (``approval`` with ``approval_required``, ``reason`` and ``items`` with ``check_failed``).
        self.body: Dict[str, Any] = dict(body or {})
        #: Seconds the service asked to wait (``Retry-After``), when it said.
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, status={self.status}, message={self.message!r})"


def _class_name(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("_"))


ERROR_CLASSES: Dict[str, Type[ServiceError]] = {}
for _code in SERVICE_ERROR_CODES + CLIENT_ERROR_CODES:
    _cls = type(_class_name(_code), (ServiceError,), {"code": _code, "__module__": __name__})
    ERROR_CLASSES[_code] = _cls
    globals()[_cls.__name__] = _cls


def error_from_body(status: int, body: Any, retry_after: Optional[float] = None) -> ServiceError:
    """The typed error of an answer; ``http_error`` when it is not the service's error body."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        return client_error("http_error", f"HTTP {status} without the service's error body", status=status)
    code = error["code"]
    cls = ERROR_CLASSES.get(code, ServiceError)
    return cls(
        str(error.get("message", "")),
        code=code,
        status=status,
        retryable=bool(error.get("retryable", False)),
        doc_url=error.get("doc_url"),
        body=body,
        retry_after=retry_after,
    )


def client_error(code: str, message: str, *, status: int = 0) -> ServiceError:
    """An error made by the client: status 0 (``http_error`` keeps the HTTP status)."""
    cls = ERROR_CLASSES[code]
    return cls(message, code=code, status=status, retryable=code in ("network_error", "timeout", "connection_failed"))
