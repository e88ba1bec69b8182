"""The shapes of the service's answers, as TypedDicts (amounts are strings of whole credits)."""
from __future__ import annotations

from typing import Any, Dict, List, TypedDict


class Amount(TypedDict):
    credits: str
    usd: str


class ToolRef(TypedDict):
    id: str
    slug: str
    name: str
    provider: str


class ItemCounts(TypedDict):
    passed: int
    partial: int
    failed: int
    expired: int
    pending: int


class ExecuteResult(TypedDict):
    status: str
    receipt_id: str
    mode: str
    tool: ToolRef
    item_count: int
    charged: Amount
    counts: ItemCounts
    fallback_used: bool
    items: List[Dict[str, Any]]


class JobAccepted(TypedDict):
    status: str
    job_id: str
    receipt_id: str
    item_count: int
    held: Amount
    deadline_at: str


class Job(TypedDict):
    id: str
    status: str
    receipt_id: str
    tool: ToolRef
    item_count: int
    progress: Dict[str, int]
    counts: ItemCounts
    charged: Amount
    items: List[Dict[str, Any]]


class Receipt(TypedDict, total=False):
    id: str
    org_id: str
    agent_id: str
    mode: str
    tool: ToolRef
    item_count: int
    charged: Amount
    refunded: Amount
    counts: ItemCounts
    items: List[Dict[str, Any]]
    created_at: str
    #: ``{"alg": "EdDSA", "kid", "jws"}``: check it with :func:`agent_gateway.verify_receipt`.
    signature: Dict[str, str]
