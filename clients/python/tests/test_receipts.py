"""Receipt verification: canonical JSON (RFC 8785), Ed25519 (RFC 8032) and, against the running
service, signed receipts checked with its published keys and refused once changed.

The Ed25519 check runs in the standard library here; where the optional ``cryptography``
package is installed, the same checks run with it too (skipped, saying so, where it is not).
"""
from __future__ import annotations

import base64
import copy
import json
import os
import unittest
from typing import Any, Iterator, List, Tuple
from unittest import mock

from agent_gateway import Client, ReceiptVerificationError, canonical_json, verify_receipt
from agent_gateway import _ed25519

URL = os.environ.get("SERVICE_API_URL")
KEY = os.environ.get("SERVICE_API_KEY")
REQUIRED = os.environ.get("AGENT_GATEWAY_REQUIRE_SERVICE") == "1"
HAS_CRYPTOGRAPHY = _ed25519.BACKEND == "cryptography"

# RFC 8032 section 7.1, TEST 2.
PUBLIC = bytes.fromhex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
MESSAGE = bytes([0x72])
SIGNATURE = bytes.fromhex(
    "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
    "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
)


class CanonicalJson(unittest.TestCase):
    def test_writes_the_rfc_8785_example(self) -> None:
        value = json.loads(
            '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
            ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}'
        )
        self.assertEqual(
            canonical_json(value),
            '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
            '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
        )

    def test_sorts_members_by_utf16_code_units(self) -> None:
        value = {"\u20ac": 1, "\r": 2, "\ufb33": 3, "1": 4, "\U0001f600": 5, "\u0080": 6, "\u00f6": 7}
        names = list(json.loads(canonical_json(value)).keys())
        self.assertEqual(names, ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"])

    def test_writes_numbers_as_ecmascript_does(self) -> None:
        cases = [(0.0, "0"), (-0.0, "0"), (1.0, "1"), (100.0, "100"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
                 (0.000001, "0.000001"), (1e-7, "1e-7"), (-1.5e-9, "-1.5e-9"), (123.456, "123.456"), (12, "12"),
                 (2**60, "1152921504606847000"), (5e-324, "5e-324")]
        for value, text in cases:
            self.assertEqual(canonical_json(value), text, value)

    def test_refuses_what_json_cannot_carry(self) -> None:
        for bad in (float("nan"), float("inf"), {1: "x"}, object()):
            with self.assertRaises(ReceiptVerificationError) as raised:
                canonical_json(bad)
            self.assertEqual(raised.exception.reason, "not_json")


class Ed25519(unittest.TestCase):
    def test_pure_python_verifies_the_rfc_8032_vector_and_refuses_changes(self) -> None:
        self.assertTrue(_ed25519.verify_pure(PUBLIC, MESSAGE, SIGNATURE))
        self.assertFalse(_ed25519.verify_pure(PUBLIC, b"\x73", SIGNATURE))
        flipped = bytes([SIGNATURE[0] ^ 1]) + SIGNATURE[1:]
        self.assertFalse(_ed25519.verify_pure(PUBLIC, MESSAGE, flipped))
        # s at or above the group order is refused (no malleable signatures).
        too_big = SIGNATURE[:32] + (int.from_bytes(SIGNATURE[32:], "little") + _ed25519._q).to_bytes(32, "little")
        self.assertFalse(_ed25519.verify_pure(PUBLIC, MESSAGE, too_big))
        self.assertFalse(_ed25519.verify_pure(PUBLIC[:31], MESSAGE, SIGNATURE))

    @unittest.skipUnless(HAS_CRYPTOGRAPHY, "the optional cryptography package is not installed")
    def test_agrees_with_the_cryptography_package(self) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        self.assertTrue(_ed25519.verify_cryptography(PUBLIC, MESSAGE, SIGNATURE))
        for i in range(5):
            key = Ed25519PrivateKey.generate()
            public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
            message = os.urandom(i * 40)
            signature = key.sign(message)
            self.assertTrue(_ed25519.verify_pure(public, message, signature))
            self.assertFalse(_ed25519.verify_pure(public, message + b"x", signature))


def leaves(value: Any, path: Tuple[Any, ...] = ()) -> Iterator[Tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield from leaves(child, path + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from leaves(child, path + (index,))
    else:
        yield path


def tampered(record: Any, path: Tuple[Any, ...]) -> Any:
    copied = copy.deepcopy(record)
    parent = copied
    for key in path[:-1]:
        parent = parent[key]
    old = parent[path[-1]]
    if isinstance(old, bool):
        parent[path[-1]] = not old
    elif isinstance(old, int):
        parent[path[-1]] = old + 1
    elif isinstance(old, str):
        parent[path[-1]] = str(int(old) + 1) if old.isdigit() else old + "x"
    else:
        parent[path[-1]] = "x"
    return copied


def with_header_kid(record: Any, kid: str) -> Any:
    header = base64.urlsafe_b64encode(json.dumps({"alg": "EdDSA", "kid": kid}).encode()).rstrip(b"=").decode()
    signature = record["signature"]["jws"].split(".")[2]
    return {**record, "signature": {**record["signature"], "kid": kid, "jws": f"{header}..{signature}"}}


@unittest.skipUnless(REQUIRED or (URL and KEY), "no service to test against")
class AgainstTheService(unittest.TestCase):
    receipt: Any

    @classmethod
    def setUpClass(cls) -> None:
        if not (URL and KEY):
            raise AssertionError("SERVICE_API_URL and SERVICE_API_KEY are required")
        client = Client()
        person = {"first_name": "Jane", "last_name": "Doe", "domain": "signed.example.com"}
        bought = client.execute("hunter-email-finder", [person, {**person, "domain": "mock-partial.example.com"}])
        cls.receipt = client.receipt(bought["receipt_id"])

    def reason(self, record: Any, **options: Any) -> str:
        try:
            verify_receipt(record, **options)
        except ReceiptVerificationError as error:
            return error.reason
        return "verified"

    def check_every_way(self) -> None:
        kid = self.receipt["signature"]["kid"]
        self.assertEqual(verify_receipt(self.receipt, base_url=URL), kid)
        facts = {k: v for k, v in self.receipt.items() if k != "signature"}
        paths: List[Tuple[Any, ...]] = list(leaves(facts))
        self.assertGreater(len(paths), 40)
        for path in paths:
            self.assertEqual((path, self.reason(tampered(self.receipt, path), base_url=URL)), (path, "signature_mismatch"))
        wrong_kid = {**self.receipt, "signature": {**self.receipt["signature"], "kid": "other"}}
        self.assertEqual(self.reason(wrong_kid, base_url=URL), "kid_mismatch")
        self.assertEqual(self.reason(with_header_kid(self.receipt, "no-such-key"), base_url=URL), "unknown_key")
        self.assertEqual(self.reason({**self.receipt, "signature": None}, base_url=URL), "unsigned")

    def test_verifies_a_receipt_with_the_standard_library_alone(self) -> None:
        with mock.patch.object(_ed25519, "verify", _ed25519.verify_pure):
            self.check_every_way()

    @unittest.skipUnless(HAS_CRYPTOGRAPHY, "the optional cryptography package is not installed")
    def test_verifies_a_receipt_with_the_cryptography_package(self) -> None:
        with mock.patch.object(_ed25519, "verify", _ed25519.verify_cryptography):
            self.check_every_way()

    def test_takes_the_answer_that_wraps_the_record(self) -> None:
        kid = self.receipt["signature"]["kid"]
        self.assertEqual(verify_receipt({"receipt": self.receipt}, base_url=URL), kid)
        changed = {**self.receipt, "mode": "live" if self.receipt["mode"] == "test" else "test"}
        self.assertEqual(self.reason({"receipt": changed}, base_url=URL), "signature_mismatch")

    def test_takes_the_keys_when_given(self) -> None:
        from urllib.request import urlopen

        with urlopen(f"{URL}/.well-known/jwks.json") as answer:
            jwks = json.loads(answer.read())
        self.assertEqual(verify_receipt(self.receipt, jwks=jwks), self.receipt["signature"]["kid"])
        self.assertEqual(self.reason(self.receipt, jwks={"keys": []}), "unknown_key")
