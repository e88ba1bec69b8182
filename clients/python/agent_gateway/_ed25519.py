"""Ed25519 signature verification (RFC 8032), for checking signed receipts.

Uses the ``cryptography`` package when it is installed (``pip install "./clients/python[crypto]"``
from the repository's root); otherwise the pure-Python verification of RFC 8032 section 6, which needs nothing beyond the
standard library. Verification handles only public data, so the pure code's variable timing
reveals nothing secret; it takes a few milliseconds a signature.
"""
from __future__ import annotations

import hashlib
from typing import Optional, Tuple

try:  # pragma: no cover - depends on the environment
    from cryptography.exceptions import InvalidSignature as _CryptoInvalid
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey as _CryptoKey
except ImportError:  # pragma: no cover
    _CryptoKey = None  # type: ignore[assignment,misc]

_p = 2**255 - 19
_q = 2**252 + 27742317777372353535851937790883648493
_d = -121665 * pow(121666, _p - 2, _p) % _p
_sqrt_m1 = pow(2, (_p - 1) // 4, _p)

Point = Tuple[int, int, int, int]


def _add(P: Point, Q: Point) -> Point:
    A = (P[1] - P[0]) * (Q[1] - Q[0]) % _p
    B = (P[1] + P[0]) * (Q[1] + Q[0]) % _p
    C = 2 * P[3] * Q[3] * _d % _p
    D = 2 * P[2] * Q[2] % _p
    E, F, G, H = B - A, D - C, D + C, B + A
    return (E * F % _p, G * H % _p, F * G % _p, E * H % _p)


def _mul(s: int, P: Point) -> Point:
    Q: Point = (0, 1, 1, 0)
    while s > 0:
        if s & 1:
            Q = _add(Q, P)
        P = _add(P, P)
        s >>= 1
    return Q


def _equal(P: Point, Q: Point) -> bool:
    return (P[0] * Q[2] - Q[0] * P[2]) % _p == 0 and (P[1] * Q[2] - Q[1] * P[2]) % _p == 0


def _recover_x(y: int, sign: int) -> Optional[int]:
    if y >= _p:
        return None
    x2 = (y * y - 1) * pow(_d * y * y + 1, _p - 2, _p) % _p
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (_p + 3) // 8, _p)
    if (x * x - x2) % _p != 0:
        x = x * _sqrt_m1 % _p
    if (x * x - x2) % _p != 0:
        return None
    if (x & 1) != sign:
        x = _p - x
    return x


def _decompress(s: bytes) -> Optional[Point]:
    if len(s) != 32:
        return None
    y = int.from_bytes(s, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    x = _recover_x(y, sign)
    return None if x is None else (x, y, 1, x * y % _p)


_gy = 4 * pow(5, _p - 2, _p) % _p
_gx = _recover_x(_gy, 0)
assert _gx is not None
_G: Point = (_gx, _gy, 1, _gx * _gy % _p)


def verify_pure(public: bytes, message: bytes, signature: bytes) -> bool:
    """RFC 8032 section 6 verification, in the standard library alone."""
    if len(public) != 32 or len(signature) != 64:
        return False
    A = _decompress(public)
    R = _decompress(signature[:32])
    if A is None or R is None:
        return False
    s = int.from_bytes(signature[32:], "little")
    if s >= _q:
        return False
    h = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little") % _q
    return _equal(_mul(s, _G), _add(R, _mul(h, A)))


def verify_cryptography(public: bytes, message: bytes, signature: bytes) -> bool:
    """The same check by the ``cryptography`` package; RuntimeError when it is not installed."""
    if _CryptoKey is None:
        raise RuntimeError("the cryptography package is not installed")
    try:
        _CryptoKey.from_public_bytes(public).verify(signature, message)
        return True
    except (_CryptoInvalid, ValueError):
        return False


#: Which implementation :func:`verify` uses here.
BACKEND = "cryptography" if _CryptoKey is not None else "pure-python"


def verify(public: bytes, message: bytes, signature: bytes) -> bool:
    return verify_cryptography(public, message, signature) if _CryptoKey is not None else verify_pure(
        public, message, signature
    )
