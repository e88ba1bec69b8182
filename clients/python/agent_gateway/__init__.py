"""Python client of the Agent Purchasing and Gateway Service (standard library only)."""
from .client import DEFAULT_BASE_URL, VERSION, Client, OrgClient
from .errors import CLIENT_ERROR_CODES, ERROR_CLASSES, SERVICE_ERROR_CODES, ServiceError
from .errors import *  # noqa: F401,F403  (one class per error code: InsufficientCredits, RateLimited, ...)
from .receipts import ReceiptVerificationError, canonical_json, verify_receipt
from .retry import RetryPolicy
from .webhooks import InvalidSignature, WebhookVerifier, verify_signature

__version__ = VERSION
__all__ = [
    "Client",
    "OrgClient",
    "ServiceError",
    "RetryPolicy",
    "WebhookVerifier",
    "verify_signature",
    "InvalidSignature",
    "verify_receipt",
    "canonical_json",
    "ReceiptVerificationError",
    "ERROR_CLASSES",
    "SERVICE_ERROR_CODES",
    "CLIENT_ERROR_CODES",
    "DEFAULT_BASE_URL",
] + [cls.__name__ for cls in ERROR_CLASSES.values()]
