"""The client against the running service (real PostgreSQL), as the service's suite starts it.

Needs SERVICE_API_URL and SERVICE_API_KEY (a test agent's key), AGENT_GATEWAY_LIVE_KEY (a
live agent's key with credits, for the gateway call), and AGENT_GATEWAY_ORG_ID with
AGENT_GATEWAY_ORG_KEY (a read org key of the agents' org). Without them the suite is skipped, unless
AGENT_GATEWAY_REQUIRE_SERVICE is set (as in CI), where their absence fails it.
"""
from __future__ import annotations

import os
import unittest
import uuid
from typing import Any, Dict, List

from agent_gateway import CheckFailed, Client, Unauthenticated, UnknownTool

URL = os.environ.get("SERVICE_API_URL")
KEY = os.environ.get("SERVICE_API_KEY")
LIVE_KEY = os.environ.get("AGENT_GATEWAY_LIVE_KEY")
ORG_ID = os.environ.get("AGENT_GATEWAY_ORG_ID")
ORG_KEY = os.environ.get("AGENT_GATEWAY_ORG_KEY")
REQUIRED = os.environ.get("AGENT_GATEWAY_REQUIRE_SERVICE") == "1"


def person(i: int, domain: str = "") -> Dict[str, Any]:
    return {"first_name": f"Jane{i}", "last_name": "Doe", "domain": domain or f"acme{i}.example.com"}


@unittest.skipUnless(REQUIRED or (URL and KEY and LIVE_KEY and ORG_KEY), "no service to test against")
class AgainstTheService(unittest.TestCase):
    client: Client

    @classmethod
    def setUpClass(cls) -> None:
        if not (URL and KEY and LIVE_KEY and ORG_ID and ORG_KEY):
            raise AssertionError(
                "SERVICE_API_URL, SERVICE_API_KEY, AGENT_GATEWAY_LIVE_KEY, AGENT_GATEWAY_ORG_ID and "
                "AGENT_GATEWAY_ORG_KEY are required"
            )
        cls.client = Client()  # from the environment

    def test_reads_the_agent_and_its_balance(self) -> None:
        agent = self.client.agent()
        self.assertEqual(agent["mode"], "test")
        balance = self.client.balance()
        self.assertEqual(balance["agent_id"], agent["id"])
        self.assertIn("credits", balance["monthly_budget"])

    def test_recommends_tools_for_a_task_type(self) -> None:
        answer = self.client.recommend("email_find")
        self.assertEqual(answer["task_type"], "email_find")
        self.assertTrue(any(tool["slug"] == "hunter-email-finder" for tool in answer["tools"]))

    def test_buys_a_result_and_reads_its_receipt(self) -> None:
        result = self.client.execute("hunter-email-finder", [person(1)])
        self.assertEqual(result["status"], "done")
        receipt = self.client.receipt(result["receipt_id"])
        self.assertEqual(receipt["id"], result["receipt_id"])
        self.assertEqual(receipt["counts"]["passed"] + receipt["counts"]["partial"], 1)

    def test_the_same_key_replays_the_first_purchase(self) -> None:
        key = f"py-test-{uuid.uuid4()}"
        first = self.client.execute("hunter-email-finder", [person(2)], idempotency_key=key)
        again = self.client.execute("hunter-email-finder", [person(2)], idempotency_key=key)
        self.assertEqual(first["receipt_id"], again["receipt_id"])

    def test_a_result_that_fails_its_check_is_a_typed_error(self) -> None:
        with self.assertRaises(CheckFailed) as raised:
            self.client.execute("hunter-email-finder", [person(3, "mock-fail.example.com")])
        self.assertEqual(raised.exception.status, 200)
        self.assertIn("receipt_id", raised.exception.body)
        self.assertEqual(raised.exception.body["items"][0]["index"], 0)

    def test_an_unknown_tool_is_a_typed_error(self) -> None:
        with self.assertRaises(UnknownTool) as raised:
            self.client.execute("no-such-tool", [person(4)])
        self.assertEqual((raised.exception.status, raised.exception.retryable), (404, False))

    def test_receipts_page_through_every_receipt(self) -> None:
        bought = [self.client.execute("hunter-email-finder", [person(10 + i)])["receipt_id"] for i in range(3)]
        seen = [receipt["id"] for receipt in self.client.receipts(page_size=1)]
        self.assertEqual(len(seen), len(set(seen)))
        self.assertEqual([r for r in seen if r in bought], list(reversed(bought)))

    def test_an_org_key_lists_every_agent_page_after_page(self) -> None:
        org = Client(ORG_KEY, URL).org(str(ORG_ID))
        one_page = org.agents(page_size=200)
        # Pages of one agent: the client follows has_more to the last and misses none.
        self.assertGreaterEqual(len(one_page), 2)
        self.assertEqual([agent["id"] for agent in org.agents(page_size=1)], [agent["id"] for agent in one_page])

    def test_an_org_key_reads_a_receipts_items_with_inputs_and_results(self) -> None:
        result = self.client.execute("hunter-email-finder", [person(30), person(31, "mock-fail.example.com")])
        org = Client(ORG_KEY, URL).org(str(ORG_ID))
        first = org.receipt_items(result["receipt_id"], limit=1)
        self.assertEqual([item["input"] for item in first["items"]], [person(30)])
        self.assertTrue(first["has_more"])
        self.assertIn("@acme30.example.com", first["items"][0]["result"]["email"])
        rest = org.receipt_items(result["receipt_id"], starting_after=0)
        self.assertEqual([(item["index"], item["result"]) for item in rest["items"]], [(1, None)])
        self.assertFalse(rest["has_more"])

    def test_waits_for_a_job_and_reports_its_progress(self) -> None:
        accepted = self.client.execute("jina-reader", [{"url": f"https://py.example.com/{i}"} for i in range(30)])
        self.assertEqual(accepted["status"], "queued")
        progress: List[int] = []
        job = self.client.wait_for_job(
            accepted["job_id"], poll_interval=0.1, on_progress=lambda j: progress.append(j["progress"]["done"])
        )
        self.assertEqual(job["status"], "done")
        self.assertEqual(job["progress"], {"done": 30, "total": 30})
        self.assertEqual(progress[-1], 30)
        self.assertEqual(progress, sorted(progress))

    def test_disputes_a_charged_item(self) -> None:
        result = self.client.execute("hunter-email-finder", [person(20)])
        dispute = self.client.open_dispute(result["receipt_id"], 0, "The address bounced")
        self.assertEqual(dispute["status"], "open")
        self.assertEqual(self.client.dispute(dispute["id"])["id"], dispute["id"])

    def test_searches_the_catalogue_and_calls_an_endpoint(self) -> None:
        found = self.client.endpoints("fakeprov/ok")
        self.assertEqual([endpoint["id"] for endpoint in found], ["fakeprov/ok"])
        live = Client(LIVE_KEY, URL)
        answer = live.call("fakeprov/ok", query={"q": "python"})
        self.assertEqual((answer["endpoint"], answer["status"]), ("fakeprov/ok", "succeeded"))
        self.assertEqual(answer["charged"]["credits"], answer["price"]["credits"])

    def test_a_wrong_key_is_unauthenticated(self) -> None:
        with self.assertRaises(Unauthenticated) as raised:
            Client("sk_test_" + "x" * 40, URL, max_retries=0).agent()
        self.assertEqual(raised.exception.status, 401)


if __name__ == "__main__":
    unittest.main()
