"""The ecosystem yardstick: ``../shared/ecosystem`` runs one script per PyTorch-ecosystem
library (einops, safetensors, torchmetrics, Lightning, ...) on disttorch through the
``import torch`` alias and compares its output with PyTorch's.

The scripts need a Python where ``import torch`` is NOT PyTorch: ``DISTTORCH_ECOSYSTEM_PYTHON``
names one (``.ci/run`` makes ``.venv-eco`` with the light libraries), or this Python when it
has no PyTorch. Each script whose library that Python can import is run and must pass; the
others, and everything when there is no corpus or no such Python, skip.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: beside the checkout, as the real-program corpus; ``DISTTORCH_ECOSYSTEM_DIR`` overrides it
CORPUS = Path(os.environ.get("DISTTORCH_ECOSYSTEM_DIR") or ROOT.parent / "shared" / "ecosystem")

#: scripts that still fail and what they meet; they run and report xfail until the gap is
#: closed, then XPASS says to drop them from here
KNOWN_GAPS: dict[str, str] = {}


def _runner():
    """``run.py`` of the corpus as a module (its discovery, run and comparison helpers)."""
    spec = importlib.util.spec_from_file_location("ecosystem_run", CORPUS / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _python() -> str | None:
    """A Python with disttorch and without PyTorch, or None."""
    python = os.environ.get("DISTTORCH_ECOSYSTEM_PYTHON") or sys.executable
    env = {k: v for k, v in os.environ.items() if k != "DISTTORCH_AS_TORCH"}
    probe = "import importlib.util as u, sys; sys.exit(0 if u.find_spec('torch') is None and u.find_spec('disttorch') else 1)"
    done = subprocess.run([python, "-c", probe], env=env, capture_output=True, timeout=120)
    return python if done.returncode == 0 else None


def _installed(python: str, module: str) -> bool:
    """Whether ``module`` is installed for ``python`` (found, not imported: it imports torch)."""
    probe = f"import importlib.util as u, sys; sys.exit(0 if u.find_spec({module!r}) else 1)"
    return subprocess.run([python, "-c", probe], capture_output=True, timeout=120).returncode == 0


SCRIPTS = (
    sorted(p.stem[2:] for p in (CORPUS / "scripts").glob("t_*.py")) if (CORPUS / "run.py").is_file() else []
)


@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(reason=f"needs {KNOWN_GAPS[n]}", strict=False))
        if n in KNOWN_GAPS
        else n
        for n in SCRIPTS
    ]
    or [pytest.param("none", marks=pytest.mark.skip(reason=f"no ecosystem corpus at {CORPUS}"))],
)
def test_ecosystem_script_matches_pytorch(name, tmp_path):
    python = _python()
    if python is None:
        pytest.skip("no Python without PyTorch to run the scripts in (set DISTTORCH_ECOSYSTEM_PYTHON)")
    run = _runner()
    (script,) = run.select(run.discover(str(CORPUS / "scripts")), [name])
    module = script["library"].replace("-", "_")
    if not _installed(python, module):
        pytest.skip(f"{script['library']} is not installed for {python}")
    result = run.run_script(script, [python, "-m", "disttorch.as_torch"], str(tmp_path), 600)
    verdict = run.judge(script, result, str(CORPUS / "reference"), 600)
    assert verdict["ok"], f"{name}: {verdict['detail']}\n{result['stderr'][-3000:]}"
