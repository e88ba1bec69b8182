"""Webhook verification: signatures made here with hmac (the scheme written from the spec)."""
from __future__ import annotations

import hashlib
import hmac
import json
import unittest

from agent_gateway import InvalidSignature, WebhookVerifier, verify_signature

SECRET = "whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
BODY = json.dumps({
    "id": "5b0c9f3e-7f7a-4a53-9a55-1a0b2c3d4e5f",
    "type": "balance.low",
    "created_at": "2026-11-22T00:00:00.000Z",
    "data": {"balance_credits": "4200", "balance_usd": "4.200"},
})
NOW = 1795305630.0
T = int(NOW)


def sign(timestamp: int, payload: str, key: str = SECRET) -> str:
    digest = hmac.new(key.encode(), f"{timestamp}.{payload}".encode(), hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


class VerifySignature(unittest.TestCase):
    def test_accepts_an_authentic_delivery_as_text_or_bytes(self) -> None:
        self.assertEqual(verify_signature(SECRET, sign(T, BODY), BODY, now=NOW), json.loads(BODY))
        self.assertEqual(verify_signature(SECRET, sign(T, BODY), BODY.encode(), now=NOW)["type"], "balance.low")

    def test_refuses_another_body_secret_or_a_malformed_header(self) -> None:
        pretty = json.dumps(json.loads(BODY), indent=2)
        for header, body, secret in [
            (sign(T, BODY), pretty, SECRET),
            (sign(T, BODY, "whsec_other"), BODY, SECRET),
            ("v1=abc", BODY, SECRET),
            (None, BODY, SECRET),
        ]:
            with self.assertRaises(InvalidSignature):
                verify_signature(secret, header, body, now=NOW)

    def test_accepts_either_signature_during_a_secret_rotation(self) -> None:
        old, new = sign(T, BODY, "whsec_old"), sign(T, BODY, "whsec_new")
        both = f"{new},{old.split(',')[1]}"  # t=..,v1=<new>,v1=<old>, as the service sends them
        self.assertEqual(verify_signature("whsec_new", both, BODY, now=NOW)["type"], "balance.low")
        self.assertEqual(verify_signature("whsec_old", both, BODY, now=NOW)["type"], "balance.low")
        with self.assertRaises(InvalidSignature):
            verify_signature("whsec_third", both, BODY, now=NOW)

    def test_refuses_a_time_more_than_five_minutes_away(self) -> None:
        self.assertEqual(verify_signature(SECRET, sign(T - 300, BODY), BODY, now=NOW)["type"], "balance.low")
        with self.assertRaises(InvalidSignature):
            verify_signature(SECRET, sign(T - 301, BODY), BODY, now=NOW)
        with self.assertRaises(InvalidSignature):
            verify_signature(SECRET, sign(T + 301, BODY), BODY, now=NOW)


class Verifier(unittest.TestCase):
    def test_drops_a_repeated_event_id(self) -> None:
        verifier = WebhookVerifier(SECRET, clock=lambda: NOW)
        self.assertIsNotNone(verifier.verify(sign(T, BODY), BODY))
        self.assertIsNone(verifier.verify(sign(T + 60, BODY), BODY))

    def test_remembers_a_bounded_number_of_ids(self) -> None:
        verifier = WebhookVerifier(SECRET, remember=2, clock=lambda: NOW)
        bodies = [json.dumps({"id": f"e{i}", "type": "webhook.test", "data": {}}) for i in range(3)]
        for body in bodies:
            self.assertIsNotNone(verifier.verify(sign(T, body), body))
        # The oldest id was forgotten, so it would be accepted again; the newest is remembered.
        self.assertIsNotNone(verifier.verify(sign(T, bodies[0]), bodies[0]))
        self.assertIsNone(verifier.verify(sign(T, bodies[2]), bodies[2]))


if __name__ == "__main__":
    unittest.main()
