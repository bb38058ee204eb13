"""Under the ``import torch`` alias, ``torch.__version__`` and ``importlib.metadata`` answer
the PyTorch API version disttorch follows, labelled as disttorch; without the alias they
never answer for ``torch`` (a real PyTorch alongside is not shadowed)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent("""
    import importlib.metadata as md
    import importlib.util
    import sys
    alias = sys.argv[1] == "on"
    if alias:
        import disttorch.as_torch
        disttorch.as_torch.install()
    try:
        print("metadata", md.version("torch"), md.distribution("torch").metadata["Name"])
    except md.PackageNotFoundError:
        print("metadata none")
    if alias:
        import torch
        print("version", torch.__version__, type(torch.__version__).__name__)
        print("torch.version", torch.version.__version__, torch.__version__ >= (2, 6))
        print("torch.torch", torch.torch is torch, torch.torch.Tensor is torch.Tensor)
    else:
        import disttorch
        print("own", disttorch.__version__)
""")


def _probe(tmp_path: Path, mode: str) -> str:
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k != "DISTTORCH_AS_TORCH"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, str(script), mode],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_alias_answers_the_pytorch_api_version_labelled_as_disttorch(tmp_path):
    import disttorch
    from disttorch.as_torch._finder import PYTORCH_API_VERSION

    want = f"{PYTORCH_API_VERSION}+disttorch.{disttorch.__version__}"
    out = _probe(tmp_path, "on").splitlines()
    assert out == [
        f"metadata {want} torch",
        f"version {want} TorchVersion",
        f"torch.version {want} True",
        "torch.torch True True",
    ]


def test_without_the_alias_nothing_answers_for_torch(tmp_path):
    import importlib.metadata as md

    import disttorch

    try:
        real = f"metadata {md.version('torch')} torch"  # PyTorch itself, when installed
    except md.PackageNotFoundError:
        real = "metadata none"
    assert _probe(tmp_path, "off").splitlines() == [real, f"own {disttorch.__version__}"]
