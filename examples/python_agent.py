"""An agent that buys a verified email address: recommend, execute, read the receipt and check
its signature.

    SERVICE_API_KEY=sk_test_... SERVICE_API_URL=http://localhost:8080 python3 examples/python_agent.py

Uses the Python client in clients/python (standard library only).
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))

from agent_gateway import ApprovalRequired, CheckFailed, Client, verify_receipt  # noqa: E402


def main() -> int:
    client = Client()
    ranked = client.recommend("email_find")["tools"]
    tool = next(t for t in ranked if t["purchasable"])
    print(f"best tool: {tool['slug']} (score {tool['score']})")
    person = {"first_name": "Jane", "last_name": "Doe", "domain": "acme.com"}
    try:
        result = client.execute(tool["slug"], [person], max_price=1_000)
    except CheckFailed as failed:
        print(f"no verified result, nothing charged: {failed.body.get('reason')}")
        return 1
    except ApprovalRequired as waiting:
        print(f"an owner must approve this purchase first: approval {waiting.body['approval']['id']}")
        return 2
    receipt = client.receipt(result["receipt_id"])
    item = receipt["items"][0]
    print(f"receipt {receipt['id']}: {item['outcome']}, charged {receipt['charged']['credits']} credits")
    # Checked with the keys the service at SERVICE_API_URL publishes.
    print(f"signature verified: key {verify_receipt(receipt)}")
    print(f"result: {result['items'][0]['result']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
