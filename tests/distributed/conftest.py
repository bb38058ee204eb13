"""Fixtures of the distributed tests."""

from __future__ import annotations

from collections.abc import Iterator

import netns_helpers
import pytest


@pytest.fixture
def two_namespaces() -> Iterator[netns_helpers.Namespaces]:
    """Two network namespaces joined by a veth pair (two "hosts"); skips without root and `ip netns`."""
    if not netns_helpers.available():
        pytest.skip("needs root and `ip netns`")
    with netns_helpers.two_namespaces() as ns:
        yield ns
