"""free_port chooses below the kernel's ephemeral range, so nothing takes its port before
the server it was chosen for binds it."""

import socket

import pytest

from agentrt.core import devserver
from agentrt.core.devserver import FREE_PORT_FLOOR, ephemeral_low, free_port, port_is_free


def test_a_free_port_lies_below_the_ephemeral_range_and_binds() -> None:
    low = ephemeral_low()
    if low - FREE_PORT_FLOOR < 1000:
        pytest.skip(f"this kernel's ephemeral range starts at {low}: free_port binds port 0")
    ports = {free_port() for _ in range(20)}
    assert all(FREE_PORT_FLOOR <= p < low for p in ports)
    assert len(ports) > 1  # chosen at random, not one fixed port
    port = ports.pop()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        assert not port_is_free(port)  # taken now: the check sees it


def test_with_no_room_below_the_range_it_takes_a_port_from_the_kernel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kernel_low = ephemeral_low()
    monkeypatch.setattr(devserver, "ephemeral_low", lambda: FREE_PORT_FLOOR + 10)
    port = free_port()
    assert port_is_free(port)
    assert port >= kernel_low  # the kernel's own choice, from its ephemeral range
