"""setuptools hook: install ``disttorch_as_torch.pth`` at the top of site-packages.

The ``.pth`` line does nothing unless ``DISTTORCH_AS_TORCH`` is set; then it installs the
``import torch`` -> disttorch alias at interpreter start-up (see ``disttorch.as_torch``).
Both ``pip install .`` (build_py) and ``pip install -e .`` (editable_wheel) ship it.
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "disttorch_as_torch.pth"
PTH_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "disttorch", "as_torch", PTH)


class BuildPyWithPth(build_py):
    """build_py that also puts the alias ``.pth`` at the root of the built tree."""

    def run(self) -> None:
        super().run()
        self.copy_file(PTH_SOURCE, os.path.join(self.build_lib, PTH), preserve_mode=False)

    def get_outputs(self, include_bytecode: bool = True) -> list:
        return [*super().get_outputs(include_bytecode), os.path.join(self.build_lib, PTH)]


class EditableWheelWithPth(editable_wheel):
    """editable_wheel that also writes the alias ``.pth`` into the editable wheel's root
    (setuptools installs files of the unpacked wheel's root next to its own ``.pth``)."""

    def _install_namespaces(self, installation_dir, pth_prefix) -> None:
        super()._install_namespaces(installation_dir, pth_prefix)
        shutil.copyfile(PTH_SOURCE, os.path.join(installation_dir, PTH))


setup(cmdclass={"build_py": BuildPyWithPth, "editable_wheel": EditableWheelWithPth})
