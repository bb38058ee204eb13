"""Two network namespaces joined by a veth pair, for tests of links between hosts (needs root)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class Namespaces:
    a: str
    addr_a: str
    b: str
    addr_b: str
    link_a: str

    def cut(self) -> None:
        """Take the link down (both ends stop carrying packets)."""
        subprocess.run(
            ["ip", "-n", self.a, "link", "set", self.link_a, "down"], check=True, capture_output=True
        )

    def restore(self) -> None:
        """Bring the link back up after :meth:`cut`."""
        subprocess.run(
            ["ip", "-n", self.a, "link", "set", self.link_a, "up"], check=True, capture_output=True
        )

    def run_in(self, ns: str, argv: list[str]) -> list[str]:
        """``argv`` prefixed to run inside namespace ``ns``."""
        return ["ip", "netns", "exec", ns, *argv]


def available() -> bool:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return False
    name = f"dtprobe{uuid.uuid4().hex[:6]}"
    ok = subprocess.run(["ip", "netns", "add", name], capture_output=True, check=False).returncode == 0
    if ok:
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
    return ok


@contextlib.contextmanager
def two_namespaces() -> Iterator[Namespaces]:
    tag = uuid.uuid4().hex[:6]
    a, b = f"dta{tag}", f"dtb{tag}"
    octet = int(tag[:2], 16) % 200 + 20
    ns = Namespaces(a, f"10.{octet}.7.1", b, f"10.{octet}.7.2", f"va{tag}")
    commands = [
        ["ip", "netns", "add", a],
        ["ip", "netns", "add", b],
        ["ip", "link", "add", f"va{tag}", "type", "veth", "peer", "name", f"vb{tag}"],
        ["ip", "link", "set", f"va{tag}", "netns", a],
        ["ip", "link", "set", f"vb{tag}", "netns", b],
        ["ip", "-n", a, "addr", "add", f"{ns.addr_a}/24", "dev", f"va{tag}"],
        ["ip", "-n", b, "addr", "add", f"{ns.addr_b}/24", "dev", f"vb{tag}"],
        ["ip", "-n", a, "link", "set", f"va{tag}", "up"],
        ["ip", "-n", b, "link", "set", f"vb{tag}", "up"],
        ["ip", "-n", a, "link", "set", "lo", "up"],
        ["ip", "-n", b, "link", "set", "lo", "up"],
    ]
    try:
        for cmd in commands:
            subprocess.run(cmd, check=True, capture_output=True)
        yield ns
    finally:
        for name in (a, b):
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
