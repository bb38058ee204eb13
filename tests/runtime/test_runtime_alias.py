"""The opt-in ``import torch`` alias: python -m disttorch.as_torch, DISTTORCH_AS_TORCH=1 and
disttorch-launch --as-torch, reaching every Python process of a run, and off by default."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent("""
    import multiprocessing as mp
    import sys

    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, Dataset


    def child(q):
        import torch
        import torch.nn
        q.put((torch.__name__, torch.nn.__name__, sys.modules["torch"] is sys.modules["disttorch"]))


    class Names(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            import torch
            return torch.tensor([float(torch.__name__ == "disttorch")])


    if __name__ == "__main__":
        import disttorch
        assert sys.modules["torch"] is disttorch and torch is disttorch
        assert nn is disttorch.nn and torch.utils.data.DataLoader is DataLoader
        assert sys.modules["torch.nn"] is disttorch.nn
        assert torch.__spec__.name == "disttorch" and disttorch.nn.__spec__.name == "disttorch.nn"
        try:
            import torch.no_such_module  # noqa: F401
        except ModuleNotFoundError as e:
            assert e.name == "torch.no_such_module", e.name
        else:
            raise AssertionError("torch.no_such_module imported")
        print("args", sys.argv[1:])
        for method in sys.argv[1].split(","):
            ctx = mp.get_context(method)
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            print(method, q.get(timeout=60))
            p.join(30)
        for method in sys.argv[2].split(",") if len(sys.argv) > 2 else ():
            loader = DataLoader(Names(), batch_size=2, num_workers=2, multiprocessing_context=method)
            print("loader", method, [b.tolist() for b in loader])
""")


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DISTTORCH_AS_TORCH",)}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    )
    env.update(extra)
    return env


def _run(args: list[str], tmp_path: Path, env: dict, timeout: float = 150) -> str:
    result = subprocess.run(
        args, cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=timeout
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.timeout(180)
def test_as_torch_reaches_fork_spawn_forkserver_children_and_dataloader_workers(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROBE)
    out = _run(
        [sys.executable, "-m", "disttorch.as_torch", str(prog), "fork,spawn,forkserver", "spawn,fork"],
        tmp_path,
        _env(),
    )
    assert "args ['fork,spawn,forkserver', 'spawn,fork']" in out
    for method in ("fork", "spawn", "forkserver"):
        assert f"{method} ('disttorch', 'disttorch.nn', True)" in out, out
    for method in ("spawn", "fork"):
        assert f"loader {method} [[[1.0], [1.0]], [[1.0], [1.0]]]" in out, out


@pytest.mark.timeout(120)
def test_as_torch_runs_a_module_and_sets_argv_and_path_like_python(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "main.py").write_text("import sys, torch\nprint(torch.__name__, __name__, sys.argv[1:])\n")
    out = _run([sys.executable, "-m", "disttorch.as_torch", "-m", "pkg.main", "--x", "1"], tmp_path, _env())
    assert out.strip() == "disttorch __main__ ['--x', '1']"
    script = tmp_path / "sub" / "s.py"
    script.parent.mkdir()
    (script.parent / "helper.py").write_text("VALUE = 7\n")
    script.write_text(
        "import sys, helper, torch\nprint(sys.argv[0], helper.VALUE, torch.__name__, __file__)\n"
    )
    # argv[0] as given, __file__ (and so tracebacks and warnings) absolute, as Python sets them
    assert _run([sys.executable, "-m", "disttorch.as_torch", "sub/s.py"], tmp_path, _env()).strip() == (
        f"sub/s.py 7 disttorch {script}"
    )
    (script.parent / "fails.py").write_text("import torch\n\ndef f():\n    raise ValueError('boom')\n\nf()\n")
    failed = subprocess.run(
        [sys.executable, "-m", "disttorch.as_torch", "sub/fails.py"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # an uncaught exception's traceback starts at the script, as python's does
    assert failed.returncode == 1 and failed.stderr.startswith(
        f'Traceback (most recent call last):\n  File "{script.parent / "fails.py"}", line 6, in <module>\n'
    ), failed.stderr
    assert failed.stderr.endswith("ValueError: boom\n")
    # a program that does not compile: its SyntaxError alone, as python prints it
    (script.parent / "bad.py").write_text("import torch\nprint(from x import y)\n")
    bad = [
        subprocess.run(
            [*launcher, "sub/bad.py"],
            cwd=tmp_path,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        for launcher in ([sys.executable], [sys.executable, "-m", "disttorch.as_torch"])
    ]
    assert bad[1].returncode == bad[0].returncode == 1
    assert bad[1].stderr == bad[0].stderr and bad[1].stderr.startswith(
        f'  File "{script.parent / "bad.py"}", line 2'
    )
    missing = subprocess.run(
        [sys.executable, "-m", "disttorch.as_torch", "nope.py"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert missing.returncode == 2 and "can't open file" in missing.stderr


@pytest.mark.timeout(120)
def test_environment_variable_with_the_site_directory_aliases_any_python_process(tmp_path):
    from disttorch.as_torch import enable_for_children

    env = enable_for_children(_env())
    assert env["DISTTORCH_AS_TORCH"] == "1" and env["PYTHONPATH"].split(os.pathsep)[0].endswith("_site")
    code = "import torch, sys; print(torch.__name__, sys.modules['torch'] is sys.modules['disttorch'])"
    assert _run([sys.executable, "-c", code], tmp_path, env).strip() == "disttorch True"
    env["DISTTORCH_AS_TORCH"] = "0"  # the directory alone does nothing: the real PyTorch, or none
    real = "torch" if importlib.util.find_spec("torch") is not None else "no torch"
    code = "try:\n    import torch\nexcept ModuleNotFoundError:\n    print('no torch')\nelse:\n    print(torch.__name__)"
    assert _run([sys.executable, "-c", code], tmp_path, env).strip() == real


@pytest.mark.timeout(120)
def test_without_the_flag_the_real_pytorch_is_not_shadowed(tmp_path):
    pytest.importorskip("torch")
    code = (
        "import sys, torch, disttorch; print(torch.__name__, torch is disttorch, "
        "'site-packages' in torch.__file__, hasattr(torch, '_C'))"
    )
    assert _run([sys.executable, "-c", code], tmp_path, _env()).strip() == "torch False True True"


@pytest.mark.timeout(120)
def test_alias_refuses_to_mix_with_an_already_imported_pytorch(tmp_path):
    pytest.importorskip("torch")
    code = "import torch\nfrom disttorch.as_torch import install\ninstall()\n"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode != 0 and "a real PyTorch" in result.stderr


@pytest.mark.timeout(180)
def test_launcher_as_torch_gives_every_rank_the_alias(tmp_path):
    prog = tmp_path / "ranks.py"
    prog.write_text(
        textwrap.dedent("""
        import multiprocessing as mp, sys
        import torch
        import torch.distributed as dist

        def child(q):
            import torch
            q.put(torch.__name__)

        if __name__ == "__main__":
            dist.init_process_group(torch.distributed.get_default_backend_for_device("cpu"))
            t = torch.ones(2) * (dist.get_rank() + 1)
            dist.all_reduce(t)
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            print("rank", dist.get_rank(), torch.__name__, t.tolist(), q.get(timeout=60),
                  dist.is_torchelastic_launched(), flush=True)
            p.join()
            dist.destroy_process_group()
    """)
    )
    out = _run(
        [sys.executable, "-m", "disttorch.launcher", "--as-torch", "--nproc", "2", str(prog)],
        tmp_path,
        _env(),
    )
    for rank in (0, 1):
        assert f"rank {rank} disttorch [3.0, 3.0] disttorch True" in out, out


RANKS = textwrap.dedent("""
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    t = torch.ones(2) * (dist.get_rank() + 1)
    dist.all_reduce(t)
    print("rank", dist.get_rank(), dist.get_world_size(), torch.__name__, t.tolist(), flush=True)
    dist.destroy_process_group()
""")


@pytest.mark.timeout(120)
def test_as_torch_runs_a_torch_module_as_main(tmp_path):
    """``python -m disttorch.as_torch -m torch.x`` runs ``disttorch.x`` as ``__main__``."""
    prog = tmp_path / "ranks.py"
    prog.write_text(RANKS)
    out = _run(
        [sys.executable, "-m", "disttorch.as_torch", "-m", "torch.distributed.run"]
        + ["--standalone", "--nproc-per-node", "2", str(prog)],
        tmp_path,
        _env(),
    )
    for rank in (0, 1):
        assert f"rank {rank} 2 disttorch [3.0, 3.0]" in out, out


@pytest.mark.timeout(120)
def test_distributed_run_launches_a_disttorch_script_like_torchrun(tmp_path):
    prog = tmp_path / "ranks.py"
    prog.write_text(
        RANKS.replace("import torch\n", "import disttorch as torch\n").replace(
            "import torch.distributed as dist", "import disttorch.distributed as dist"
        )
    )
    out = _run(
        [sys.executable, "-m", "disttorch.distributed.run", "--nproc_per_node", "2", str(prog)],
        tmp_path,
        _env(),
    )
    for rank in (0, 1):
        assert f"rank {rank} 2 disttorch [3.0, 3.0]" in out, out


@pytest.mark.parity
def test_distributed_run_has_torchruns_entry_point(torch):
    import inspect

    import torch.distributed.run as theirs

    import disttorch.distributed.run as ours

    assert list(inspect.signature(ours.main).parameters) == list(inspect.signature(theirs.main).parameters)


def _build(src: Path, out: Path, editable: bool) -> Path:
    hook = "build_editable" if editable else "build_wheel"
    code = f"from setuptools import build_meta as b; print(b.{hook}({str(out)!r}))"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=src,
        capture_output=True,
        text=True,
        check=False,
        timeout=170,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    if result.returncode != 0 and "bdist_wheel" in result.stderr:
        pytest.skip("this setuptools needs the 'wheel' package to build wheels")
    assert result.returncode == 0, result.stderr
    return out / result.stdout.strip().splitlines()[-1]


@pytest.mark.timeout(400)
@pytest.mark.parametrize("editable", [False, True], ids=["pip-install", "pip-install-e"])
def test_installed_pth_hook_acts_only_with_the_flag(tmp_path, editable):
    """The .pth file both kinds of install put in site-packages: DISTTORCH_AS_TORCH=1 alone
    (no PYTHONPATH) aliases torch; without it, nothing happens."""
    import shutil
    import zipfile

    find = __import__("importlib").util.find_spec
    if find("setuptools") is None:
        pytest.skip("setuptools is not installed")
    if find("wheel") is None and find("setuptools.command.bdist_wheel") is None:
        pytest.skip("this setuptools needs the 'wheel' package to build wheels")
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in ("disttorch", "launcher"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "setup.py"):
        shutil.copy(ROOT / name, src / name)
    wheel = _build(src, tmp_path / "dist", editable)
    site_dir = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site_dir)
    assert (site_dir / "disttorch_as_torch.pth").exists()
    # -S, the wheel's directory as the site directory, then a plain sys.path entry for this
    # environment's packages (numpy, ...): only the built wheel's .pth files are processed,
    # not those of a disttorch installed here (its editable finder module has the same name)
    purelib = __import__("sysconfig").get_paths()["purelib"]
    code = (
        f"import sys, site; site.addsitedir({str(site_dir)!r}); sys.path.append({purelib!r}); "
        "import torch, disttorch; print(torch.__name__, disttorch.__file__)"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DISTTORCH_AS_TORCH")}
    on = _run([sys.executable, "-S", "-c", code], tmp_path, {**env, "DISTTORCH_AS_TORCH": "1"}).split()
    assert on[0] == "disttorch"
    assert on[1].startswith(str(src if editable else site_dir)), on
    if __import__("importlib").util.find_spec("torch") is not None:
        off = _run([sys.executable, "-S", "-c", code], tmp_path, env).split()
        assert off[0] == "torch"


@pytest.mark.timeout(60)
def test_the_shadowed_sitecustomize_still_runs(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import builtins\nbuiltins.OTHER_SITE_RAN = True\n")
    from disttorch.as_torch import enable_for_children

    env = enable_for_children(_env())
    env["PYTHONPATH"] = os.pathsep.join(
        [env["PYTHONPATH"].split(os.pathsep)[0], str(other), *env["PYTHONPATH"].split(os.pathsep)[1:]]
    )
    code = "import builtins, torch; print(getattr(builtins, 'OTHER_SITE_RAN', False), torch.__name__)"
    assert _run([sys.executable, "-c", code], tmp_path, env).strip() == "True disttorch"


NAMES = (
    "import torch\n"
    "print(torch.float32, torch.ones(2, 3).shape, torch.strided)\n"
    "print(torch.ones(2, dtype=torch.float64))\n"
    "print(torch.ones(2, 2).max(0))\n"
    "print(torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2))]))\n"
    "print(type(torch.ones(1)), torch.Size, type(torch.float32), torch.device)\n"
)
NAMES_TORCH = """torch.float32 torch.Size([2, 3]) torch.strided
tensor([1., 1.], dtype=torch.float64)
torch.return_types.max(
values=tensor([1., 1.]),
indices=tensor([0, 0]))
ParameterList(  (0): Parameter containing: [torch.float32 of size 2])
<class 'torch.Tensor'> <class 'torch.Size'> <class 'torch.dtype'> <class 'torch.device'>
"""


@pytest.mark.timeout(120)
def test_under_the_alias_reprs_name_torch(tmp_path):
    """What a PyTorch program prints of dtypes, sizes, layouts and named results reads
    ``torch.``, as under PyTorch; without the alias, disttorch's own name."""
    script = tmp_path / "names.py"
    script.write_text(NAMES)
    got = _run([sys.executable, "-m", "disttorch.as_torch", str(script)], tmp_path, _env())
    assert got == NAMES_TORCH
    own = _run(
        [sys.executable, "-c", NAMES.replace("import torch", "import disttorch as torch")], tmp_path, _env()
    )
    assert own == NAMES_TORCH.replace("torch.", "disttorch.")


def test_reprs_name_torch_under_the_alias(monkeypatch):
    """What a program prints (or edits: ``str(dtype).replace("torch.", "")``) is PyTorch's
    text while disttorch stands in for it, and disttorch's own otherwise."""
    import disttorch as dt

    x = dt.zeros(2, dtype=dt.float64)
    assert (repr(dt.float32), repr(x.shape), repr(dt.strided)) == (
        "disttorch.float32",
        "disttorch.Size([2])",
        "disttorch.strided",
    )
    monkeypatch.setitem(sys.modules, "torch", dt)
    assert str(dt.float32) == "torch.float32" and str(x.dtype).replace("torch.", "") == "float64"
    assert repr(x.shape) == "torch.Size([2])" and repr(dt.strided) == "torch.strided"
    assert repr(x) == "tensor([0., 0.], dtype=torch.float64)"
    assert repr(dt.max(dt.ones(2, 2), 0)).startswith("torch.return_types.max(")
    assert "torch.float32" in repr(dt.nn.ParameterList([dt.nn.Parameter(dt.ones(1))]))


@pytest.mark.timeout(120)
def test_under_the_alias_a_torch_function_kept_early_is_the_one_torch_names_later(tmp_path):
    """A library keeps ``torch.lt`` in a table at import (``{"min": torch.lt}``) and later
    compares ``op == torch.lt``: importing ``torch.fx`` in between (which makes the functions
    hand proxies to ``__torch_function__``) must not change what ``torch.lt`` is."""
    script = tmp_path / "kept.py"
    script.write_text(
        "import torch\n"
        "MODES = {'min': torch.lt, 'max': torch.gt}\n"
        "import torch.fx\n"
        "import torch.nn.functional as F\n"
        "print(MODES['min'] is torch.lt, MODES['max'] == torch.gt, F.relu is torch.nn.functional.relu)\n"
    )
    got = _run([sys.executable, "-m", "disttorch.as_torch", str(script)], tmp_path, _env())
    assert got.split() == ["True", "True", "True"]
