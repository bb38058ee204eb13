"""Shared test set-up: the helpers at the top of ``tests/`` are importable from every folder.

``tests/`` mirrors the package (``core``, ``autograd``, ``ops``, ``nn``, ``optim``,
``distributed``, ``launcher``, ``data``, ...). Test files are not packages: a file's basename
must be unique across the whole tree (``tests/<area>/test_<module>.py``). Shared helpers
live here at the top and are imported by name from any folder:

- ``dist_helpers``: run a function or script on N real ranks, with a timeout each.
- ``ddp_models``: the small models the DDP tests train.
- ``launcher_scripts.harness``: run the real launcher and inspect what it left.
- ``fault_scripts/``: training scripts the fault-tolerance tests launch.

Tests that compare with an installed PyTorch live in the file of the family they cover, are
marked ``@pytest.mark.parity`` and are skipped here when PyTorch is not installed; they take
the real module from the ``torch`` fixture below (such files name disttorch ``dt``), and
``parity_helpers`` runs a case in both libraries and compares values, dtypes and gradients. ``pytest -m "not parity"`` leaves them
out, ``pytest -m parity`` runs only them.

``pytest`` runs two tests at a time (``-n 2 --dist worksteal`` in ``pyproject.toml``), but never
two tests of the areas in ``ONE_AT_A_TIME``: they start ranks, launchers or data-loader workers
and bound how fast a death or a mismatch is noticed, so two of them must not share the cores.
They run one after another on one worker while the other runs everything else.
"""

import fcntl
import importlib.util
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

HAS_TORCH = importlib.util.find_spec("torch") is not None

#: Test areas (folders under ``tests/``) whose tests never run beside each other.
ONE_AT_A_TIME = frozenset({"distributed", "launcher", "data"})


def _one_at_a_time(item: pytest.Item) -> bool:
    return item.path.relative_to(TESTS).parts[0] in ONE_AT_A_TIME


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Collect the ``ONE_AT_A_TIME`` tests first. ``--dist worksteal`` gives each worker a
    contiguous half of the collection, so they all go to the first worker, which runs them in
    order while the second runs the rest; they move only when the second has run out of work."""
    items.sort(key=lambda item: not _one_at_a_time(item))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """Run a ``ONE_AT_A_TIME`` test (set-up, call, tear-down) holding an exclusive lock on
    this file, which every worker opens: the others' wait is not counted in its timeout."""
    if not _one_at_a_time(item):
        return (yield)
    with open(__file__) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return (yield)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a ``parity`` test when there is no PyTorch to compare with."""
    if not HAS_TORCH and item.get_closest_marker("parity") is not None:
        pytest.skip("PyTorch is not installed: nothing to compare with (parity test)")


@pytest.fixture(autouse=True)
def _seeded_default_generator() -> None:
    """Every test starts the default generator from seed 0: as in PyTorch, it otherwise
    starts from OS entropy, and a test's numbers would change from run to run."""
    import disttorch

    disttorch.manual_seed(0)


@pytest.fixture
def torch():
    """The installed PyTorch, for parity tests (skipped without it). Test files that use this
    fixture name disttorch ``dt``."""
    return pytest.importorskip("torch")
