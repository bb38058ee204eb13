"""Put on PYTHONPATH by ``python -m disttorch.as_torch`` and ``disttorch-launch --as-torch``.

Every Python process of the run (the script, launcher ranks, ``multiprocessing`` spawn and
forkserver children, DataLoader workers) installs the ``import torch`` -> disttorch alias
at start-up when ``DISTTORCH_AS_TORCH`` is set, then runs the ``sitecustomize`` this one
shadows (the next on ``sys.path``), if any.
"""

import importlib.machinery
import importlib.util
import os
import sys


def _run() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    finder_path = os.path.join(os.path.dirname(here), "_finder.py")
    spec = importlib.util.spec_from_file_location("_disttorch_as_torch_finder", finder_path)
    finder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(finder)
    if finder.requested():
        finder.install()
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    shadowed = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if shadowed is not None and shadowed.loader is not None:
        module = importlib.util.module_from_spec(shadowed)
        sys.modules["sitecustomize"] = module
        shadowed.loader.exec_module(module)


_run()
