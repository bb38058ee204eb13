"""Test worker: writes its environment, pid and cores to OUT_DIR/rank<RANK>_attempt<N>.json.

usage: env_dump.py OUT_DIR [FAIL_ON_ATTEMPT]
With FAIL_ON_ATTEMPT, rank 1 raises on that restart count (to test --max-restarts).
"""

import json
import os
import sys

out_dir = sys.argv[1]
attempt = int(os.environ["DISTTORCH_RESTART_COUNT"])
names = [
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "GROUP_WORLD_SIZE",
    "ROLE_RANK",
    "ROLE_WORLD_SIZE",
    "ROLE_NAME",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RESTART_COUNT",
    "TORCHELASTIC_MAX_RESTARTS",
    "TORCHELASTIC_RUN_ID",
    "TORCHELASTIC_USE_AGENT_STORE",
    "TORCHELASTIC_SIGNALS_TO_HANDLE",
    "TORCHELASTIC_ERROR_FILE",
    "DISTTORCH_RESTART_COUNT",
    "DISTTORCH_MAX_RESTARTS",
    "DISTTORCH_RUN_ID",
    "DISTTORCH_JOB_SECRET",
    "DISTTORCH_ERROR_FILE",
    "DISTTORCH_TRACE_DIR",
    "DISTTORCH_FAULT",
    "DISTTORCH_CPU_AFFINITY",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_CORETYPE",
]
info = {name: os.environ.get(name) for name in names}
info["pid"] = os.getpid()
info["error_dir_exists"] = os.path.isdir(os.path.dirname(info["TORCHELASTIC_ERROR_FILE"] or "/nonexistent/x"))
info["cores"] = sorted(os.sched_getaffinity(0))
info["argv"] = sys.argv
info["main"] = __name__
with open(os.path.join(out_dir, f"rank{info['RANK']}_attempt{attempt}.json"), "w") as f:
    json.dump(info, f)
if len(sys.argv) > 2 and int(sys.argv[2]) == attempt and info["RANK"] == "1":
    raise RuntimeError(f"failing on purpose on attempt {attempt}")
