"""The client: every agent endpoint, and the org endpoints for scripts holding an org key.

Each call follows the retry rules of :mod:`agent_gateway.retry`; an execute keeps one
``idempotency_key`` over all its tries (made here when the caller gave none), so a retry never
buys twice. Errors are the classes of :mod:`agent_gateway.errors`.
"""
from __future__ import annotations

import os
import threading
import time
import urllib.parse
import uuid
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union, cast

from ._http import exchange
from .errors import ServiceError, client_error
from .retry import RetryPolicy
from .types import ExecuteResult, Job, JobAccepted, Receipt

#: The address used when neither ``base_url`` nor SERVICE_API_URL is given: the service's own
#: BASE_URL with nothing configured (``npm start``). Each deployment has its own BASE_URL, so
#: there is no public one to name (docs/decisions.md, "Installing the clients").
DEFAULT_BASE_URL = "http://localhost:8080"
VERSION = "0.1.0"


class Client:
    """``Client()`` reads ``SERVICE_API_KEY`` and ``SERVICE_API_URL`` from the environment."""

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        max_retries: int = 3,
        timeout: float = 60.0,
        sleep: Optional[Callable[[float], None]] = None,
        random: Optional[Callable[[], float]] = None,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("SERVICE_API_KEY")
        if not key:
            raise ValueError("No API key: pass api_key or set SERVICE_API_KEY")
        self._key = key
        self._base = (base_url or os.environ.get("SERVICE_API_URL") or DEFAULT_BASE_URL).rstrip("/")
        self._timeout = timeout
        self._retry = RetryPolicy(max_retries=max_retries, **({"random": random} if random else {}))
        self._sleep = sleep

    # -- the exchange, with the retry rules ------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Optional[Any] = None,
        query: Optional[Mapping[str, Any]] = None,
        cancel: Optional[threading.Event] = None,
    ) -> Dict[str, Any]:
        """One call to the service, retried as the rules say; ``cancel`` set stops it (``aborted``)."""
        params = {k: v for k, v in (query or {}).items() if v is not None}
        url = self._base + path + (("?" + urllib.parse.urlencode(params)) if params else "")
        headers = {
            "Authorization": f"Bearer {self._key}",
            "Accept": "application/json",
            "User-Agent": f"agent-gateway-python/{VERSION}",
        }
        retries = 0
        while True:
            if cancel is not None and cancel.is_set():
                raise client_error("aborted", "The caller cancelled the request")
            try:
                return exchange(method, url, headers=headers, body=body, timeout=self._timeout)[1]
            except ServiceError as error:
                if not self._retry.should_retry(error, retries):
                    raise
                self._wait(self._retry.delay(error, retries), cancel)
                retries += 1

    def _wait(self, seconds: float, cancel: Optional[threading.Event]) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        elif cancel is not None:
            if cancel.wait(seconds):
                raise client_error("aborted", "The caller cancelled the request")
        else:
            time.sleep(seconds)

    # -- buying results ----------------------------------------------------------------------

    def recommend(self, task_type: Optional[str] = None, *, task: Optional[str] = None, **extra: Any) -> Dict[str, Any]:
        """Ranked tools for one of the seven task types, or for a task in free text."""
        body: Dict[str, Any] = dict(extra)
        if task_type is not None:
            body["task_type"] = task_type
        if task is not None:
            body["task"] = task
        return self.request("POST", "/v1/recommend", body=body)

    def execute(
        self,
        tool: str,
        inputs: Sequence[Mapping[str, Any]],
        *,
        max_price: Optional[Union[int, str]] = None,
        idempotency_key: Optional[str] = None,
        fallback: Optional[bool] = None,
        approval_id: Optional[str] = None,
        cancel: Optional[threading.Event] = None,
    ) -> Union[ExecuteResult, JobAccepted]:
        """Buys results: up to 25 inputs answer at once, more run as a job (``status: "queued"``).

        Nothing charged when every result failed its check: :class:`CheckFailed`. Over the
        approval threshold or budget: :class:`ApprovalRequired` (its ``body["approval"]``).
        """
        body: Dict[str, Any] = {
            "tool": tool,
            "inputs": [dict(item) for item in inputs],
            # The same key on every try: a retry replays the first answer, never buys twice.
            "idempotency_key": idempotency_key or f"py-{uuid.uuid4()}",
        }
        if max_price is not None:
            body["max_price"] = max_price
        if fallback is not None:
            body["fallback"] = fallback
        if approval_id is not None:
            body["approval_id"] = approval_id
        return cast(Union[ExecuteResult, JobAccepted], self.request("POST", "/v1/execute", body=body, cancel=cancel))

    def job(self, job_id: str) -> Job:
        return cast(Job, self.request("GET", f"/v1/jobs/{_segment(job_id)}")["job"])

    def wait_for_job(
        self,
        job_id: str,
        *,
        poll_interval: float = 2.0,
        timeout: float = 3 * 3600.0,
        on_progress: Optional[Callable[[Job], None]] = None,
    ) -> Job:
        """Polls a job until it is done, telling ``on_progress`` each time its progress moves."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            job = self.job(job_id)
            done = job["progress"]["done"]
            if on_progress is not None and done != last:
                on_progress(job)
                last = done
            if job["status"] == "done":
                return job
            if time.monotonic() > deadline:
                raise client_error("timeout", f"Job {job_id} was not done within {timeout} seconds")
            (self._sleep or time.sleep)(poll_interval)

    def receipts(self, *, page_size: int = 50) -> Iterator[Receipt]:
        """Every receipt of the org, newest first, page after page."""
        after: Optional[str] = None
        while True:
            page = self.request("GET", "/v1/receipts", query={"limit": page_size, "starting_after": after})
            for receipt in page.get("receipts", []):
                yield cast(Receipt, receipt)
            if not page.get("has_more") or not page.get("receipts"):
                return
            after = page["receipts"][-1]["id"]

    def receipt(self, receipt_id: str) -> Receipt:
        return cast(Receipt, self.request("GET", f"/v1/receipts/{_segment(receipt_id)}")["receipt"])

    def open_dispute(self, receipt_id: str, item_index: int, reason: Optional[str] = None) -> Dict[str, Any]:
        body: Dict[str, Any] = {"receipt_id": receipt_id, "item_index": item_index}
        if reason is not None:
            body["reason"] = reason
        return self.request("POST", "/v1/disputes", body=body)["dispute"]

    def dispute(self, dispute_id: str) -> Dict[str, Any]:
        return self.request("GET", f"/v1/disputes/{_segment(dispute_id)}")["dispute"]

    def approval(self, approval_id: str) -> Dict[str, Any]:
        return self.request("GET", f"/v1/approvals/{_segment(approval_id)}")["approval"]

    # -- the agent, its money, the gateway ---------------------------------------------------

    def balance(self) -> Dict[str, Any]:
        return self.request("GET", "/v1/balance")

    def agent(self) -> Dict[str, Any]:
        return self.request("GET", "/v1/agent")["agent"]

    def call(
        self,
        endpoint: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        path_params: Optional[Mapping[str, Any]] = None,
        body: Optional[Mapping[str, Any]] = None,
        max_price: Optional[int] = None,
    ) -> Dict[str, Any]:
        """A gateway call (``<provider>/<endpoint>``): the provider's own parameters in, its answer out."""
        request: Dict[str, Any] = {"endpoint": endpoint}
        if query is not None:
            request["query"] = dict(query)
        if path_params is not None:
            request["path_params"] = dict(path_params)
        if body is not None:
            request["body"] = body
        if max_price is not None:
            request["max_price"] = max_price
        return self.request("POST", "/v1/call", body=request)

    def endpoints(
        self,
        q: Optional[str] = None,
        *,
        category: Optional[str] = None,
        provider: Optional[str] = None,
        availability: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        """The gateway catalogue, priced for this key's plan."""
        query = {"q": q, "category": category, "provider": provider, "availability": availability}
        return self.request("GET", "/v1/endpoints", query=query)["endpoints"]

    # -- org endpoints (an org key) ------------------------------------------------------------

    def org(self, org_id: str) -> "OrgClient":
        return OrgClient(self, org_id)


class OrgClient:
    """The endpoints under ``/v1/orgs/{org_id}`` for a script holding an org key."""

    def __init__(self, client: Client, org_id: str) -> None:
        self._client = client
        self._prefix = f"/v1/orgs/{_segment(org_id)}"

    def agents(self, *, page_size: int = 50) -> List[Dict[str, Any]]:
        """Every agent of the org, newest first, read page after page while ``has_more`` says so."""
        agents: List[Dict[str, Any]] = []
        after: Optional[str] = None
        while True:
            query = {"limit": page_size, "starting_after": after}
            page = self._client.request("GET", f"{self._prefix}/agents", query=query)
            agents.extend(page.get("agents", []))
            if not page.get("has_more") or not page.get("agents"):
                return agents
            after = page["agents"][-1]["id"]

    def create_agent(self, name: str, **settings: Any) -> Dict[str, Any]:
        """A new agent; the answer's ``key`` is shown only now."""
        return self._client.request("POST", f"{self._prefix}/agents", body={"name": name, **settings})

    def usage(self, start: Optional[str] = None, end: Optional[str] = None) -> Dict[str, Any]:
        return self._client.request("GET", f"{self._prefix}/usage", query={"from": start, "to": end})

    def receipts(self, *, limit: int = 50, starting_after: Optional[str] = None) -> Dict[str, Any]:
        query = {"limit": limit, "starting_after": starting_after}
        return self._client.request("GET", f"{self._prefix}/receipts", query=query)

    def receipt_items(self, receipt_id: str, *, limit: int = 50, starting_after: Optional[int] = None) -> Dict[str, Any]:
        """A page of a receipt's items with their inputs and kept results, by index."""
        query = {"limit": limit, "starting_after": None if starting_after is None else str(starting_after)}
        return self._client.request("GET", f"{self._prefix}/receipts/{_segment(receipt_id)}/items", query=query)

    def approvals(self, status: Optional[str] = None) -> Dict[str, Any]:
        return self._client.request("GET", f"{self._prefix}/approvals", query={"status": status})

    def approve(self, approval_id: str, note: Optional[str] = None) -> Dict[str, Any]:
        body = {} if note is None else {"note": note}
        path = f"{self._prefix}/approvals/{_segment(approval_id)}/approve"
        return self._client.request("POST", path, body=body)["approval"]

    def reject(self, approval_id: str, note: Optional[str] = None) -> Dict[str, Any]:
        body = {} if note is None else {"note": note}
        path = f"{self._prefix}/approvals/{_segment(approval_id)}/reject"
        return self._client.request("POST", path, body=body)["approval"]

    def events(self, event_type: Optional[str] = None, limit: int = 50) -> Dict[str, Any]:
        return self._client.request("GET", f"{self._prefix}/events", query={"type": event_type, "limit": limit})


def _segment(value: str) -> str:
    return urllib.parse.quote(value, safe="")
