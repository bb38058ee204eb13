# library: transformers
"""torch.jit.trace of a transformers model (strict=False: the traced module returns its ModelOutput as a plain dict, as PyTorch's trace does; disttorch returned the ModelOutput before the fix), save/load of the trace, torch.compile of a GPT-2 (no dropout: Inductor draws its own random numbers), Lightning fast_dev_run, overfit_batches and two validation dataloaders."""

import warnings

import lightning as L
import torch
import transformers
from torch.utils.data import DataLoader, TensorDataset
from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, set_seed

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
torch.set_num_threads(1)
set_seed(0)


def first(o):
    return o[0] if isinstance(o, tuple) else o["last_hidden_state"]


def r(t, n=5):
    return [round(float(v), 5) for v in t.flatten()[:n].tolist()]


cfg = BertConfig(
    vocab_size=30,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    max_position_embeddings=32,
    torchscript=True,
)
bert = BertModel(cfg).eval()
ids = torch.randint(0, 30, (2, 7))
mask = torch.ones_like(ids)
with torch.no_grad():
    eager = bert(ids, attention_mask=mask)
    traced = torch.jit.trace(bert, (ids, mask), strict=False)
    out = traced(ids, mask)
print(
    "trace",
    type(eager).__name__,
    type(out).__name__,
    len(out),
    torch.allclose(first(out), first(eager), atol=1e-6),
    r(first(out)),
)
torch.jit.save(traced, "bert.pt")
loaded = torch.jit.load("bert.pt")
with torch.no_grad():
    out2 = loaded(torch.randint(0, 30, (3, 5)), torch.ones(3, 5, dtype=torch.long))
print("loaded", tuple(first(out2).shape), type(out2).__name__, sorted(out2))

set_seed(1)
gpt = GPT2LMHeadModel(
    GPT2Config(
        vocab_size=30,
        n_embd=32,
        n_layer=2,
        n_head=2,
        n_positions=32,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
)
cg = torch.compile(gpt)
x = torch.randint(0, 30, (2, 8))
l1 = cg(x, labels=x).loss
l1.backward()
print("compiled", round(l1.item(), 5), round(gpt.transformer.h[0].mlp.c_fc.weight.grad.norm().item(), 5))


class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(4, 1)

    def training_step(self, b, i):
        loss = torch.nn.functional.mse_loss(self.l(b[0]), b[1])
        self.log("tl", loss)
        return loss

    def validation_step(self, b, i, dataloader_idx=0):
        self.log("vl", torch.nn.functional.mse_loss(self.l(b[0]), b[1]))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


L.seed_everything(0, verbose=False)
X = torch.randn(32, 4)
Y = X.sum(1, keepdim=True)
dl = DataLoader(TensorDataset(X, Y), batch_size=8)
for kw in [
    dict(fast_dev_run=True),
    dict(overfit_batches=1, max_epochs=3),
    dict(max_epochs=1, limit_val_batches=2),
]:
    m = M()
    tr = L.Trainer(
        logger=False, enable_progress_bar=False, enable_checkpointing=False, enable_model_summary=False, **kw
    )
    tr.fit(m, dl, [dl, DataLoader(TensorDataset(X[:8], Y[:8]), batch_size=4)])
    print(
        "fit",
        sorted(kw),
        tr.global_step,
        {k: round(float(v), 5) for k, v in sorted(tr.callback_metrics.items())},
    )
print("transformers", transformers.__version__, "ok")
