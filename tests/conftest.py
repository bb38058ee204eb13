"""Shared test set-up: the helpers at the top of ``tests/`` are importable from every folder.

``tests/`` mirrors the package (``core``, ``autograd``, ``ops``, ``nn``, ``optim``,
``distributed``, ``launcher``, ``data``, ...). Test files are not packages: a file's basename
must be unique across the whole tree (``tests/<area>/test_<module>.py``). Shared helpers
live here at the top and are imported by name from any folder:

- ``dist_helpers``: run a function or script on N real ranks, with a timeout each.
- ``ddp_models``: the small models the DDP tests train.
- ``launcher_scripts.harness``: run the real launcher and inspect what it left.
- ``fault_scripts/``: training scripts the fault-tolerance tests launch.

Tests that compare with an installed PyTorch are marked ``@pytest.mark.parity`` and skip
without it (``pytest -m "not parity"`` leaves them out).
"""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
