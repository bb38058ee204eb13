"""The CUDA graph and stream-context names of a CPU build."""

from __future__ import annotations

import pytest

import disttorch as dt


def test_cuda_graph_names_raise_as_the_cpu_build():
    """``torch.cuda.CUDAGraph``/``graph``/``StreamContext`` exist (libraries name them in
    type hints); making a graph raises, a stream context selects nothing."""
    with pytest.raises(RuntimeError, match="dummy base class CUDAGraph"):
        dt.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="torch.cuda.Stream requires CUDA support"):
        dt.cuda.graph(None)
    with dt.cuda.StreamContext(None) as entered:
        assert entered is None
