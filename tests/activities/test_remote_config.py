"""Issue 43 item 2: remote agents as the servers file and `Profile(tools=[...])` declare
them. Bad input is a clear error naming the entry, and nothing is loaded."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from agentrt import Profile, RemoteAgent, RemoteSkill, ToolEffect
from agentrt.activities.toolbox.mcp_config import McpConfig, load_mcp_config
from agentrt.contracts.errors import ConfigError
from agentrt.workers.held import held_by

PIN = "sha256:" + "ab" * 32


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "servers.yaml"
    path.write_text(text)
    return path


def test_the_servers_file_loads_remote_agents_with_their_skills(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        f"""
remote_agents:
  - name: partner
    url: https://partner.example/
    token_from_env: PARTNER_TOKEN
    pinned_card_digest: {PIN}
    skills:
      quote: READ_ONLY
      refund: {{output_schema: {{type: object}}}}
""",
    )
    config = load_mcp_config(path, environ={"PARTNER_TOKEN": "t"})
    (agent,) = config.remote_agents
    assert agent.skills["quote"].effect is ToolEffect.READ_ONLY
    # A skill declared without an effect, and one not declared, are non-idempotent writes.
    assert agent.skills["refund"].effect is ToolEffect.NON_IDEMPOTENT_WRITE
    assert RemoteSkill().effect is ToolEffect.NON_IDEMPOTENT_WRITE
    assert agent.token({"PARTNER_TOKEN": " t \n"}) == "t"


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        ("  - {name: p, url: https://p.ex/, token_from_env: NOT_SET_X}", "NOT_SET_X is not set"),
        ("  - {name: p, url: https://p.ex/, tokn: x}", "tokn"),
        ("  - {name: p, url: ftp://p.example/}", "url"),
        ("  - {name: p.q, url: https://p.ex/}", "name"),
        ("  - {name: p, url: https://p.ex/, pinned_card_digest: md5:00}", "pinned_card_digest"),
        ("  - {name: p, url: https://p.ex/, skills: {s: MAYBE}}", "effect"),
        ("  - {name: p, url: https://p.ex/, token_from_env: A, token_file: /f}", "not both"),
    ],
)  # fmt: skip
def test_a_bad_remote_agent_entry_is_refused_naming_it(
    tmp_path: Path, entry: str, error: str
) -> None:
    with pytest.raises(ConfigError, match=error):
        load_mcp_config(_file(tmp_path, f"remote_agents:\n{entry}\n"), environ={})


def test_an_mcp_server_and_a_remote_agent_may_not_share_a_name() -> None:
    with pytest.raises(ValidationError, match="duplicate server name"):
        McpConfig.model_validate(
            {
                "servers": [{"name": "p", "url": "https://p.ex/mcp"}],
                "remote_agents": [{"name": "p", "url": "https://p.ex/"}],
            }
        )


def test_a_profile_holds_a_remote_agent_as_the_toolbox_of_its_name() -> None:
    partner = RemoteAgent(name="partner", url="https://partner.example/", pinned_card_digest=PIN)
    one = Profile(name="one", model="scripted:demo", tools=[partner])
    two = Profile(name="two", model="scripted:demo", tools=[partner])
    assert one.toolboxes == ["partner"] and one.tools == []
    assert held_by([one, two]).remote_agents == [partner]
    other = RemoteAgent(name="partner", url="https://elsewhere.example/")
    three = Profile(name="three", model="scripted:demo", tools=[other])
    with pytest.raises(ConfigError, match="two different remote agents are named 'partner'"):
        held_by([one, three])
