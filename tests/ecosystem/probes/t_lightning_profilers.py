# library: lightning
"""Lightning's simple, advanced and PyTorch profilers (torch.autograd._profiler_enabled/_disable_profiler) around a short fit."""

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)


class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 2)

    def training_step(self, b, i):
        return nn.functional.cross_entropy(self.l(b[0]), b[1])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


dl = DataLoader(TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,))), batch_size=4)
for prof in ["simple", "advanced", "pytorch"]:
    L.seed_everything(0)
    m = M()
    try:
        t = L.Trainer(
            max_epochs=1,
            accelerator="cpu",
            profiler=prof,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            default_root_dir=".",
        )
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            t.fit(m, dl)
        print(prof, "ok", f"{m.l.weight.sum().item():.5f}")
    except Exception as e:
        print(prof, "error", type(e).__name__, str(e)[:200])
print("lightning ok")
