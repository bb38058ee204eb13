"""``torch._dynamo.exc``: the compiler's exceptions (defined in :mod:`disttorch._compile_errors`,
where ``torch.compile`` raises ``InvalidBackend`` for a backend name that does not exist)."""

from __future__ import annotations

from .._compile_errors import *  # noqa: F403 - the module publishes them all
from .._compile_errors import __all__  # noqa: F401
