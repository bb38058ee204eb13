"""A rank's output pump when its log file cannot be written (a full disk): it says so once,
stops logging, and keeps draining the pipe, so the rank neither blocks nor breaks on its
output (it died of a broken pipe once the pump thread had died of ENOSPC)."""

from __future__ import annotations

import io
import os
import sys
import threading

import pytest

from disttorch.launcher import output


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a device that is always full)")
@pytest.mark.timeout(30)
def test_a_full_log_disk_is_reported_and_the_rank_goes_on(monkeypatch):
    said = io.BytesIO()
    monkeypatch.setattr(output, "stderr", output.Console(said))
    read_end, write_end = os.pipe()
    pump = output.LinePump(os.fdopen(read_end, "rb"), b"[rank3]: ", None, "/dev/full")
    pump.start()
    line = b"y" * 99 + b"\n"
    written = []

    def rank_prints() -> None:
        for _ in range(100):
            written.append(os.write(write_end, line * 100))

    writer = threading.Thread(target=rank_prints)
    writer.start()
    writer.join(timeout=10)
    os.close(write_end)
    pump.join(timeout=10)
    assert not writer.is_alive() and not pump.is_alive()
    assert sum(written) == 100 * 100 * len(line)  # every byte was drained: no broken pipe
    err = said.getvalue().decode()
    assert err.count("[launcher] cannot write /dev/full: No space left on device") == 1, err
    assert "the rest is not logged (rank3 goes on)" in err


def test_launcher_messages_go_to_the_sys_stderr_of_the_moment(monkeypatch):
    """``say`` writes to ``sys.stderr`` as it is when it is called, not as it was when the
    launcher was imported (a program that replaces it, or pytest's capture, sees them)."""
    written = io.BytesIO()
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(written))
    output.say("one\ntwo")
    assert written.getvalue() == b"[launcher] one\n[launcher] two\n"
