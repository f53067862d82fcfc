"""A 127.0.0.1 TCP proxy whose connections a test can cut: a database or a Temporal
frontend that goes away and comes back, for real."""

import asyncio
import ssl
import threading
from collections.abc import Awaitable, Callable

from tests._tls_stream import accept_tls


class FlakyProxy:
    """127.0.0.1 TCP proxy on its own event loop thread; `cut()` aborts every connection
    and refuses new ones (accept, then reset) until `restore()`. With `tls`, it terminates TLS
    (tests/_tls.py: h2 over ALPN, a client certificate required) in front of a plaintext
    frontend, as a load balancer before a Temporal cluster does; `accepted` counts the
    connections that got through (with TLS: the handshakes that succeeded)."""

    def __init__(self, host: str, port: int, *, tls: ssl.SSLContext | None = None) -> None:
        self._target = (host, port)
        self._tls = tls
        self.accepted = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._open: set[asyncio.StreamWriter] = set()
        self.down = False
        self.refused = 0
        self.port = 0

    def start(self) -> None:
        self._thread.start()
        server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop
        ).result(10)
        self._server = server
        self.port = server.sockets[0].getsockname()[1]

    def cut(self) -> None:
        def _cut() -> None:
            self.down = True
            for w in list(self._open):
                w.transport.abort()

        self._loop.call_soon_threadsafe(_cut)

    def restore(self) -> None:
        self._loop.call_soon_threadsafe(setattr, self, "down", False)

    def close(self) -> None:
        async def _close() -> None:
            self._server.close()
            for w in list(self._open):
                w.transport.abort()
            # Connections still being served end here, not as tasks destroyed while pending.
            served = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in served:
                task.cancel()
            await asyncio.gather(*served, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(_close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            self.refused += 1
            writer.transport.abort()
            return
        tls = None
        if self._tls is not None:
            # Our own handshake, not start_server(ssl=...): a refusal sends its alert.
            self._open.add(writer)
            tls = await accept_tls(self._tls, reader, writer)
            self._open.discard(writer)
            if tls is None:
                return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.transport.abort()
            return
        self.accepted += 1
        self._open.update((writer, up_writer))
        if tls is None:
            await asyncio.gather(
                self._pipe(reader.read, _writing(up_writer), up_writer),
                self._pipe(up_reader.read, _writing(writer), writer),
            )
        else:
            await asyncio.gather(
                self._pipe(lambda _: tls.read(), _writing(up_writer), up_writer),
                self._pipe(up_reader.read, tls.write, writer),
            )

    async def _pipe(
        self,
        read: Callable[[int], Awaitable[bytes]],
        write: Callable[[bytes], Awaitable[None]],
        dst: asyncio.StreamWriter,
    ) -> None:
        """Copies until either side ends, then aborts `dst` (a cut mid-stream is a reset)."""
        try:
            while data := await read(65536):
                await write(data)
        except (OSError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            dst.transport.abort()
            self._open.discard(dst)


def _writing(writer: asyncio.StreamWriter) -> Callable[[bytes], Awaitable[None]]:
    async def write(data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    return write
