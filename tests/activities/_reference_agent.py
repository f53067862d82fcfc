"""The a2a-sdk's reference server (its DefaultRequestHandler over an in-memory task
store): a remote agent that is not agentrt, for tests/activities/test_remote_reference.py.
Run as `python -m tests.activities._reference_agent PORT`; its skill `quoter` answers a
JSON quote as an artifact and completes."""

import sys

import uvicorn
from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part
from starlette.applications import Starlette

QUOTE = '{"order_id": "1042", "total_cents": 4999}'


class Quoter(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.add_artifact([Part(text=QUOTE)], name="quote")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def card(port: int) -> AgentCard:
    return AgentCard(
        name="reference",
        description="The a2a-sdk reference server.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=False),
        skills=[AgentSkill(id="quoter", name="quoter", description="Quotes.", tags=["quote"])],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )


def main(port: int) -> None:
    agent = card(port)
    handler = DefaultRequestHandler(
        agent_executor=Quoter(), task_store=InMemoryTaskStore(), agent_card=agent
    )
    app = Starlette(routes=[*create_agent_card_routes(agent), *create_jsonrpc_routes(handler, "/")])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(int(sys.argv[1]))
