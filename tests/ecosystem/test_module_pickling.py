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


#: objects a library's fingerprint holds; under the alias their pickles are PyTorch's bytes
OBJECTS = """[torch.float32, torch.int64, torch.bool, torch.bfloat16, torch.float8_e4m3fn, torch.qint8,
    torch.device("cpu"), torch.device("cuda", 0), torch.Size([2, 3]), torch.nn.Linear, torch.per_tensor_affine,
    torch.nn.functional.relu, torch.nn.functional.softmax]"""

IDENTITY_PROBE = textwrap.dedent("""
    import pickle
    import disttorch.as_torch
    disttorch.as_torch.install()
    import torch
    objs = OBJECTS
    print(repr([pickle.dumps(o, protocol=p) for o in objs for p in (4, 5)]))
    print(all(pickle.loads(pickle.dumps(o)) == o for o in objs + [torch.strided, torch.channels_last]))
""").replace("OBJECTS", OBJECTS)


def test_dtypes_devices_and_sizes_pickle_as_pytorch_does(tmp_path, torch):
    import ast
    import pickle

    import torch.nn.functional  # noqa: F401

    expected = [pickle.dumps(o, protocol=p) for o in eval(OBJECTS, {"torch": torch}) for p in (4, 5)]
    script = tmp_path / "identity.py"
    script.write_text(IDENTITY_PROBE)
    env = {k: v for k, v in os.environ.items() if k != "DISTTORCH_AS_TORCH"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert ast.literal_eval(done.stdout.splitlines()[0]) == expected
    assert done.stdout.splitlines()[1] == "True"


def test_dtypes_and_sizes_pickle_as_disttorch_globals_without_the_alias():
    import pickle

    import disttorch as dt

    for obj in (dt.float32, dt.bfloat16, dt.qint8, dt.strided, dt.per_tensor_affine):
        blob = pickle.dumps(obj, protocol=4)
        assert pickle.loads(blob) is obj and b"_by_name" not in blob  # a global: disttorch.float32
    size = dt.Size([2, 3])
    back = pickle.loads(pickle.dumps(size))
    assert type(back) is dt.Size and back == size
    assert pickle.loads(pickle.dumps(dt.device("cpu"))) == dt.device("cpu")


def test_layouts_and_schemes_pickled_by_earlier_disttorch_still_load():
    """Before they pickled as globals, they pickled as ``_by_name(name)`` calls."""
    import pickle

    import disttorch as dt
    from disttorch import _layout, _qscheme

    for module, obj in ((_layout, dt.sparse_csr), (_qscheme, dt.per_channel_affine)):
        blob = pickle.dumps(obj.name, protocol=2)  # the name, then REDUCE on the function
        old = b"c" + module.__name__.encode() + b"\n_by_name\n" + blob[2:-1] + b"\x85R."
        assert pickle.loads(old) is obj


def test_public_functions_closures_do_not_hold_themselves():
    """dill (``datasets``' fingerprint of a function calling ``F.relu``) walks closures
    without a cycle check: a twin holding itself recursed until RecursionError."""
    import types

    import disttorch as dt
    import disttorch.fx  # noqa: F401  (swaps the public functions for their dispatching twins)

    def walk(fn, path):
        for cell in fn.__closure__ or ():
            value = cell.cell_contents
            if isinstance(value, types.FunctionType):
                assert value not in path, fn.__name__
                walk(value, path | {value})

    for fn in (dt.nn.functional.relu, dt.nn.functional.softmax, dt.add, dt.Tensor.__add__):
        assert fn.__closure__, "not a dispatching twin"
        walk(fn, {fn})
