"""A scripted model with one rule: a prompt with the word calls one tool, then answers."""

from typing import Any

from agentrt.activities.providers.scripted import RuleSet


def one_call(
    word: str, tool: str, arguments: dict[str, Any], *, answer: str, default_reply: str
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
