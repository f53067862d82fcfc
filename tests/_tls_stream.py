"""The server side of TLS over an asyncio stream, done with memory BIOs so that a refused
handshake sends its alert, as a real TLS frontend (Go's crypto/tls, Envoy) does.

asyncio's own TLS (`start_server(ssl=...)`) drops the connection on a failed handshake
without flushing the alert it has written: the client sees a bare close, and what its TLS
stack then reports (an EOF, a reset, or under TLS 1.3, where the client has finished its
side before the server checks its certificate, a generic "transport error") varies with
timing. A test of how a refusal is explained needs the server to say why."""

import asyncio
import ssl

_CHUNK = 65536


class TlsStream:
    """One accepted connection after a successful handshake: plaintext in and out."""

    def __init__(
        self,
        obj: ssl.SSLObject,
        incoming: ssl.MemoryBIO,
        outgoing: ssl.MemoryBIO,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self._obj, self._in, self._out = obj, incoming, outgoing
        self.reader, self.writer = reader, writer

    async def _flush(self) -> None:
        if data := self._out.read():
            self.writer.write(data)
            await self.writer.drain()

    async def read(self) -> bytes:
        """The next plaintext, b"" at the end."""
        while True:
            try:
                data = self._obj.read(_CHUNK)
            except ssl.SSLWantReadError:
                await self._flush()
                raw = await self.reader.read(_CHUNK)
                if not raw:
                    return b""
                self._in.write(raw)
                continue
            except ssl.SSLZeroReturnError:
                return b""
            await self._flush()
            return data

    async def write(self, data: bytes) -> None:
        self._obj.write(data)
        await self._flush()


async def accept_tls(
    ctx: ssl.SSLContext, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> TlsStream | None:
    """The server's handshake on an accepted connection; None (the alert sent, the
    connection closed) when it fails."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_side=True)
    while True:
        try:
            obj.do_handshake()
        except ssl.SSLWantReadError:
            if data := outgoing.read():
                writer.write(data)
                await writer.drain()
            raw = await reader.read(_CHUNK)
            if not raw:
                writer.transport.abort()
                return None
            incoming.write(raw)
            continue
        except (ssl.SSLError, OSError):
            # The alert (certificate required, unknown CA, ...) goes out before the close.
            if data := outgoing.read():
                writer.write(data)
                try:
                    await writer.drain()
                except OSError:
                    pass
            writer.close()
            return None
        break
    stream = TlsStream(obj, incoming, outgoing, reader, writer)
    await stream._flush()
    return stream
