"""The Agent Card: published profiles as skills, the bearer scheme, our JSON-RPC interface.
The skills are the profiles the workers registered (store/ops/registry.py), read for
each request, so a worker started after the API shows its skills."""

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from email.utils import format_datetime, parsedate_to_datetime

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from agentrt.api.settings import ApiSettings
from agentrt.contracts.registered import RegisteredProfile
from agentrt.store.a2a.view import RETAINABLE_LEVELS
from agentrt.store.ops.registry import ProfileRegistry

logger = logging.getLogger(__name__)

BEARER = "bearer"
REST_PREFIX = "/rest"


def servable(profiles: Mapping[str, RegisteredProfile]) -> dict[str, RegisteredProfile]:
    """Published profiles that can keep a result; the others are refused (and said so)."""
    out: dict[str, RegisteredProfile] = {}
    for name, profile in profiles.items():
        if not profile.publish:
            continue
        if profile.answer_level not in RETAINABLE_LEVELS:
            logger.warning(
                "profile %s is published but its answer level %s keeps no result: "
                "not offered over A2A (RESULT_NOT_RETAINABLE)",
                name,
                profile.answer_level,
            )
            continue
        out[name] = profile
    return out


def skills(profiles: Mapping[str, RegisteredProfile]) -> list[AgentSkill]:
    return [
        AgentSkill(
            id=p.name,
            name=p.name,
            description=p.description or f"The {p.name} agent.",
            tags=["agentrt", f"answer-level:{p.answer_level}"],
            input_modes=["text/plain"],
            output_modes=["text/plain"],
        )
        for p in servable(profiles).values()
    ]


def with_skills(registry: ProfileRegistry) -> Callable[[AgentCard], Awaitable[AgentCard]]:
    """The SDK's card modifier: the card with the skills registered now."""

    async def modify(card: AgentCard) -> AgentCard:
        served = await asyncio.to_thread(registry.all)
        out = AgentCard()
        out.CopyFrom(card)
        del out.skills[:]
        out.skills.extend(skills(served))
        return out

    return modify


def agent_card(settings: ApiSettings, profiles: Mapping[str, RegisteredProfile]) -> AgentCard:
    """The card with the skills of `profiles` (`with_skills` renews them per request)."""
    return AgentCard(
        name=settings.api.agent_name,
        description=settings.api.agent_description,
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=settings.api.url() + "/",
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            ),
            AgentInterface(
                url=settings.api.url() + REST_PREFIX,
                protocol_binding="HTTP+JSON",
                protocol_version="1.0",
            ),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        skills=skills(profiles),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        security_schemes={
            BEARER: SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer", description="An API key issued by the operator."
                )
            )
        },
        security_requirements=[SecurityRequirement(schemes={BEARER: StringList()})],
    )


def _not_modified_since(request: Request, modified: datetime) -> bool:
    """If-Modified-Since counts only without If-None-Match (RFC 9110 13.1.3)."""
    raw = request.headers.get("if-modified-since")
    if raw is None or "if-none-match" in request.headers:
        return False
    try:
        since = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return False  # an unparsable date is ignored, as the RFC says
    return since.tzinfo is not None and modified <= since


def with_last_modified(
    routes: Sequence[BaseRoute], *, built: datetime, registry: ProfileRegistry
) -> list[BaseRoute]:
    """The SDK's card routes (ETag, Cache-Control, If-None-Match) plus `Last-Modified`,
    the later of the moment this process built its card and the last change of a
    registered profile, and If-Modified-Since answered with a 304."""
    out: list[BaseRoute] = []
    for route in routes:
        if not isinstance(route, Route):
            out.append(route)
            continue
        inner = route.endpoint

        async def endpoint(request: Request, inner: object = inner) -> Response:
            changed = await asyncio.to_thread(registry.changed_at)
            modified = max(built, changed or built).replace(microsecond=0)
            stamp = format_datetime(modified, usegmt=True)
            response: Response = await inner(request)  # type: ignore[operator]
            response.headers["Last-Modified"] = stamp
            if response.status_code == 200 and _not_modified_since(request, modified):
                keep = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
                keep.pop("content-type", None)
                return Response(status_code=304, headers=keep)
            return response

        out.append(Route(route.path, endpoint, methods=list(route.methods or ["GET"])))
    return out
