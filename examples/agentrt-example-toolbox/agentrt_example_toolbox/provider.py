"""A model provider plug-in: it answers with the user's last message (`example:echo`)."""

from agentrt import ModelProvider, ProviderConfig, ProviderReply, ProviderRequest, Usage


class EchoProvider:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        said = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
        prompt_tokens = sum(len(m.content.split()) for m in request.messages)
        return ProviderReply(
            content=self.prefix + said,
            usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=len(said.split()) + 1),
        )


def make(config: ProviderConfig) -> ModelProvider:
    """The entry point: called once per worker with the `options` of the providers file."""
    return EchoProvider(str(config.options.get("prefix", "echo: ")))
