"""A disttorch script runs under PyTorch's ``torchrun``: rank 0 hosts disttorch's store on a
free port and announces it through torchrun's c10d store (spoken by ``C10dStoreClient``)."""

from __future__ import annotations

import datetime
import os
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

from dist_helpers import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

SCRIPT = """
import os, sys
import numpy as np
import disttorch.distributed as dist
dist.init_process_group("gloo")
x = np.full(4, float(dist.get_rank() + 1), np.float32)
dist.all_reduce(x)
with open(os.path.join(sys.argv[1], f"rank{dist.get_rank()}.txt"), "w") as f:
    f.write(f"RESULT {dist.get_rank()} {dist.get_world_size()} {x.tolist()}")
dist.destroy_process_group()
"""


@pytest.mark.parity
@pytest.mark.timeout(180)
@pytest.mark.parametrize("nproc", [2, 3])
def test_a_disttorch_script_runs_under_torchrun(nproc, tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=REPO)
    for name in (
        "DISTTORCH_JOB_SECRET",
        "DISTTORCH_RUN_ID",
        "RANK",
        "WORLD_SIZE",
        "MASTER_ADDR",
        "MASTER_PORT",
    ):
        env.pop(name, None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            str(nproc),
            "--master_port",
            str(free_port()),
            str(script),
            str(tmp_path),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=170,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    total = float(nproc * (nproc + 1) // 2)
    for rank in range(nproc):
        assert (tmp_path / f"rank{rank}.txt").read_text() == f"RESULT {rank} {nproc} {[total] * 4}"


@pytest.mark.parity
@pytest.mark.timeout(60)
def test_c10d_client_speaks_to_pytorchs_tcpstore():
    torch_dist = pytest.importorskip("torch.distributed")
    from disttorch.distributed.store.c10d_client import C10dStoreClient

    master = torch_dist.TCPStore(
        "127.0.0.1", 0, is_master=True, wait_for_workers=False, timeout=datetime.timedelta(seconds=20)
    )
    client = C10dStoreClient("127.0.0.1", master.port, timeout=5.0)
    try:
        client.set("disttorch/a", b"hello")
        assert master.get("disttorch/a") == b"hello"
        master.set("disttorch/b", "world")
        assert client.get("disttorch/b") == b"world"
    finally:
        client.close()


@pytest.mark.timeout(60)
def test_c10d_client_refuses_what_is_not_a_c10d_store():
    import zmq

    from disttorch.distributed.base.errors import DistNetworkError
    from disttorch.distributed.store.c10d_client import C10dStoreClient

    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    try:
        with pytest.raises(DistNetworkError, match="does not answer as torchrun's c10d store"):
            C10dStoreClient("127.0.0.1", port, timeout=2.0)
    finally:
        sock.close(0)
        ctx.term()


class _FakeC10dStore:
    """A listener that answers the c10d handshake and a WAIT, then answers a GET with
    ``answer`` (a value's length and bytes) byte by byte, ``trickle`` seconds apart."""

    def __init__(self, answer: bytes, trickle: float) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._answer, self._trickle = answer, trickle
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        try:
            conn, _ = self._listener.accept()
            with conn:
                _, _, _, nonce = struct.unpack("<BIBI", conn.recv(10, socket.MSG_WAITALL))
                conn.sendall(struct.pack("<I", nonce))
                conn.recv(4096)  # WAIT
                conn.sendall(b"\x00")
                conn.recv(4096)  # GET
                for byte in self._answer:
                    conn.sendall(bytes([byte]))
                    time.sleep(self._trickle)
        except OSError:
            pass

    def close(self) -> None:
        self._listener.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ((2**62).to_bytes(8, "little"), "with a value of 4611686018427387904 bytes"),
        ((100).to_bytes(8, "little") + b"x" * 100, "of 100 bytes came within 2 s"),
    ],
    ids=["a value of 2**62 bytes", "bytes trickled in"],
)
def test_c10d_client_gives_up_on_a_store_that_answers_too_much_or_too_slowly(answer, says):
    from disttorch.distributed.base.errors import DistNetworkError, DistStoreError
    from disttorch.distributed.store.c10d_client import C10dStoreClient

    fake = _FakeC10dStore(answer, trickle=0.05)
    client = C10dStoreClient("127.0.0.1", fake.port, timeout=2.0)
    started = time.monotonic()
    try:
        with pytest.raises((DistNetworkError, DistStoreError), match=says):
            client.get("disttorch/store")
    finally:
        client.close()
        fake.close()
    assert time.monotonic() - started < 10
