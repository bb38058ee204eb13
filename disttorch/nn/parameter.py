"""(being written)"""
from .._tensor import Tensor

Parameter = Buffer = Tensor
