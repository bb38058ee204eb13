"""Under the ``import torch`` alias disttorch's modules pickle by their ``torch.`` name, as an
installed PyTorch's do: ``dill`` (``datasets``' fingerprints of ``map`` functions) would
otherwise pickle an editable install's modules by value, namespace and all."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent("""
    import pickle
    import types
    import disttorch.as_torch
    disttorch.as_torch.install()
    import torch
    import torch.nn.functional as F
    blob = pickle.dumps([torch, F, torch.nn])
    back = pickle.loads(blob)
    print(back[0] is torch, back[1] is F, back[2] is torch.nn, len(blob) < 200)
    print(isinstance(torch, types.ModuleType), b"torch.nn.functional" in blob)
""")


def test_modules_pickle_by_their_torch_name_under_the_alias(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k != "DISTTORCH_AS_TORCH"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"] * 6
