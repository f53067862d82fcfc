"""The hand-written baselines: an agent loop written the way the Temporal samples write one.

A model activity, then one activity per tool call, default retries, no fence, no audit: the
transcript travels in the activities' inputs (so its history grows with the square of the
run length), and a non-idempotent write is simply retried. Two model activities: the
persistent loop's commits a turn row per model call (issue 12's baseline); the storeless
loop's (`stores=False`, issue 26's plainest baseline) stores nothing, as the samples' does.
Loaded inside the workflow sandbox, so it imports nothing but temporalio: activities are
called by name.
"""

from dataclasses import dataclass, field
from datetime import timedelta

from temporalio import workflow

WORKFLOW_LOOP = "BenchLoop"
ACT_LOOP_MODEL = "bench.loop.model"
ACT_LOOP_MODEL_STORELESS = "bench.loop.model_storeless"
ACT_LOOP_TOOL = "bench.loop.tool"
SIGNAL_LOOP_APPROVE = "approve"
WRITE_TOOL = "refund"  # the non-idempotent write (a ledger append)
READ_TOOL = "lookup"


@dataclass(frozen=True)
class LoopInput:
    run_id: str
    tools: int  # tool calls in all; the last one is the write
    wait_for_approval: bool = False  # memory section: wait for a signal before the tools
    stores: bool = True  # False: the storeless loop (its model activity writes nothing)
    # > 0: one turn asking for this many reads, run one after another, then the answer
    # (the parallel section), each read taking `tool_ms` first.
    turn_calls: int = 0
    tool_ms: int = 0
    # > 0: each model turn's text, and each tool result, padded to this size (the
    # long-run section: ~1 kB of model text and 4 kB results a turn).
    text_bytes: int = 0
    result_bytes: int = 0


@dataclass(frozen=True)
class LoopMessage:
    role: str
    content: str


@dataclass(frozen=True)
class LoopModelIn:
    run_id: str
    round: int
    tools: int
    messages: list[LoopMessage] = field(default_factory=list)
    text_bytes: int = 0


@dataclass(frozen=True)
class LoopTurn:
    content: str
    tool: str | None = None


@dataclass(frozen=True)
class LoopToolIn:
    run_id: str
    call_id: str
    tool: str
    sleep_ms: int = 0  # the tool's fixed latency, before its read
    result_bytes: int = 0


@workflow.defn(name=WORKFLOW_LOOP)
class LoopWorkflow:
    def __init__(self) -> None:
        self._approved = False

    @workflow.signal(name=SIGNAL_LOOP_APPROVE)
    def approve(self) -> None:
        self._approved = True

    @workflow.run
    async def run(self, inp: LoopInput) -> int:
        messages = [LoopMessage("user", "bench")]
        calls = 0
        model = ACT_LOOP_MODEL if inp.stores else ACT_LOOP_MODEL_STORELESS
        if inp.turn_calls:
            return await self._one_turn(inp, model, messages)
        for round_no in range(1, inp.tools + 2):
            turn = await workflow.execute_activity(
                model,
                LoopModelIn(inp.run_id, round_no, inp.tools, list(messages), inp.text_bytes),
                result_type=LoopTurn,
                start_to_close_timeout=timedelta(seconds=60),
            )
            messages.append(LoopMessage("assistant", turn.content))
            if turn.tool is None:
                return calls
            if inp.wait_for_approval and not self._approved:
                await workflow.wait_condition(lambda: self._approved)
            result = await workflow.execute_activity(
                ACT_LOOP_TOOL,
                LoopToolIn(inp.run_id, f"r{round_no}", turn.tool, 0, inp.result_bytes),
                result_type=str,
                start_to_close_timeout=timedelta(seconds=60),
            )
            messages.append(LoopMessage("tool", result))
            calls += 1
        return calls

    async def _one_turn(self, inp: LoopInput, model: str, messages: list[LoopMessage]) -> int:
        """The model asks for `turn_calls` reads in one turn; the samples' loop runs them
        one after another. Its script (scripted_turn) is that of a two-round run: a read in
        round 1, the answer past round 2."""
        turn = await workflow.execute_activity(
            model,
            LoopModelIn(inp.run_id, 1, 2, list(messages)),
            result_type=LoopTurn,
            start_to_close_timeout=timedelta(seconds=60),
        )
        messages.append(LoopMessage("assistant", turn.content))
        for i in range(1, inp.turn_calls + 1):
            result = await workflow.execute_activity(
                ACT_LOOP_TOOL,
                LoopToolIn(inp.run_id, f"r1.{i}", READ_TOOL, inp.tool_ms),
                result_type=str,
                start_to_close_timeout=timedelta(seconds=60),
            )
            messages.append(LoopMessage("tool", result))
        await workflow.execute_activity(
            model,
            LoopModelIn(inp.run_id, 3, 2, list(messages)),
            result_type=LoopTurn,
            start_to_close_timeout=timedelta(seconds=60),
        )
        return inp.turn_calls
