"""The tree of runs in the views (contracts/agents.py): `GET /runs/{id}` of a parent lists its
child runs and a child's names its parent, over real HTTP; `agentrt status` prints both.
The runs: a worker in this process (tests/workflows/_team.py) on the suite's database,
which the live API reads."""

import io
import re
from pathlib import Path

from rich.console import Console
from temporalio.client import Client

from agentrt import Settings
from agentrt.contracts.agents import child_run_id
from agentrt.contracts.enums import RunStatus
from agentrt.starter.render import print_run
from tests.api.conftest import Live
from tests.api.ops_helpers import http, token
from tests.api.ops_helpers import name as principal
from tests.workflows._team import child_rule, delegating, name, profile, team


async def test_the_run_views_show_the_parent_and_its_children(
    live: Live, client: Client, settings: Settings, tmp_path: Path
) -> None:
    parent, child = name("team"), name("helper")
    profiles = [profile(parent, agents=[child]), profile(child)]
    rules = [delegating("team job", (child, "child job")), child_rule("child job", answer="Ok.")]
    async with team(client, settings, tmp_path, profiles, rules) as t:
        run_id = await t.runtime.start(parent, "team job")
        assert (await t.runtime.result(run_id)).status is RunStatus.COMPLETED
        kid = child_run_id(run_id, "r1.1")
        secret = token(live, principal("ops"), "runs:read", "runs:read-all", profiles=[parent])
        async with http(live, secret) as api:
            top = (await api.get(f"/runs/{run_id}")).json()
            below = (await api.get(f"/runs/{kid}")).json()
        assert top["children"] == [kid] and top["parent_run_id"] is None
        assert below["parent_run_id"] == run_id and below["children"] == []

        out = io.StringIO()
        print_run(Console(file=out, width=200), await t.runtime.status(run_id))
        print_run(Console(file=out, width=200), await t.runtime.status(kid))
        shown = out.getvalue()
        assert re.search(rf"children\s+{kid}", shown) and re.search(rf"parent\s+{run_id}", shown)
