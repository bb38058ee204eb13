"""``torch.backends`` as a CPU build of PyTorch has it: flags programs set and backend queries.

Submodules ``cudnn``, ``cuda``, ``mps``, ``mkldnn``, ``mkl``, ``openmp``, ``cpu`` and
``opt_einsum``. GPU backends are never available (``cudnn.is_available()`` and
``mps.is_available()`` are False); their flags (``cudnn.benchmark``,
``cuda.matmul.allow_tf32``, ...) can be set and read back and change nothing, since
disttorch computes with NumPy on the CPU. ``mkldnn``, ``mkl`` and ``openmp`` answer for
disttorch itself, which uses none of them (False), where PyTorch's CPU build answers True.
"""

from __future__ import annotations

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "fp32_precision", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]

fp32_precision = "none"
