# library: datasets
"""datasets' fingerprints and cache of `map` functions that close over torch objects (a tensor, a module, the torch module itself), on a dataset saved to and loaded from disk: the hash of a function is the same twice, the second `map` reuses the first one's cache file, batched `map`, `with_format("torch")` rows and their hashes, `filter` with a tensor threshold, `set_format(columns=...)`."""

import datasets
import torch
import torch.nn as nn
from datasets import Dataset, load_from_disk
from datasets.fingerprint import Hasher

datasets.disable_progress_bars()
torch.manual_seed(0)
torch.set_num_threads(1)
scale = torch.tensor([2.0, 3.0])
lin = nn.Linear(2, 1)


def with_model(ex):
    x = torch.tensor([ex["a"], ex["b"]]) * scale
    return {"y": float(lin(x).item()), "s": float(x.sum())}


def batched(batch):
    t = torch.tensor(batch["a"]) + torch.tensor(batch["b"])
    return {"t": (t * scale[0]).tolist()}


threshold = torch.tensor(15.0)


def keep(ex):
    return bool(torch.tensor(ex["t"]) > threshold)


print(
    "hash stable",
    Hasher.hash(with_model) == Hasher.hash(with_model),
    Hasher.hash(batched) == Hasher.hash(batched),
)
print("hash of a tensor", Hasher.hash(scale))
print("hash of a function over a tensor and torch", Hasher.hash(batched))
Dataset.from_dict({"a": [1.0, 2.0, 3.0, 4.0], "b": [4.0, 5.0, 6.0, 7.0]}).save_to_disk("saved")
ds = load_from_disk("saved")
first, second = ds.map(with_model), ds.map(with_model)
print("same fingerprint", first._fingerprint == second._fingerprint)
print("cache reused", first.cache_files == second.cache_files, len(first.cache_files))
print("y", [round(v, 5) for v in first["y"]], "s", list(first["s"]))
again = load_from_disk("saved").map(with_model)
print("cache reused after reload", again.cache_files == first.cache_files)
b = ds.map(batched, batched=True, batch_size=3)
print("batched", b._fingerprint, list(b["t"]))
kept = b.filter(keep)
print("filtered", kept.num_rows, list(kept["t"]), kept._fingerprint == b.filter(keep)._fingerprint)
f = b.with_format("torch")
row = f[1]
print("torch row", sorted(row), str(row["t"].dtype).rsplit(".", 1)[-1], round(float(row["t"]), 5))
print("torch column", tuple(f[:]["t"].shape), Hasher.hash(f[0]["a"]), f._fingerprint)
b.set_format("torch", columns=["a", "t"])
print("set_format", sorted(b[0]), type(b[0]["a"]).__name__ == type(scale).__name__)
print("datasets", datasets.__version__, "ok")
