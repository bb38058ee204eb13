# library: datasets
"""datasets with torch: with_format("torch") of nested lists, 2-D arrays, strings, images as arrays, ClassLabel and Sequence features, set_transform with tensors, map returning tensors (batched and not), from_generator of tensors, to_iterable_dataset with a DataLoader and shuffling buffer, interleave_datasets, cast_column, Array2D features, concatenate_datasets, sort by a column."""

import datasets
import numpy as np
import torch
from datasets import (
    Array2D,
    ClassLabel,
    Dataset,
    Features,
    Sequence,
    Value,
    concatenate_datasets,
    interleave_datasets,
)
from torch.utils.data import DataLoader

datasets.disable_progress_bars()
torch.manual_seed(0)
torch.set_num_threads(1)


def describe(v):
    if isinstance(v, torch.Tensor):
        return f"{type(v).__name__}{tuple(v.shape)}:{str(v.dtype).rsplit('.', 1)[-1]}"
    if isinstance(v, list):
        return "[" + ", ".join(describe(x) for x in v) + "]"
    return repr(v)


feats = Features(
    {
        "tokens": Sequence(Value("int32")),
        "label": ClassLabel(names=["neg", "pos"]),
        "grid": Array2D(shape=(2, 3), dtype="float32"),
        "text": Value("string"),
        "nested": Sequence(Sequence(Value("float64"))),
    }
)
data = {
    "tokens": [[1, 2, 3], [4, 5], [6], [7, 8, 9]],
    "label": [0, 1, 1, 0],
    "grid": [np.arange(6, dtype=np.float32).reshape(2, 3) + i for i in range(4)],
    "text": ["a", "bb", "ccc", "dddd"],
    "nested": [
        [[1.0, 2.0], [3.0, 4.0]],
        [[5.0, 6.0], [7.0, 8.0]],
        [[9.0, 1.0], [2.0, 3.0]],
        [[4.0, 5.0], [6.0, 7.0]],
    ],
}
ds = Dataset.from_dict(data, features=feats)
t = ds.with_format("torch")
row = t[0]
print("row", {k: describe(v) for k, v in sorted(row.items())})
batch = t[1:3]
print("batch", {k: describe(v) for k, v in sorted(batch.items())})
print("column", describe(t["label"][:]), describe(t["grid"][:]), describe(t["tokens"][:]))
print("label names", ds.features["label"].int2str(1), ds.features["label"].num_classes)


def add_tensor(ex):
    return {"double": torch.tensor(ex["tokens"]) * 2, "norm": torch.tensor(ex["grid"]).norm()}


m = ds.map(add_tensor)
print("map tensors", m.features["double"], m.features["norm"], m[1]["double"], round(m[1]["norm"], 5))
mb = ds.map(lambda b: {"len": torch.tensor([len(x) for x in b["tokens"]])}, batched=True)
print("batched tensors", mb["len"][:], mb.features["len"])

ds2 = ds.select_columns(["tokens", "label"])
ds2.set_transform(
    lambda b: {
        "x": [torch.tensor(v, dtype=torch.float32).sum() for v in b["tokens"]],
        "y": torch.tensor(b["label"]),
    }
)
print("transform", describe(ds2[0:2]["x"]), ds2[0:2]["y"].tolist())


def gen():
    for i in range(5):
        yield {"x": torch.full((2,), float(i)), "y": i % 2}


g = Dataset.from_generator(gen)
print("from_generator", g.features["x"], g.with_format("torch")[4]["x"].tolist())
it = g.with_format("torch").to_iterable_dataset(num_shards=1).shuffle(seed=0, buffer_size=3)
loader = DataLoader(it, batch_size=2)
print("iterable loader", [describe(b["x"]) for b in loader], [b["y"].tolist() for b in loader])
a = Dataset.from_dict({"v": [1, 2, 3]})
b = Dataset.from_dict({"v": [10, 20, 30, 40]})
print("interleave", interleave_datasets([a, b], probabilities=[0.5, 0.5], seed=0)["v"][:])
print("concatenate", concatenate_datasets([a, b]).with_format("torch")["v"][:].tolist())
c = a.cast_column("v", Value("float32")).with_format("torch")
print("cast", describe(c["v"][:]))
s = ds.sort("text", reverse=True).with_format("torch")
print("sorted", s["label"][:].tolist(), s[0]["text"])
print("datasets", datasets.__version__, "ok")
