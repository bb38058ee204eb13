"""Under the ``import torch`` alias, disttorch's classes carry PyTorch's module paths: what
``type(model.fc)``, ``repr(type(opt))``, ``Linear.__module__`` and pickles show is what
PyTorch shows (``torch.nn.modules.linear.Linear``, also for classes disttorch defines in
another file, ``nn.CELU`` -> ``torch.nn.modules.activation.CELU``); so do the public functions
of ``nn.init``, which modes skipping initialisation recognise by their module."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent("""
    import inspect
    import pickle
    import pickletools
    import torch
    import torch.nn as nn
    try:  # the compiler's errors, before torch._dynamo is imported
        torch.compile(lambda x: x, backend="nosuch")
    except RuntimeError as error:
        print(type(error))
    model = nn.Sequential(nn.Linear(2, 3), nn.CELU(), nn.MultiheadAttention(4, 2), nn.CTCLoss())
    opt = torch.optim.Adam(model.parameters())
    sched = torch.optim.lr_scheduler.StepLR(opt, 1)
    print(type(model[0]), repr(type(opt)), nn.Linear.__module__, type(sched))
    print(type(model[1]), type(model[2]), type(model[3]), nn.SyncBatchNorm, torch.optim.Adafactor)
    print(torch.Tensor, torch.Size, torch.finfo, torch.layout, torch.nn.Parameter, torch.autograd.Function)
    print(torch.utils.data.DataLoader, torch.distributions.Normal, torch.typename(model[0]))
    print(type(torch.max(torch.ones(2, 2), 0)), torch.Generator, torch.UntypedStorage)
    classes = [type(m) for m in model.modules()] + [type(opt), type(sched)]
    print([a for op, a, _ in pickletools.genops(pickle.dumps(classes, protocol=2)) if op.name == "GLOBAL"])
    print(type(pickle.loads(pickle.dumps(model))[1]), inspect.getsource(nn.Linear.__init__)[:20])
    import torch.utils._device
    from torch.overrides import TorchFunctionMode
    class SkipInit(TorchFunctionMode):  # lit-llama's EmptyInitOnDevice
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if getattr(func, "__module__", None) == "torch.nn.init":
                return kwargs["tensor"] if "tensor" in kwargs else args[0]
            return func(*args, **kwargs)
    w = torch.zeros(2)
    with SkipInit():
        nn.init.constant_(w, 3.0)
        nn.init.kaiming_uniform_(w.view(1, 2))
    print(w, nn.init.kaiming_uniform_.__module__, nn.init.calculate_gain.__module__)
    constructors = torch.utils._device._device_constructors()
    print(torch.empty in constructors, torch.tensor in constructors, torch.zeros_like in constructors)
    print(torch.serialization.normalize_storage_type(torch.UntypedStorage))
    import torch.ao.quantization as tq  # observer factories: partials, their repr and class paths
    print(tq.get_default_qconfig("x86"), tq.MinMaxObserver.with_args(quant_min=0).with_args(quant_max=3))
""")


def _alias_output(tmp_path: Path) -> str:
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k != "DISTTORCH_AS_TORCH"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "disttorch.as_torch", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_alias_prints_and_pickles_pytorch_class_paths(tmp_path, torch, capsys):
    got = _alias_output(tmp_path)
    assert "disttorch" not in got
    assert "<class 'torch.nn.modules.linear.Linear'> <class 'torch.optim.adam.Adam'>" in got
    assert "<class 'torch.nn.modules.activation.CELU'>" in got
    exec(compile(PROBE, "probe.py", "exec"), {})  # the same lines under PyTorch
    want = capsys.readouterr().out
    assert got.splitlines() == want.splitlines()


def test_without_the_alias_classes_keep_disttorch_paths():
    import disttorch

    assert disttorch.nn.Linear.__module__ == "disttorch.nn.modules.linear"
    assert disttorch.Tensor.__module__ == "disttorch"
