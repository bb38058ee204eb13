"""Multi-node authentication resists replay: a handshake recorded between two network
namespaces and replayed by an eavesdropper is refused (CURVE, the default off loopback);
with PLAIN forced (``DISTTORCH_ENCRYPT=0``) the same replay gets in, which is why it is not
the default there."""

from __future__ import annotations

import os
import subprocess
import sys

import netns_helpers
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def _replay(mode: dict) -> tuple[str, str]:
    if not netns_helpers.available():
        pytest.skip("needs root and `ip netns`")
    env = dict(os.environ, PYTHONPATH=REPO, DISTTORCH_JOB_SECRET=os.urandom(32).hex())
    env.pop("DISTTORCH_ENCRYPT", None)
    env.update(mode)
    with netns_helpers.two_namespaces() as ns:
        server = subprocess.Popen(
            ns.run_in(
                ns.a,
                [sys.executable, os.path.join(HERE, "scripts", "replay_server.py"), ns.addr_a, "29470", "8"],
            ),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        first = server.stdout.readline()
        assert first.startswith("LISTENING"), first + server.stderr.read()
        client = subprocess.run(
            ns.run_in(
                ns.b, [sys.executable, os.path.join(HERE, "scripts", "replay_client.py"), ns.addr_a, "29470"]
            ),
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert client.returncode == 0, client.stderr[-3000:]
        rest, err = server.communicate(timeout=60)
    return first + rest, err


@pytest.mark.timeout(120)
def test_a_replayed_handshake_from_another_namespace_is_refused():
    out, err = _replay({})
    assert "LISTENING CURVE" in out, out
    assert "SUCCEEDED 1 RECEIVED legit\n" in out, out + err  # only the real client got in


@pytest.mark.timeout(120)
def test_plain_forced_off_loopback_is_replayable():
    out, err = _replay({"DISTTORCH_ENCRYPT": "0"})
    assert "LISTENING PLAIN" in out, out
    assert "SUCCEEDED 2 RECEIVED legit,legit" in out, out + err
