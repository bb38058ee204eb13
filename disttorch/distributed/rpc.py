"""``torch.distributed.rpc``: remote procedure calls are not part of disttorch.

As in a PyTorch built without RPC (``USE_RPC=0``), the module imports and offers only
``is_available()``, which answers False; libraries check it (or ``hasattr(rpc, "api")``)
before using RPC.
"""

__all__ = ["is_available"]


def is_available() -> bool:
    """False: disttorch has no RPC framework (collectives and p2p only)."""
    return False
