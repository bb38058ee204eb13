"""disttorch.datasets: the shipped digits and Shakespeare text, and the character vocabulary."""

import numpy as np
import pytest

import disttorch as torch
from disttorch.datasets import CharVocab, OptDigits, data_path, load_digits, load_shakespeare


@pytest.mark.parametrize("split, count", [("train", 3823), ("test", 1797)])
def test_digits_counts_shapes_and_values(split, count):
    images, labels = load_digits(split)
    assert images.shape == (count, 1, 8, 8) and images.dtype == torch.float32
    assert labels.shape == (count,) and labels.dtype == torch.int64
    x = images.numpy()
    assert x.min() == 0.0 and x.max() == 1.0
    assert np.allclose(x * 16, np.round(x * 16))  # pixel counts 0..16, scaled
    assert sorted(set(labels.tolist())) == list(range(10))
    assert min(np.bincount(labels.numpy())) > count // 20  # every class is well represented


def test_first_training_digit_matches_the_file():
    images, labels = load_digits("train")
    # first row of optdigits.tra: 0,1,6,15,12,1,0,0,... class 0
    assert (images[0, 0, 0] * 16).tolist() == [0, 1, 6, 15, 12, 1, 0, 0]
    assert labels[0].item() == 0


def test_optdigits_dataset():
    train, test = OptDigits(), OptDigits(train=False)
    assert (len(train), len(test)) == (3823, 1797)
    image, label = test[5]
    assert image.shape == (1, 8, 8) and label.dtype == torch.int64


def test_bad_split_names_the_choices():
    with pytest.raises(ValueError, match="split must be 'train' or 'test', got 'validation'"):
        load_digits("validation")


def test_shakespeare_and_vocabulary_round_trip():
    text = load_shakespeare()
    assert len(text) == 1115394 and text.startswith("First Citizen:\nBefore we proceed")
    vocab = CharVocab(text)
    assert len(vocab) == 65 and vocab.chars[0] == "\n"
    ids = vocab.encode("ROMEO: hi")
    assert ids.dtype == torch.int64 and ids.shape == (9,)
    assert vocab.decode(ids) == "ROMEO: hi" and vocab.decode(ids.tolist()) == "ROMEO: hi"
    with pytest.raises(ValueError, match="character '~' is not in the vocabulary of 65 characters"):
        vocab.encode("~")


def test_data_path_rejects_unknown_names():
    with pytest.raises(
        ValueError, match="unknown data file 'mnist.gz'; expected one of optdigits.tra.csv.gz"
    ):
        data_path("mnist.gz")
