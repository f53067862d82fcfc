"""A scripted model with one rule (a prompt with the word calls one tool, then answers),
and a profile that runs on it."""

import uuid
from typing import Any

from agentrt import Profile
from agentrt.activities.providers.scripted import RuleSet


def one_call(
    word: str, tool: str, arguments: dict[str, Any], answer: str, default_reply: str
) -> RuleSet:
    """The rule named after `word`: on a prompt containing it, call `tool` with
    `arguments`, then answer `answer`; any other prompt gets `default_reply`."""
    return RuleSet.model_validate(
        {
            "default_reply": default_reply,
            "rules": [
                {
                    "name": word,
                    "match": {"contains": word},
                    "steps": [
                        {"tool_calls": [{"name": tool, "arguments": arguments}]},
                        {"text": answer},
                    ],
                }
            ],
        }
    )


def scripted_profile(
    name: str, instructions: str, toolbox: str, task_queue: str, **more: Any
) -> Profile:
    """A profile on the scripted model with one toolbox and no approvals, on `task_queue`;
    its name is `name` made unique."""
    return Profile(
        name=f"{name}-{uuid.uuid4().hex[:8]}",
        instructions=instructions,
        model="scripted:demo",
        toolboxes=[toolbox],
        approval="none",
        task_queue=task_queue,
        **more,
    )
