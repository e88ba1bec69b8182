"""The retry rules against a loopback fault server, with an injected sleep (no real waiting)."""
from __future__ import annotations

import socket
import threading
import unittest
from typing import List

from agent_gateway import (
    Aborted,
    Client,
    HttpError,
    InvalidInput,
    NetworkError,
    ProviderError,
    RateLimited,
    RetryPolicy,
    Timeout,
    UnexpectedRedirect,
)
from tests.fault_server import Answer, FaultServer, error_body

DONE = {"status": "done", "receipt_id": "r1", "items": []}


class RetryRules(unittest.TestCase):
    def serve(self, *script: Answer) -> FaultServer:
        server = FaultServer(list(script))
        self.addCleanup(server.close)
        return server

    def client(self, server_url: str, **options) -> "tuple[Client, List[float]]":  # type: ignore[no-untyped-def]
        slept: List[float] = []
        options.setdefault("sleep", slept.append)
        return Client("sk_test_fault", server_url, **options), slept

    def test_waits_out_retry_after_up_to_60_seconds(self) -> None:
        server = self.serve(
            Answer(429, error_body("rate_limited", True), headers={"Retry-After": "7"}),
            Answer(200, {"agent": {"id": "a"}}),
        )
        client, slept = self.client(server.url)
        self.assertEqual(client.agent(), {"id": "a"})
        self.assertEqual(slept, [7.0])
        self.assertEqual(len(server.requests), 2)

    def test_a_retry_after_over_60_seconds_falls_back_to_backoff(self) -> None:
        server = self.serve(
            Answer(429, error_body("rate_limited", True), headers={"Retry-After": "3600"}),
            Answer(200, {"agent": {"id": "a"}}),
        )
        client, slept = self.client(server.url, random=lambda: 0.0)
        client.agent()
        self.assertEqual(slept, [0.25])

    def test_retries_a_provider_error_with_the_same_idempotency_key(self) -> None:
        server = self.serve(
            Answer(502, error_body("provider_error", True)),
            Answer(502, error_body("provider_error", True)),
            Answer(200, DONE),
        )
        client, slept = self.client(server.url, random=lambda: 0.999)
        result = client.execute("hunter-email-finder", [{"domain": "acme.com"}])
        self.assertEqual(result["status"], "done")
        keys = {request["body"]["idempotency_key"] for request in server.requests}
        self.assertEqual(len(server.requests), 3)
        self.assertEqual(len(keys), 1)
        # Backoff from 0.5 s, doubling, with jitter between half and all of it.
        self.assertTrue(0.25 <= slept[0] <= 0.5 and 0.5 <= slept[1] <= 1.0, slept)

    def test_keeps_the_callers_idempotency_key(self) -> None:
        server = self.serve(Answer(502, error_body("provider_error", True)), Answer(200, DONE))
        client, _ = self.client(server.url)
        client.execute("t", [{}], idempotency_key="mine-1")
        self.assertEqual([r["body"]["idempotency_key"] for r in server.requests], ["mine-1", "mine-1"])

    def test_gives_up_after_three_retries_by_default_and_none_with_zero(self) -> None:
        server = self.serve(Answer(502, error_body("provider_error", True)))
        client, slept = self.client(server.url)
        with self.assertRaises(ProviderError) as raised:
            client.agent()
        self.assertEqual((raised.exception.status, raised.exception.retryable), (502, True))
        self.assertEqual(len(server.requests), 4)
        self.assertEqual(len(slept), 3)
        none, _ = self.client(server.url, max_retries=0)
        with self.assertRaises(ProviderError):
            none.agent()
        self.assertEqual(len(server.requests), 5)

    def test_does_not_retry_an_error_that_is_not_retryable(self) -> None:
        server = self.serve(Answer(400, error_body("invalid_input", False, "inputs must hold 1 to 1000 items")))
        client, slept = self.client(server.url)
        with self.assertRaises(InvalidInput) as raised:
            client.execute("t", [])
        self.assertEqual(raised.exception.message, "inputs must hold 1 to 1000 items")
        self.assertEqual((len(server.requests), slept), (1, []))

    def test_refuses_a_redirect(self) -> None:
        server = self.serve(Answer(302, raw=b"", headers={"Location": "http://elsewhere.example/"}))
        client, _ = self.client(server.url)
        with self.assertRaises(UnexpectedRedirect) as raised:
            client.agent()
        self.assertEqual((raised.exception.status, raised.exception.retryable), (0, False))
        self.assertEqual(len(server.requests), 1)

    def test_an_http_error_without_the_service_body_keeps_its_status(self) -> None:
        server = self.serve(Answer(503, raw=b"<html>bad gateway</html>"))
        client, _ = self.client(server.url)
        with self.assertRaises(HttpError) as raised:
            client.agent()
        self.assertEqual((raised.exception.code, raised.exception.status), ("http_error", 503))
        self.assertEqual(len(server.requests), 1)

    def test_a_timeout_is_retried_and_then_reported(self) -> None:
        server = self.serve(Answer(200, {"agent": {}}, delay=1.0))
        client, slept = self.client(server.url, timeout=0.2, max_retries=1)
        with self.assertRaises(Timeout) as raised:
            client.agent()
        self.assertEqual((raised.exception.status, raised.exception.retryable), (0, True))
        self.assertEqual(len(slept), 1)

    def test_a_refused_connection_is_a_network_error(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        client, slept = self.client(f"http://127.0.0.1:{port}", max_retries=2)
        with self.assertRaises(NetworkError) as raised:
            client.agent()
        self.assertEqual((raised.exception.code, raised.exception.status), ("network_error", 0))
        self.assertEqual(len(slept), 2)

    def test_the_callers_cancel_aborts_without_retrying(self) -> None:
        server = self.serve(Answer(429, error_body("rate_limited", True), headers={"Retry-After": "30"}))
        cancel = threading.Event()
        client = Client("sk_test_fault", server.url)
        timer = threading.Timer(0.2, cancel.set)
        timer.start()
        with self.assertRaises(Aborted) as raised:
            client.request("GET", "/v1/agent", cancel=cancel)
        self.assertEqual(raised.exception.status, 0)
        self.assertEqual(len(server.requests), 1)
        cancel.set()
        with self.assertRaises(Aborted):
            client.request("GET", "/v1/agent", cancel=cancel)
        self.assertEqual(len(server.requests), 1)

    def test_the_service_error_carries_its_fields(self) -> None:
        server = self.serve(Answer(429, error_body("rate_limited", True, "slow down"), headers={"Retry-After": "2"}))
        client, _ = self.client(server.url, max_retries=0)
        with self.assertRaises(RateLimited) as raised:
            client.agent()
        error = raised.exception
        self.assertEqual((error.code, error.status, error.retryable, error.retry_after), ("rate_limited", 429, True, 2.0))
        self.assertEqual(error.doc_url, "http://x/docs/errors#rate_limited")


class Backoff(unittest.TestCase):
    def test_doubles_from_half_a_second_up_to_eight_with_jitter(self) -> None:
        for retries_done in range(8):
            ceiling = min(0.5 * 2 ** retries_done, 8.0)
            low = RetryPolicy(random=lambda: 0.0).backoff(retries_done)
            high = RetryPolicy(random=lambda: 0.999999).backoff(retries_done)
            self.assertAlmostEqual(low, ceiling / 2)
            self.assertTrue(ceiling / 2 <= high <= ceiling)

    def test_refuses_a_negative_retry_count(self) -> None:
        with self.assertRaises(ValueError):
            RetryPolicy(max_retries=-1)


if __name__ == "__main__":
    unittest.main()
