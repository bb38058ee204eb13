"""Packaging: the data ships inside the package; a wheel holds disttorch (with its launcher as
``disttorch.launcher``, no top-level ``launcher``), the data and the scripts."""

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
DATA = ("optdigits.tra.csv.gz", "optdigits.tes.csv.gz", "tinyshakespeare.txt.gz")


def test_data_files_and_attribution_are_package_resources():
    package = resources.files("disttorch.datasets")
    for name in DATA:
        assert package.joinpath("data", name).read_bytes()[:2] == b"\x1f\x8b"  # gzip
    attribution = package.joinpath("ATTRIBUTION.md").read_text()
    assert "Alpaydin" in attribution and "CC BY 4.0" in attribution and "public domain" in attribution


def test_pyproject_declares_dependencies_extras_and_scripts():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    # threadpoolctl: the intra-op thread budget holds NumPy's BLAS to it (kernels/threads.py)
    assert {d.split(">")[0] for d in project["dependencies"]} == {
        "numpy",
        "pyzmq",
        "cloudpickle",
        "threadpoolctl",
    }
    test_extra = {d.split(">")[0] for d in project["optional-dependencies"]["test"]}
    assert {"pytest", "pytest-timeout", "matplotlib", "pyyaml"} <= test_extra
    assert project["scripts"] == {
        "disttorch-launch": "disttorch.launcher.main:main",
        "disttorch-plot": "disttorch.viz.__main__:main",
    }
    # no ``torchrun``: pip would overwrite PyTorch's script where both are installed, and
    # uninstalling disttorch would then delete it (README, "torchrun")
    assert "torchrun" not in project["scripts"]


@pytest.mark.timeout(120)
def test_wheel_holds_packages_data_and_entry_points(tmp_path):
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("setuptools is not installed: cannot build a wheel without network isolation")
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("disttorch", "launcher"):  # disttorch/launcher is a link to ../launcher: copied as a link
        shutil.copytree(ROOT / name, src / name, ignore=ignore, symlinks=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=110,
    )
    if result.returncode != 0 and "bdist_wheel" in result.stderr:
        pytest.skip("this setuptools needs the 'wheel' package to build wheels")
    assert result.returncode == 0, result.stderr
    (wheel,) = (tmp_path / "dist").glob("disttorch-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in DATA:
        assert f"disttorch/datasets/data/{name}" in names
    for name in (
        "disttorch/datasets/ATTRIBUTION.md",
        "disttorch/py.typed",
        "disttorch/launcher/py.typed",
        "disttorch/launcher/main.py",
        "disttorch/launcher/bootstrap.py",
        "disttorch/_faults.py",
        "disttorch/viz/__main__.py",
        "disttorch/distributed/__init__.py",
    ):
        assert name in names
    launcher_files = {n for n in names if n.startswith("disttorch/launcher/") and n.endswith(".py")}
    assert launcher_files == {f"disttorch/launcher/{p.name}" for p in (ROOT / "launcher").glob("*.py")}
    top_level = {n.split("/")[0] for n in names if ".dist-info/" not in n}
    assert top_level == {"disttorch"}, f"the wheel installs other top-level names: {top_level}"
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert (
        "disttorch-launch = disttorch.launcher.main:main" in text
        and "disttorch-plot = disttorch.viz.__main__:main" in text
    )


def test_readme_opens_with_the_two_commands_and_names_only_existing_files():
    import re

    text = (ROOT / "README.md").read_text()
    commands = [line.strip() for line in text.split("## Contents")[0].splitlines() if line.startswith("    ")]
    assert commands == [
        "pip install -e . && disttorch-launch --nproc 4 examples/train_digits.py",
        "pip install -e '.[test]' && pytest",
    ]
    for path in sorted(set(re.findall(r"\b((?:examples|benchmarks|docs|tests)/[\w./-]+\.(?:py|png))", text))):
        assert (ROOT / path).is_file(), f"README mentions {path}, which does not exist"
