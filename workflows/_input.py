"""The pause for the remote user's follow-up input: whether the workflow takes a message,
and which messages are on record. Pure, unit-testable; the pause itself is
`_pauses.await_input`, the update handler `AgentRunWorkflow.submit_input`."""

from dataclasses import dataclass, field

from agentrt.contracts.a2a import InputMessage


@dataclass
class InputPause:
    # Set before the pause commits, like the approval gate: a client that sees the run
    # WAITING_FOR_INPUT in the store and answers at once finds the workflow ready.
    waiting: bool = False
    message: InputMessage | None = None  # taken, not yet recorded
    recorded: set[str] = field(default_factory=set)  # message ids on record

    def open(self) -> None:
        self.waiting, self.message = True, None

    def accepts(self) -> bool:
        """One message per pause: the first one taken is the one recorded."""
        return self.waiting and self.message is None

    def take(self, message: InputMessage) -> bool:
        """Whether the pause took `message`. The update's validator checks `accepts` first,
        and the SDK (1.35) runs a validator and its handler in one task with nothing to
        yield between them, so of two follow-ups in one activation the second is refused by
        its validator (tests/workflows/test_input.py). This keeps the handler right should
        anything come to yield in between (an interceptor, another SDK version): it refuses
        then, rather than overwrite the message already taken."""
        if not self.accepts():
            return False
        self.message = message
        return True

    def close(self, recorded: InputMessage | None = None) -> None:
        """The pause is over: `recorded`, if given, is on record."""
        self.waiting, self.message = False, None
        if recorded is not None:
            self.recorded.add(recorded.message_id)
