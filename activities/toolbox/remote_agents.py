"""The worker's remote agents, each a toolbox that may be down, as its MCP servers are
(activities/toolbox/mcp_servers.py): one whose card cannot be fetched at start does not
stop the worker; its tools are not offered until it answers, and a task fetches its card
again with backoff and hands its skills to the worker once it does (`on_up`).

A card that is not the pinned one is no outage: the agent stays down, with the two
digests in its `reason`, until an operator pins the new digest and restarts the worker.
A skill the file declares that the card lacks is a ConfigError at start."""

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentrt.activities.ports import Tool, ToolFailure
from agentrt.activities.toolbox.late import LateSources
from agentrt.activities.toolbox.remote_agent import remote_tools
from agentrt.activities.toolbox.remote_config import RemoteAgent
from agentrt.activities.toolbox.remote_http import RemoteConnection
from agentrt.contracts.errors import ConfigError
from agentrt.core.outbound import Policy
from agentrt.core.settings import Settings

logger = logging.getLogger("agentrt.remote")


def opened_agents(agents: Sequence[RemoteAgent], settings: Settings) -> "RemoteAgents":
    """The worker's remote agents under its allow-list settings (a malformed one is a
    ConfigError), not opened yet."""
    worker = settings.worker
    try:
        policy = Policy.parse(
            worker.remote_agents_allowed_networks, worker.remote_agents_allowed_hosts
        )
    except ValueError as exc:
        raise ConfigError(f"AGENTRT_REMOTE_AGENTS_ALLOWED_NETWORKS / _HOSTS: {exc}") from None
    return RemoteAgents(agents, policy, retry_max_seconds=worker.mcp_retry_max_seconds)


@dataclass
class AgentState:
    conn: RemoteConnection
    tools: list[Tool]
    reason: str | None = "not fetched yet"  # None: up
    stuck: bool = False  # a card that is not the pinned one: no use fetching it again


class RemoteAgents(LateSources[AgentState]):
    """`await open()` fetches each card once, `retry(on_up)` keeps fetching the down
    ones, `close()` ends both."""

    what = "remote agent"

    def __init__(
        self,
        agents: Sequence[RemoteAgent],
        policy: Policy,
        *,
        retry_max_seconds: float = 30.0,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        states = {
            a.name: AgentState(RemoteConnection(a, a.token(environ), policy), []) for a in agents
        }
        super().__init__(states, retry_max_seconds)
        self._logger = logger

    async def _list(self, state: AgentState, *, at_start: bool) -> bool:
        name = state.conn.name
        try:
            card = await state.conn.card()
            state.tools = list(remote_tools(state.conn, card))
        except ToolFailure as exc:
            state.reason, state.stuck = str(exc), exc.reason == "card_changed"
            log = logger.error if state.stuck else logger.warning
            if at_start or state.stuck:
                log("remote agent %s is down: %s", name, state.reason)
            return False
        except ValueError as exc:  # the file names a skill the card lacks
            if at_start:
                raise ConfigError(str(exc)) from None
            state.reason, state.stuck = str(exc), True
            logger.error("remote agent %s answered, but %s; it stays down", name, exc)
            return False
        state.reason = None
        logger.info("remote agent %s is up: %d skills", name, len(state.tools))
        return True

    async def _close(self, state: AgentState) -> None:
        await state.conn.close()
