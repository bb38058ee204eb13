"""disttorch raises glibc's mmap and trim thresholds at import, unless told not to."""

import os
import subprocess
import sys

import pytest

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc only"),
]

# A step's pattern: several 4 MiB arrays allocated, then all freed. glibc's default trim
# threshold hands the freed top of the heap back to the OS, so the next step faults its pages
# in again; once tuned, the freed blocks are reused.
PROBE = """
import resource, numpy as np, disttorch
from disttorch._malloc import tune_malloc
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(200):
    arrays = [np.ones(1 << 20, np.float32) for _ in range(4)]
    del arrays
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, tune_malloc())
"""


PAGES = 4 * (4 << 20) // 4096  # pages of the four blocks: faulted in once when tuned


def probe(**env: str) -> tuple[int, bool]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    clean.pop("DISTTORCH_MALLOC_TUNING", None)
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=50,
        check=True,
    ).stdout.split()
    return int(out[0]), out[1] == "True"


def test_freed_large_arrays_are_reused_without_page_faults():
    faults, tuned = probe()
    assert tuned
    assert faults < 4 * PAGES, f"{faults} page faults for 200 reuses of four 4 MiB blocks"


def test_opt_out_and_user_settings_leave_malloc_alone():
    faults, tuned = probe(DISTTORCH_MALLOC_TUNING="0")
    assert not tuned
    assert faults > 50 * PAGES, (
        f"{faults} page faults: without tuning the freed blocks should go back to the OS"
    )
    assert probe(MALLOC_MMAP_THRESHOLD_="1048576")[1] is False
