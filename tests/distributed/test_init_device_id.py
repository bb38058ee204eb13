"""``init_process_group(device_id=...)`` answers as PyTorch's CPU build: there is no
accelerator to bind the group to, so an index, an accelerator device and the CPU device are
refused with PyTorch's ValueErrors (the FSDP2 example passes ``device_id=torch.device("cpu")``
when no accelerator is found, and PyTorch refuses it)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import disttorch as dt
import disttorch.distributed as dist

CASES = ["cpu", "cuda:0", 0]

_TORCH_SIDE = """
import json, torch, torch.distributed as dist
out = []
for case in json.loads(SYS_ARGV):
    device_id = case if isinstance(case, int) else torch.device(case)
    try:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1, device_id=device_id)
        out.append(None)
        dist.destroy_process_group()
    except Exception as e:
        out.append([type(e).__name__, str(e)])
print(json.dumps(out))
"""


def _ours() -> list:
    out = []
    for case in CASES:
        device_id = case if isinstance(case, int) else dt.device(case)
        with pytest.raises(Exception) as info:
            dist.init_process_group("gloo", device_id=device_id)
        out.append([type(info.value).__name__, str(info.value)])
    assert not dist.is_initialized()
    return out


def test_device_id_is_refused_on_cpu():
    ours = _ours()
    assert [kind for kind, _ in ours] == ["ValueError"] * 3
    assert "must be an accelerator with an index" in ours[0][1]
    assert "does not match the current compilation's accelerator support" in ours[1][1]
    assert "device_id is an int" in ours[2][1]


@pytest.mark.parity
def test_device_id_errors_match_pytorch(torch):
    code = _TORCH_SIDE.replace("SYS_ARGV", repr(json.dumps(CASES)))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert _ours() == json.loads(done.stdout.strip().splitlines()[-1])
