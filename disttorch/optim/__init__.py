"""Optimisers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``) and ``lr_scheduler``."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import Adagrad, RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
