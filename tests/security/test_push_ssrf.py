"""Issue 25, outbound requests: a push goes only to an address checked at that moment,
never by a redirect, and one client's slow webhooks do not hold up another client's.

Registration is tested over the live A2A server; delivery with the delivery loop itself
(PushDelivery) over the suite's database, tasks made in the store (their first journal
event is written with them), and real webhook receivers on 127.0.0.1. No test sends
anything off this machine, nor makes a DNS query: names resolve from /etc/hosts
(localhost) or through the resolver the loop is given."""

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest
from starlette.types import Receive, Scope, Send
from temporalio.client import Client

from agentrt.api.a2a.delivery import PushDelivery
from agentrt.api.metrics import ApiMetrics
from agentrt.api.settings import ApiSettings
from agentrt.store.a2a.journal import A2AJournal
from agentrt.store.a2a.push import A2APushStore, Delivery, PushConfig
from agentrt.store.a2a.tasks import A2AStore
from agentrt.workers.compose import WorkerResources
from tests._asgi import on_localhost
from tests.api.conftest import _serve, user_message
from tests.workflows._waiting import Calls, watch


@dataclass
class Receiver:
    """A webhook on 127.0.0.1: answers `status` (after `hold` is set, when given)."""

    status: int = 200
    location: str = ""
    hold: asyncio.Event | None = None
    calls: list[tuple[dict[str, str], dict[str, Any], float]] = field(default_factory=list)
    url: str = ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body, more = b"", True
        while more:
            msg = await receive()
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        self.calls.append((headers, json.loads(body or b"{}"), time.monotonic()))
        if self.hold is not None:
            await self.hold.wait()
        extra = [(b"location", self.location.encode())] if self.location else []
        await send({"type": "http.response.start", "status": self.status, "headers": extra})
        await send({"type": "http.response.body", "body": b""})


@asynccontextmanager
async def receiving(receiver: Receiver) -> AsyncIterator[Receiver]:
    async with on_localhost(receiver) as base:
        receiver.url = f"{base}/hook"
        try:
            yield receiver
        finally:
            if receiver.hold is not None:
                receiver.hold.set()  # a held request would keep the server from exiting


def _settings(base: ApiSettings, **push: Any) -> ApiSettings:
    defaults: dict[str, Any] = {
        "allowed_networks": "", "allowed_hosts": "", "backoff_seconds": 0.05,
        "max_attempts": 3, "timeout_seconds": 5.0,
    }  # fmt: skip
    return base.replace(push={**defaults, **push}, api={"poll_seconds": 0.05})


MakeTask = Callable[[str, str], str]
Resolver = Callable[[str, int], Awaitable[list[str]]]


@pytest.fixture
def make_task(a2a_parts: WorkerResources) -> Iterator[MakeTask]:
    """Tasks with their first journal event and a config that delivers from the start;
    removed afterwards, so no other test's delivery loop meets their configs."""
    made: list[str] = []

    def make(owner: str, url: str) -> str:
        task_id = str(uuid.uuid4())
        A2AStore(a2a_parts.ctx).create(
            task_id=task_id, context_id=str(uuid.uuid4()), workflow_id=str(uuid.uuid4()),
            owner=owner, profile="helper", answer_level="full",
            message=user_message("hi") | {"taskId": task_id},
        )  # fmt: skip
        # Straight into the store: as a config stored before these checks, or one whose
        # name resolved elsewhere when it was registered.
        A2APushStore(a2a_parts.ctx).upsert(
            task_id=task_id, config_id="c", url=url, token="notify-token",
            auth_scheme="Bearer", auth_credentials="push-secret", from_start=True,
        )  # fmt: skip
        made.append(task_id)
        return task_id

    yield make
    for task_id in made:
        A2AStore(a2a_parts.ctx).delete(task_id)


@asynccontextmanager
async def delivering(
    settings: ApiSettings, parts: WorkerResources, resolver: Resolver | None = None
) -> AsyncIterator[PushDelivery]:
    push, journal = A2APushStore(parts.ctx), A2AJournal(parts.ctx)
    given = {} if resolver is None else {"resolver": resolver}
    delivery = PushDelivery(settings, push, journal, **given)
    stop = asyncio.Event()
    loop = asyncio.create_task(delivery.run(stop))
    try:
        yield delivery
    finally:
        stop.set()
        await asyncio.wait_for(loop, 10)


async def _until(check: Callable[[], bool], within: float = 15.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not within the time")


async def _later_rounds(claims: Calls, rounds: int = 2) -> list[PushConfig]:
    """What the delivery loop claims in its next `rounds` rounds: whatever a test says must
    not be delivered again would have been claimed in one of them."""
    mark = len(claims.returned)
    await claims.until(lambda c: len(c.returned) >= mark + rounds, f"{rounds} more rounds")
    return [cfg for batch in claims.returned[mark:] for cfg in batch]


def _deliveries(parts: WorkerResources, task_id: str) -> list[Delivery]:
    return A2APushStore(parts.ctx).deliveries(task_id, "c")


def _dead(parts: WorkerResources, task_id: str) -> bool:
    return any(d.status == "dead" for d in _deliveries(parts, task_id))


# --- registration ------------------------------------------------------------------------


async def test_loopback_metadata_cgnat_and_multicast_targets_in_any_form_are_refused_at_registration(  # noqa: E501
    client: Client,
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
) -> None:
    settings = _settings(a2a_settings)  # no allow-list: as deployed
    async with receiving(Receiver()) as hook, _serve(client, settings, a2a_parts) as live:
        port = hook.url.split(":")[2].split("/")[0]
        sent = await live.rpc("SendMessage", {"message": user_message("order 5?")})
        task_id = sent["result"]["task"]["id"]
        refused = [
            f"http://2130706433:{port}/", f"http://127.1:{port}/", f"http://0x7f000001:{port}/",
            f"http://0:{port}/", f"http://0177.0.0.1:{port}/", f"http://127.0.0.1.:{port}/",
            f"http://[::1]:{port}/", f"http://[::ffff:127.0.0.1]:{port}/",
            f"http://[::ffff:7f00:1]:{port}/", f"http://[64:ff9b::7f00:1]:{port}/",
            f"http://[2002:7f00:1::]:{port}/", f"http://localhost:{port}/",
            f"http://LocalHost.:{port}/", f"http://x.localhost:{port}/",
            "http://2852039166/", "http://169.254.169.254./", "http://0xa9fea9fe/",
            "http://metadata.google.internal/computeMetadata/v1/", "http://100.64.0.1/",
            "http://224.0.0.1/", "http://[ff02::1]/", "http://239.255.255.250:1900/",
            "http://10.0.0.5/", "http://192.168.1.1/", "http://[fe80::1%25lo]/",
            "http://[fc00::1]/", "http://240.0.0.1/", "http://255.255.255.255/",
            "http://user:pw@example.com/", "http://user@example.com/", "ftp://example.com/",
            "http://xn--zz.com/", "http://ex ample.com/", "http://example.com/\x00",
        ]  # fmt: skip
        for url in refused:
            params = {"taskId": task_id, "url": url}
            reply = await live.rpc("CreateTaskPushNotificationConfig", params)
            assert reply.get("error", {}).get("code") == -32602, url
        listed = await live.rpc("ListTaskPushNotificationConfigs", {"taskId": task_id})
        assert listed["result"].get("configs", []) == []
        assert hook.calls == []


# --- delivery ----------------------------------------------------------------------------


def _hosts_file_loopback_name() -> str | None:
    """A name /etc/hosts maps to a loopback address, other than localhost (refused by name
    before any lookup): resolving it makes no DNS query."""
    try:
        lines = Path("/etc/hosts").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 2 and fields[0].startswith("127."):
            for name in fields[1:]:
                if "localhost" not in name.lower():
                    return name
    return None


async def test_a_hosts_file_name_of_loopback_gets_no_post_and_becomes_a_dead_letter(
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    make_task: MakeTask,
) -> None:
    """A config naming this machine (stored before the check, or a name that resolved
    elsewhere when it was registered) is resolved and checked at delivery: nothing is sent,
    neither the notification token nor the credentials."""
    name = _hosts_file_loopback_name()
    if name is None:
        pytest.skip("/etc/hosts names no loopback address but localhost")
    settings = _settings(a2a_settings)
    async with receiving(Receiver()) as hook:
        port = hook.url.split(":")[2].split("/")[0]
        task_id = make_task("alice", f"http://{name}:{port}/hook")
        async with delivering(settings, a2a_parts):
            await _until(lambda: _dead(a2a_parts, task_id))
        assert hook.calls == []
        [d] = _deliveries(a2a_parts, task_id)
        assert d.attempts == 1 and "loopback" in (d.last_error or "")
        cfg = A2APushStore(a2a_parts.ctx).get(task_id, "c")
        assert cfg is not None and "loopback" in (cfg.dead_reason or "")


async def test_one_disallowed_address_among_a_names_answers_refuses_the_delivery(
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    make_task: MakeTask,
) -> None:
    """A name that answers with an allowed address and the metadata address (rebinding)."""
    settings = _settings(a2a_settings, allowed_networks="127.0.0.0/8")

    async def rebinding(host: str, port: int) -> list[str]:
        assert host == "hooks.rebind.test"
        return ["127.0.0.1", "169.254.169.254"]

    async with receiving(Receiver()) as hook:
        port = hook.url.split(":")[2].split("/")[0]
        task_id = make_task("alice", f"http://hooks.rebind.test:{port}/hook")
        async with delivering(settings, a2a_parts, rebinding):
            await _until(lambda: _dead(a2a_parts, task_id))
        assert hook.calls == []
        assert "link-local" in (_deliveries(a2a_parts, task_id)[0].last_error or "")


async def test_the_post_goes_to_the_checked_address_with_the_urls_own_host_header(
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    make_task: MakeTask,
) -> None:
    """The name is resolved once, by the loop's resolver, and the connection goes to the
    address it checked: the receiver (on 127.0.0.1, allow-listed) sees the name's Host."""
    settings = _settings(a2a_settings, allowed_networks="127.0.0.1/32")
    asked: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]

    async with receiving(Receiver()) as hook:
        port = hook.url.split(":")[2].split("/")[0]
        task_id = make_task("alice", f"http://hooks.pinned.test:{port}/hook")
        async with delivering(settings, a2a_parts, resolver):
            await _until(lambda: bool(hook.calls))
            await _until(
                lambda: [d.status for d in _deliveries(a2a_parts, task_id)] == ["delivered"]
            )
        headers, body, _ = hook.calls[0]
        assert headers["host"] == f"hooks.pinned.test:{port}"
        assert headers["authorization"] == "Bearer push-secret"
        assert body["statusUpdate"]["taskId"] == task_id
        assert asked == ["hooks.pinned.test"]


async def test_a_redirect_is_not_followed_and_retries_end_in_a_counted_dead_letter(
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    make_task: MakeTask,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = _settings(a2a_settings, allowed_networks="127.0.0.0/8", backoff_seconds=0.2)
    metrics = ApiMetrics()
    metrics.watch(a2a_parts.ctx)

    def dead_letters() -> float:
        text = generate_latest(metrics.registry).decode()
        name = "agentrt_push_dead_letters_total "
        return float(next(ln for ln in text.splitlines() if ln.startswith(name)).split()[1])

    before = dead_letters()
    async with receiving(Receiver()) as inner, receiving(Receiver(status=307)) as outer:
        outer.location = inner.url
        task_id = make_task("alice", outer.url)
        claims = watch(monkeypatch, A2APushStore, "claim")
        async with delivering(settings, a2a_parts):
            await _until(lambda: _dead(a2a_parts, task_id))
            # A dead letter is not tried again: the rounds after it do not claim it.
            assert [c for c in await _later_rounds(claims) if c.task_id == task_id] == []
        assert inner.calls == []  # never followed
        assert len(outer.calls) == 3  # push_max_attempts, then given up
        [d] = _deliveries(a2a_parts, task_id)
        assert d.attempts == 3 and d.last_error == "HTTP 307"
        gaps = [b[2] - a[2] for a, b in zip(outer.calls, outer.calls[1:], strict=False)]
        assert gaps[0] >= 0.2 and gaps[1] >= 0.4  # the backoff doubles
        assert dead_letters() == before + 1


async def test_a_url_the_http_client_refuses_is_one_dead_letter_and_one_log_line(
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    make_task: MakeTask,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """urllib parses it, httpx does not (a malformed IDNA label): before, every delivery
    round failed on it with a traceback, 30 s apart, forever."""
    settings = _settings(a2a_settings, allowed_networks="127.0.0.0/8")
    task_id = make_task("alice", "http://xn--zz.com/hook")
    caplog.set_level(logging.INFO, logger="agentrt")
    claims = watch(monkeypatch, A2APushStore, "claim")
    async with delivering(settings, a2a_parts):
        await _until(lambda: _dead(a2a_parts, task_id), within=5.0)
        # Rounds after the dead letter, each of which would have logged it again.
        assert [c for c in await _later_rounds(claims) if c.task_id == task_id] == []
    mine = [r for r in caplog.records if task_id in r.getMessage()]
    assert [r.levelno for r in mine] == [logging.WARNING]
    assert all(r.exc_info is None for r in caplog.records)
    assert "does not parse" in mine[0].getMessage()


async def test_a_clients_slow_webhooks_do_not_delay_another_clients_push(
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    make_task: MakeTask,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """30 webhooks of alice that hold every request open, and one fast webhook of bob: bob's
    push arrives within a bound (it took 13-45 s behind alice's before: a delivery round
    waited for its slowest POST)."""
    settings = _settings(a2a_settings, allowed_networks="127.0.0.0/8", timeout_seconds=8.0)
    async with (
        receiving(Receiver(hold=asyncio.Event())) as slow,
        receiving(Receiver()) as fast,
    ):
        for _ in range(30):
            make_task("alice", slow.url)
        bobs = make_task("bob", fast.url)
        began = time.monotonic()
        claims = watch(monkeypatch, A2APushStore, "claim")
        async with delivering(settings, a2a_parts):
            await _until(lambda: bool(fast.calls), within=20.0)
            took = fast.calls[0][2] - began
            assert fast.calls[0][1]["statusUpdate"]["taskId"] == bobs
            # Sooner than any of alice's POSTs could time out: no round waited for one.
            assert took < settings.push.timeout_seconds, took
            # alice has push_client_concurrency (4) requests open at once, no more
            await _until(lambda: len(slow.calls) >= 4, within=5.0)
            # The rounds after claim none of hers while her four are open.
            assert [c for c in await _later_rounds(claims) if c.owner == "alice"] == []
            assert len(slow.calls) == 4
