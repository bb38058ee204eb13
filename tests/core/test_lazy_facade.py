"""``import disttorch`` defines its names on first use (``disttorch/_facade.py``): a program
that needs no tensors (the launcher) loads no NumPy, and every other one sees the package as
it always was. Each check runs in a fresh interpreter, where nothing is imported yet."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.timeout(150)
def test_the_launcher_and_its_ranks_bootstrap_load_no_numpy_and_no_tensor_module():
    """Every launched rank starts in ``bootstrap`` (with the alias's script runner): a program
    that needs no tensors starts without them."""
    out = _run(
        """
        import sys
        from disttorch.launcher import agent, bootstrap, cli, main, workers
        from disttorch.launcher.cli import parse_args
        import disttorch.as_torch
        loaded = sorted(m for m in sys.modules if m.startswith(("numpy", "disttorch._tensor", "disttorch._facade")))
        print(loaded)
        """
    )
    assert out.strip() == "[]"


@pytest.mark.timeout(150)
def test_the_names_load_on_first_use_and_before_any_tensor_module():
    out = _run(
        """
        import sys
        import disttorch
        print("disttorch._facade" in sys.modules, "numpy" in sys.modules)
        import disttorch.nn as nn  # a submodule first: the facade loads before it
        print("disttorch._facade" in sys.modules, type(nn.Linear(2, 2).weight.data))
        print(disttorch.add(disttorch.ones(2), 1).tolist(), disttorch.float32)
        print("nn" in dir(disttorch), "optim" in dir(disttorch), "Tensor" in vars(disttorch))
        namespace = {}
        exec("from disttorch import *", namespace)
        print("randn" in namespace and "Tensor" in namespace)
        try:
            disttorch.no_such_name
        except AttributeError as exc:
            print(exc)
        """
    )
    assert out.splitlines() == [
        "False False",
        "True <class 'disttorch.Tensor'>",
        "[2.0, 2.0] disttorch.float32",
        "True True True",
        "True",
        "module 'disttorch' has no attribute 'no_such_name'",
    ]


@pytest.mark.timeout(150)
@pytest.mark.parametrize(
    "first", ["from disttorch._tensor import Tensor", "from disttorch.kernels import threads"]
)
def test_a_module_the_names_load_imported_first_runs_once(first):
    """The first submodule asked for may be one the facade itself imports: it is the same
    module afterwards (it ran twice: a second ``Tensor`` class, a second thread budget)."""
    out = _run(
        f"""
        import disttorch
        {first}
        from disttorch._tensor import Tensor
        from disttorch.kernels import threads
        disttorch.set_num_threads(1)
        print(type(disttorch.ones(2)) is Tensor, threads.get_num_threads())
        import disttorch._tensor as module
        print(type(module.__spec__.loader).__name__, module.__spec__.origin.endswith("_tensor.py"))
        """
    )
    assert out.split() == ["True", "1", "SourceFileLoader", "True"]


@pytest.mark.timeout(150)
def test_a_fork_while_another_thread_loads_the_names_waits_for_them():
    """A child forked in the middle would inherit the import lock held by a thread it does not
    have, and hang at its first ``disttorch.<name>``."""
    out = _run(
        """
        import os, threading, time
        import disttorch

        started = threading.Event()
        thread = threading.Thread(target=lambda: (started.set(), disttorch.Tensor))
        thread.start()
        started.wait()
        time.sleep(0.05)  # the thread is loading disttorch's names (where it is slow enough)
        pid = os.fork()
        if pid == 0:
            os._exit(0 if disttorch.ones(1).item() == 1 else 3)
        deadline = time.monotonic() + 30
        done, status = os.waitpid(pid, os.WNOHANG)
        while not done and time.monotonic() < deadline:
            time.sleep(0.02)
            done, status = os.waitpid(pid, os.WNOHANG)
        if not done:
            os.kill(pid, 9)
        print(f"the child exited {os.waitstatus_to_exitcode(status)}" if done else "the child hung")
        thread.join()
        """
    )
    assert out.strip() == "the child exited 0"


@pytest.mark.timeout(150)
def test_every_lazy_name_resolves():
    """Each subpackage and attribute the package resolves on first use loads, ``torch.__config__``
    included (a dunder name, which ``__getattr__`` refuses otherwise)."""
    out = _run(
        """
        import disttorch
        print(disttorch.__config__.__name__)
        names = sorted({*disttorch._LAZY, *disttorch._LAZY_ATTRS})
        failed = []
        for name in names:
            try:
                getattr(disttorch, name)
            except Exception as exc:
                failed.append(f"{name}: {exc!r}")
        print(len(names), failed)
        """
    )
    first, rest = out.splitlines()
    count, failed = rest.split(" ", 1)
    assert first == "disttorch.__config__" and int(count) > 50 and failed == "[]"
