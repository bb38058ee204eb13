# library: accelerate
"""accelerate's DataLoaderDispatcher (dispatch_batches=True, which imports utils.data.datapipes) and DataLoaderShard over an IterableDataset, skip_first_batches, gather_for_metrics of objects."""

import torch
from accelerate import Accelerator, DataLoaderConfiguration
from accelerate.state import AcceleratorState
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, IterableDataset, TensorDataset

torch.set_num_threads(1)


def f(x):
    return f"{float(x):.5f}"


class Stream(IterableDataset):
    def __iter__(self):
        g = torch.Generator().manual_seed(0)
        for _ in range(22):
            x = torch.randn(3, generator=g)
            yield x, (x.sum() > 0).long()


for dispatch in (True, False):
    set_seed(0)
    acc = Accelerator(
        cpu=True, dataloader_config=DataLoaderConfiguration(dispatch_batches=dispatch, even_batches=True)
    )
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    dl = DataLoader(Stream(), batch_size=5)
    model, opt, dl = acc.prepare(model, opt, dl)
    print(type(dl).__name__)
    for ep in range(2):
        tot = 0
        for xb, yb in dl:
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            acc.backward(loss)
            opt.step()
            opt.zero_grad()
            tot += xb.shape[0]
        print("epoch", ep, tot, f(loss))
    acc.free_memory()
AcceleratorState._reset_state(True)
set_seed(1)
acc = Accelerator(cpu=True)
dl = acc.prepare(DataLoader(TensorDataset(torch.arange(10.0)), batch_size=4, shuffle=True))
print("skip", [b[0].tolist() for b in acc.skip_first_batches(dl, 1)])
print("objects", acc.gather_for_metrics(["a", "b"], use_gather_object=True))
print("accelerate ok")
