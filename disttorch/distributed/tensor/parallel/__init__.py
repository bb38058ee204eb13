"""``disttorch.distributed.tensor.parallel`` (mirrors ``torch.distributed.tensor.parallel``):
``parallelize_module``, the parallel styles and ``loss_parallel``.

The implementation lives in ``disttorch.nn.parallel.tensor_parallel`` (the styles know
``nn`` modules, and ``distributed`` never imports ``nn``); this package re-exports it
lazily, on first use of a name (PEP 562 ``__getattr__``, which also answers ``__all__``); its
submodules ``api``, ``style`` and ``loss`` do the same for theirs.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    from ....nn.parallel import tensor_parallel

    if name == "__all__" or name in tensor_parallel.__all__:
        return getattr(tensor_parallel, name)
    raise AttributeError(f"module 'disttorch.distributed.tensor.parallel' has no attribute '{name}'")
