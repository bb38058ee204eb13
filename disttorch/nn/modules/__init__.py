"""Layers, one family per file; each file lists its public classes in ``__all__``."""

from . import (
    activation,
    adaptive,
    attention,
    batchnorm,
    channelshuffle,
    container,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,
    linear,
    loss,
    loss_extra,
    module,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    sync_batchnorm,
    transformer,
    upsampling,
)
from .activation import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .loss_extra import *  # noqa: F401,F403
from .module import Module  # the global hook registrars stay in nn.modules.module
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .sync_batchnorm import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403

__all__ = [
    "Module",
    *(
        name
        for mod in (
            activation,
            adaptive,
            attention,
            batchnorm,
            channelshuffle,
            container,
            conv,
            distance,
            dropout,
            flatten,
            fold,
            instancenorm,
            linear,
            loss,
            loss_extra,
            normalization,
            padding,
            pixelshuffle,
            pooling,
            rnn,
            sparse,
            sync_batchnorm,
            transformer,
            upsampling,
        )
        for name in mod.__all__
    ),
]
