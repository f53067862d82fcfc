"""The wake sockets (store/live/wake.py) on their own: what crosses, who may listen, and
what a process that died leaves behind."""

import os
import socket
import tempfile
import threading
import time
import uuid
from pathlib import Path

from agentrt.store.live.wake import DIGEST_BYTES, Listeners, Ringer, digest, wake_dir


def _wake_dir(tmp_path: Path) -> Path:
    """The wake directory of a database file in `tmp_path`."""
    where = wake_dir(str(tmp_path / "agentrt.db"))
    assert where is not None
    return where


def _collector() -> tuple[list[bytes], threading.Event, Listeners]:
    got: list[bytes] = []
    arrived = threading.Event()

    def deliver(data: bytes) -> None:
        got.append(data)
        arrived.set()

    return got, arrived, Listeners(deliver)


def test_a_wake_carries_a_digest_of_the_run_and_nothing_else(tmp_path: Path) -> None:
    where = _wake_dir(tmp_path)
    run_id = str(uuid.uuid4())
    got, arrived, listeners = _collector()
    with listeners.following(where) as on:
        assert on
        assert os.stat(where).st_mode & 0o777 == 0o700
        (sock,) = where.glob("*.sock")
        assert os.stat(sock).st_mode & 0o777 == 0o600
        assert Ringer(where).ring(run_id) == 0  # the ringer's own process: the bell did it
        other = _other_process_ringer(where)
        assert other.ring(run_id) == 1
        assert arrived.wait(5.0)
    assert got == [digest(run_id)] and len(got[0]) == DIGEST_BYTES
    assert run_id.encode() not in got[0]
    assert not list(where.glob("*.sock"))  # the last follower's end removed the socket


def _other_process_ringer(where: Path) -> Ringer:
    """A ringer that takes this process's sockets for another's (as a worker process's)."""
    return Ringer(where, others_only=False)


def test_anything_but_a_digest_is_ignored(tmp_path: Path) -> None:
    where = _wake_dir(tmp_path)
    got, arrived, listeners = _collector()
    with listeners.following(where):
        (path,) = where.glob("*.sock")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.sendto(b"x" * 200, str(path))
            s.sendto(b"", str(path))
            s.sendto(b"12345678", str(path))
        assert arrived.wait(5.0)
    assert got == [b"12345678"]


def test_a_socket_left_by_a_process_that_died_is_removed_by_the_next_ring(
    tmp_path: Path,
) -> None:
    where = tmp_path / "agentrt.db.wake"
    where.mkdir(mode=0o700)
    dead = where / "999999-dead.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(dead))
    s.close()  # bound, never unlinked: as a killed process leaves it
    assert dead.exists()
    assert _other_process_ringer(where).ring("r") == 0
    assert not dead.exists()


def test_a_directory_others_may_enter_turns_the_wake_off(tmp_path: Path) -> None:
    where = tmp_path / "agentrt.db.wake"
    where.mkdir(mode=0o755)
    os.chmod(where, 0o755)
    _, _, listeners = _collector()
    with listeners.following(where) as on:
        assert not on
    assert not list(where.iterdir())
    assert Ringer(where).ring("r") == 0


def test_no_wake_in_memory_and_a_deep_database_wakes_in_the_temporary_directory(
    tmp_path: Path,
) -> None:
    assert wake_dir(None) is None and wake_dir(":memory:") is None
    short = wake_dir("/srv/agentrt.db")
    assert short == Path("/srv/agentrt.db.wake")
    deep, other = (wake_dir(str(tmp_path / ("d" * 120) / n)) for n in ("a.db", "b.db"))
    assert deep is not None and other is not None and deep != other
    assert str(deep).startswith(tempfile.gettempdir()) and len(str(deep)) < 80


def test_a_socket_removed_under_a_listener_is_bound_again(tmp_path: Path) -> None:
    where = _wake_dir(tmp_path)
    got, arrived, listeners = _collector()
    with listeners.following(where):
        (path,) = where.glob("*.sock")
        path.unlink()  # as a temporary-file cleaner would
        deadline = time.monotonic() + 10
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert path.exists(), "the listener did not bind its socket again"
        assert _other_process_ringer(where).ring("r") == 1
        assert arrived.wait(5.0)
    assert got == [digest("r")]
