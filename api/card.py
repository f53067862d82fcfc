"""The Agent Card: published profiles as skills, the bearer scheme, our JSON-RPC interface."""

import logging
from collections.abc import Mapping

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

from agentrt.api.settings import ApiSettings
from agentrt.contracts.profiles import AgentProfile
from agentrt.store.a2a_view import RETAINABLE_LEVELS

logger = logging.getLogger(__name__)

BEARER = "bearer"
REST_PREFIX = "/rest"


def servable(profiles: Mapping[str, AgentProfile]) -> dict[str, AgentProfile]:
    """Published profiles that can keep a result; the others are refused (and said so)."""
    out: dict[str, AgentProfile] = {}
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


def agent_card(settings: ApiSettings, profiles: Mapping[str, AgentProfile]) -> AgentCard:
    skills = [
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
    return AgentCard(
        name=settings.api_agent_name,
        description=settings.api_agent_description,
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=settings.public_url() + "/",
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            ),
            AgentInterface(
                url=settings.public_url() + REST_PREFIX,
                protocol_binding="HTTP+JSON",
                protocol_version="1.0",
            ),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=skills,
        security_schemes={
            BEARER: SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer", description="An API key issued by the operator."
                )
            )
        },
        security_requirements=[SecurityRequirement(schemes={BEARER: StringList()})],
    )
