"""The A2A surfaces over HTTP against a live 127.0.0.1 server: JSON-RPC at "/" and the REST
binding under /rest.

Cases come from the A2A proto: the SDK's proto-to-JSON-Schema (`a2a.server.routes.
_proto_schema`, what its FastAPI routes publish as OpenAPI) gives every method's params and
every REST body. The REST binding is an OpenAPI document built from it, and schemathesis
generates its requests. JSON-RPC has one path for every method, which OpenAPI cannot
describe per method, so each method's params schema is a schemathesis operation of its own
whose generated body goes into a JSON-RPC envelope. Hand-written near-valid cases (the
tasks that exist, their states, other callers, broken envelopes, raw bodies, content types)
reach past the first validation.
"""

import uuid
from collections.abc import Callable
from typing import Any

import httpx
import schemathesis
from a2a.server.routes._jsonrpc_schema import METHOD_TYPES
from a2a.server.routes._proto_schema import message_schema
from a2a.types.a2a_pb2 import SendMessageRequest, TaskPushNotificationConfig
from hypothesis import strategies as st
from sqlalchemy import Engine

from bench.fuzz_core import LogTrap, Tally, drive
from bench.fuzz_http import HttpSurface, Request
from bench.fuzz_local import JSON


def _body(ref: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": ref}}}


def rest_openapi(task_ids: list[str]) -> dict[str, Any]:
    """The REST binding (see a2a.server.routes.rest_routes) as OpenAPI 3.0."""
    comp: dict[str, Any] = {}
    send = message_schema(SendMessageRequest.DESCRIPTOR, comp)
    push = message_schema(TaskPushNotificationConfig.DESCRIPTOR, comp)
    ids = {"anyOf": [{"enum": task_ids}, {"type": "string"}]} if task_ids else {"type": "string"}
    tid = {"name": "id", "in": "path", "required": True, "schema": ids}
    pid = {"name": "push_id", "in": "path", "required": True, "schema": {"type": "string"}}
    hist = {"name": "historyLength", "in": "query", "schema": {"type": "integer"}}
    listing = [
        hist,
        {"name": "pageSize", "in": "query", "schema": {"type": "integer"}},
        {"name": "pageToken", "in": "query", "schema": {"type": "string"}},
        {"name": "contextId", "in": "query", "schema": {"type": "string"}},
        {"name": "status", "in": "query", "schema": {"type": "string"}},
        {"name": "includeArtifacts", "in": "query", "schema": {"type": "boolean"}},
    ]
    any_reply = {"default": {"description": "any"}}

    def op(**extra: Any) -> dict[str, Any]:
        return {"responses": any_reply, **extra}

    paths = {
        "/rest/message:send": {"post": op(requestBody=_body(send))},
        "/rest/message:stream": {"post": op(requestBody=_body(send))},
        "/rest/tasks": {"get": op(parameters=listing)},
        "/rest/tasks/{id}": {"get": op(parameters=[tid, hist])},
        "/rest/tasks/{id}:cancel": {"post": op(parameters=[tid])},
        "/rest/tasks/{id}:subscribe": {"get": op(parameters=[tid])},
        "/rest/tasks/{id}/pushNotificationConfigs": {
            "get": op(parameters=[tid]),
            "post": op(parameters=[tid], requestBody=_body(push)),
        },
        "/rest/tasks/{id}/pushNotificationConfigs/{push_id}": {
            "get": op(parameters=[tid, pid]),
            "delete": op(parameters=[tid, pid]),
        },
        "/rest/extendedAgentCard": {"get": op()},
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "agentrt A2A REST binding", "version": "1.0"},
        "paths": paths,
        "components": {"schemas": comp},
    }


def rpc_params_openapi() -> dict[str, Any]:
    """One pseudo-operation per JSON-RPC method whose body is that method's params."""
    comp: dict[str, Any] = {}
    paths = {
        f"/rpc/{method}": {
            "post": {
                "requestBody": _body(message_schema(cls.DESCRIPTOR, comp)),
                "responses": {"default": {"description": "any"}},
            }
        }
        for method, cls in METHOD_TYPES.items()
    }
    return {"openapi": "3.0.3", "info": {"title": "rpc", "version": "1"}, "paths": paths,
            "components": {"schemas": comp}}  # fmt: skip


# --- cases ---------------------------------------------------------------------------------


def _json(value: Any) -> bytes:
    import json

    return json.dumps(value, default=str).encode()


def rpc_requests(task_ids: list[str], keys: dict[str, str]) -> st.SearchStrategy[Request]:
    schema = schemathesis.openapi.from_dict(rpc_params_openapi())
    generated = st.one_of(
        [
            schema[f"/rpc/{m}"]["POST"].as_strategy().map(lambda c, m=m: (m, c.body))
            for m in METHOD_TYPES
        ]
    )
    ids = st.sampled_from(task_ids) | st.uuids().map(str) | st.text(max_size=20)
    text = st.sampled_from(["hello", "which order", "two questions", "   ", ""]) | st.text(
        max_size=30
    )
    message = st.fixed_dictionaries(
        {"messageId": st.uuids().map(str) | st.text(max_size=5)},
        optional={
            "role": st.sampled_from(["ROLE_USER", "ROLE_AGENT", "ROLE_UNSPECIFIED", "user", 7]),
            "parts": st.lists(
                st.fixed_dictionaries({"text": text})
                | st.fixed_dictionaries({"data": JSON})
                | st.fixed_dictionaries({"url": st.just("https://x.invalid/f")})
                | JSON,
                max_size=3,
            ),
            "taskId": ids,
            "contextId": st.uuids().map(str) | st.text(max_size=5),
            "metadata": st.fixed_dictionaries(
                {"skill": st.sampled_from(["helper", "redactor", "vault", "internal", "nosuch"])}
            )
            | JSON,
        },
    )
    config = st.fixed_dictionaries(
        {},
        optional={
            "returnImmediately": st.booleans(),
            "historyLength": st.integers(-5, 2**40),
            "taskPushNotificationConfig": st.fixed_dictionaries(
                {"url": st.sampled_from(["http://127.0.0.1:9/x", "ftp://x", "", "https://[::1]/"])}
            ),
        },
    )
    near = st.one_of(
        st.tuples(
            st.sampled_from(["SendMessage", "SendStreamingMessage"]),
            st.fixed_dictionaries({"message": message}, optional={"configuration": config}),
        ),
        st.tuples(
            st.sampled_from(["GetTask", "CancelTask", "SubscribeToTask"]),
            st.fixed_dictionaries({"id": ids}, optional={"historyLength": st.integers(-3, 10)}),
        ),
        st.tuples(
            st.just("ListTasks"),
            st.fixed_dictionaries(
                {},
                optional={
                    "pageSize": st.integers(-2, 200),
                    "pageToken": st.text(max_size=20),
                    "status": st.sampled_from(["TASK_STATE_COMPLETED", "NOPE", ""]),
                    "statusTimestampAfter": st.sampled_from(["2020-01-01T00:00:00Z", "yesterday"]),
                },
            ),
        ),
        st.tuples(
            st.sampled_from(
                [
                    "CreateTaskPushNotificationConfig",
                    "GetTaskPushNotificationConfig",
                    "ListTaskPushNotificationConfigs",
                    "DeleteTaskPushNotificationConfig",
                ]
            ),
            st.fixed_dictionaries(
                {"taskId": ids},
                optional={"id": st.text(max_size=8), "url": st.sampled_from(["ftp://x", "x"])},
            ),
        ),
    )
    envelope = st.tuples(generated | near, st.sampled_from([1, "a", None, 2.5, [1]])).map(
        lambda p: {"jsonrpc": "2.0", "id": p[1], "method": p[0][0], "params": p[0][1]}
    )
    broken = st.one_of(
        JSON,
        st.fixed_dictionaries(
            {},
            optional={
                "jsonrpc": st.sampled_from(["2.0", "1.0", 2]),
                "id": JSON,
                "method": st.sampled_from([*METHOD_TYPES, "", "nosuch", "tasks/get"]) | JSON,
                "params": JSON,
            },
        ),
    )
    bodies = (envelope.map(_json) | broken.map(_json)) | st.binary(max_size=60)
    auth = st.sampled_from(
        [f"Bearer {keys['alice']}"] * 6 + [f"Bearer {keys['bob']}", "Bearer nope", "", "Basic x"]
    )
    ctype = st.sampled_from(
        ["application/json"] * 6 + ["application/a2a+json", "text/plain", "", "application/xml"]
    )
    return st.tuples(bodies, auth, ctype).map(lambda t: ("POST", "/", _headers(t[1], t[2]), t[0]))


def _headers(auth: str, ctype: str) -> dict[str, str]:
    out = {"A2A-Version": "1.0"}
    if auth:
        out["Authorization"] = auth
    if ctype:
        out["Content-Type"] = ctype
    return out


def rest_requests(task_ids: list[str], keys: dict[str, str]) -> st.SearchStrategy[Request]:
    schema = schemathesis.openapi.from_dict(rest_openapi(task_ids))
    ops = [
        schema[path][method.upper()].as_strategy()
        for path, methods in rest_openapi(task_ids)["paths"].items()
        for method in methods
    ]
    auth = st.sampled_from([f"Bearer {keys['alice']}"] * 8 + [f"Bearer {keys['bob']}", ""])
    ctype = st.sampled_from(["application/json"] * 8 + ["text/plain", "application/a2a+json"])

    def request(case: Any, auth: str, ctype: str) -> Request:
        kwargs = case.as_transport_kwargs(base_url="")
        url = httpx.URL(kwargs["url"]).copy_merge_params(case.query or {})
        body = None if case.body is None or type(case.body).__name__ == "NotSet" else case.body
        path = url.raw_path.decode()
        return (case.method, path, _headers(auth, ctype), None if body is None else _json(body))

    return st.builds(request, st.one_of(ops), auth, ctype)


def a2a_surfaces(
    base_url: str,
    engine: Engine,
    task_ids: list[str],
    keys: dict[str, str],
    cases: Callable[[str], int],
    seed_value: int | None,
    trap: LogTrap,
) -> list[Tally]:
    surface = HttpSurface(base_url, engine)
    rpc, rest = Tally("A2A JSON-RPC"), Tally("A2A REST (schemathesis)")
    try:
        drive(rpc, rpc_requests(task_ids, keys), surface.check,
              cases=cases("rpc"), seed_value=seed_value, trap=trap)  # fmt: skip
        drive(rest, rest_requests(task_ids, keys), surface.check,
              cases=cases("rest"), seed_value=seed_value, trap=trap)  # fmt: skip
    finally:
        surface.close()
    return [rpc, rest]


def new_id() -> str:
    return str(uuid.uuid4())
