"""An ASGI app served by uvicorn on 127.0.0.1 for one block: the API under test or a
webhook receiver. The socket is bound first, so the port is known and free."""

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from starlette.types import ASGIApp


@asynccontextmanager
async def running(server: uvicorn.Server, sock: socket.socket) -> AsyncIterator[None]:
    """Serve on the bound `sock` for the block, started before it runs; closed after."""
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        for _ in range(500):  # bounded wait for the listener
            if server.started:
                break
            await asyncio.sleep(0.01)
        assert server.started
        yield
    finally:
        server.should_exit = True
        await task
        sock.close()


@asynccontextmanager
async def on_localhost(app: ASGIApp) -> AsyncIterator[str]:
    """Serve `app` on a free 127.0.0.1 port; yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    async with running(server, sock):
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
