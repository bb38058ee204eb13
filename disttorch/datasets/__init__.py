"""disttorch.datasets: small real data sets shipped inside the package (no download).

    from disttorch.datasets import load_digits, load_shakespeare, CharVocab
    images, labels = load_digits("train")     # float32 [3823, 1, 8, 8] in [0, 1], int64 [3823]
    text = load_shakespeare()                  # about 1.1 million characters
    vocab = CharVocab(text); ids = vocab.encode("To be")

Sources and licenses: ``disttorch/datasets/ATTRIBUTION.md``.
"""

from ._files import data_path
from .digits import OptDigits, load_digits
from .text import CharVocab, load_shakespeare

__all__ = ["load_digits", "OptDigits", "load_shakespeare", "CharVocab", "data_path"]
