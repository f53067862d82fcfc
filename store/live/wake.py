"""The cross-process wake of live followers on SQLite: a publish in one process (the model
worker) wakes the run's followers in others (the operator API, a Python follower) at once
instead of at their next poll.

PostgreSQL has NOTIFY for this (the live table's trigger, api/wake.py); SQLite has nothing,
so the runtime keeps a directory of unix datagram sockets beside the database file, one per
following process. A publisher, after its commit, sends each socket there 8 bytes: a digest
of the run id. That is all that crosses: no text, no id, only "read run <digest> now". A
follower still reads everything from the store, so a datagram that is lost, late, dropped
on a full buffer or forged costs a read or waits for the poll, never a wrong answer; the
poll stays as the net under it.

The directory is beside the database file (or, where that path is too long for a socket's,
in the temporary directory, named for the database). It is the runtime user's alone
(0700, owned by it, not a link): any other state turns the wake off for that database and
followers poll as before. A socket left by a process that died refuses the next datagram
and is removed by that sender; a listener whose socket was removed under it binds it again
within a second."""

import contextlib
import hashlib
import logging
import os
import secrets
import socket
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

log = logging.getLogger(__name__)

DIGEST_BYTES = 8
SUFFIX = ".wake"
# A unix socket's path must fit in sockaddr_un (108 bytes on Linux, 104 on macOS).
_MAX_PATH = 100
_RECV_SECONDS = 1.0  # a stopped listener notices within this


def digest(run_id: str) -> bytes:
    """What a wake carries of a run: not its id, only enough to match it."""
    return hashlib.blake2b(run_id.encode(), digest_size=DIGEST_BYTES).digest()


def wake_dir(database: str | None) -> Path | None:
    """The wake directory of a SQLite database file (beside it), or None (in memory, or no
    unix sockets)."""
    if not database or database == ":memory:" or not hasattr(socket, "AF_UNIX"):
        return None
    path = Path(database).resolve()
    where = path.with_name(path.name + SUFFIX)
    if _fits(where):
        return where
    # Too deep for a socket: one directory in the temporary one, named for the database,
    # which every process of this user on this machine derives alike.
    name = hashlib.blake2b(os.fsencode(path), digest_size=8).hexdigest()
    where = Path(tempfile.gettempdir()) / f"agentrt-wake-{os.getuid()}-{name}"
    return where if _fits(where) else None


def _fits(where: Path) -> bool:
    return len(os.fsencode(where)) + 24 <= _MAX_PATH  # room for "/<pid>-<token>.sock"


def _private(where: Path, *, create: bool) -> bool:
    """Whether `where` is a directory of this user's alone (made so when `create`)."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(where, 0o700)
    try:
        st = os.lstat(where)
    except FileNotFoundError:
        return False
    ok = stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077
    if not ok:
        log.warning("live wake off for %s: not a private directory of this user", where)
    return ok


class Ringer:
    """The publisher's side: one unbound datagram socket, used from any thread."""

    def __init__(self, where: Path, *, others_only: bool = True) -> None:
        """`others_only`: skip this process's sockets (its followers heard the bell)."""
        self.where, self._others_only = where, others_only
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.setblocking(False)  # a follower's full buffer never holds a publish up

    def ring(self, run_id: str) -> int:
        """Wake every following process; how many sockets took it. Never raises."""
        mine = f"{os.getpid()}-" if self._others_only else "/"  # "/": no name starts so
        try:
            names = [
                e.path
                for e in os.scandir(self.where)
                if e.name.endswith(".sock") and not e.name.startswith(mine)
            ]
        except OSError:  # no process has followed this database yet
            return 0
        if not names or not _private(self.where, create=False):
            return 0
        sent, data = 0, digest(run_id)
        for name in names:
            try:
                self._sock.sendto(data, name)
                sent += 1
            except (ConnectionRefusedError, FileNotFoundError):
                # Nobody is bound there: a process that died without removing its socket.
                with contextlib.suppress(OSError):
                    os.unlink(name)
            except OSError:  # a full buffer: that follower reads at its poll
                pass
        return sent


class _Listener:
    """One following process's socket for one database, read by a daemon thread that hands
    each digest to `deliver` (which must be thread-safe)."""

    def __init__(self, where: Path, deliver: Callable[[bytes], None]) -> None:
        self.path = where / f"{os.getpid()}-{secrets.token_hex(4)}.sock"
        self.users = 0
        self.rebinds = 0  # sockets bound again after theirs was removed (tests)
        self._deliver = deliver
        self._stop = threading.Event()
        self._sock = self._bind()
        self._thread = threading.Thread(target=self._run, name="agentrt-live-wake", daemon=True)
        self._thread.start()

    def _bind(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            sock.bind(os.fsdecode(self.path))
            os.chmod(self.path, 0o600)
        except OSError:
            sock.close()
            raise
        sock.settimeout(_RECV_SECONDS)
        return sock

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    data = self._sock.recv(64)
                except TimeoutError:
                    self._rebind_if_removed()
                    continue
                except OSError:
                    return
                if len(data) == DIGEST_BYTES:
                    self._deliver(data)
        finally:
            self._sock.close()

    def _rebind_if_removed(self) -> None:
        """A socket file removed under us (a temporary-file cleaner, an operator) would
        leave this process unwoken for good: bind a new one at the same path. Until then
        its followers poll, as with any lost wake."""
        if self._stop.is_set() or os.path.exists(self.path):
            return
        if not _private(self.path.parent, create=True):
            return
        try:
            fresh = self._bind()
        except OSError:
            return
        self._sock.close()
        self._sock, self.rebinds = fresh, self.rebinds + 1

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            os.unlink(self.path)  # no new wakes come here from now on


class Listeners:
    """The wake sockets of this process, one per database followed, shared by its
    followers and closed when the last of them ends."""

    def __init__(self, deliver: Callable[[bytes], None]) -> None:
        self._deliver = deliver
        self._lock = threading.Lock()
        self._open: dict[Path, _Listener] = {}

    @contextlib.contextmanager
    def following(self, where: Path | None) -> Iterator[bool]:
        """For the block, this process hears wakes for the database of `where`; yields
        whether it does (False: no wake, the follower polls)."""
        listener = self._acquire(where) if where is not None else None
        try:
            yield listener is not None
        finally:
            if listener is not None:
                self._release(listener)

    def _acquire(self, where: Path) -> _Listener | None:
        with self._lock:
            listener = self._open.get(where)
            if listener is None:
                if not _private(where, create=True):
                    return None
                try:
                    listener = self._open[where] = _Listener(where, self._deliver)
                except OSError as exc:  # sockets refused here (a filesystem without them)
                    log.warning("live wake off for %s (%s): followers poll", where, exc)
                    return None
            listener.users += 1
            return listener

    def _release(self, listener: _Listener) -> None:
        with self._lock:
            listener.users -= 1
            if listener.users == 0:
                self._open.pop(listener.path.parent, None)
                listener.close()
