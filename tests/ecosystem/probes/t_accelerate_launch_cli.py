# library: accelerate
"""`accelerate launch --multi_gpu --num_processes 2` on CPU, called as the CLI calls it (its launcher hands a torchrun namespace to torch.distributed.run.run, which had no get_args_parser before the fix): two ranks train with DDP through Accelerator, their gathered losses and final weights written to a file and printed once the launch returns."""

import os
import sys
import tempfile
import warnings

from accelerate.commands.launch import launch_command, launch_command_parser

warnings.filterwarnings("ignore")

WORKER = """
import sys, torch
from accelerate import Accelerator
from accelerate.utils import set_seed
torch.set_num_threads(1)
acc = Accelerator(cpu=True)
set_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=True)
model, opt, loader = acc.prepare(model, opt, loader)
lines = []
for epoch in range(2):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        acc.backward(loss)
        opt.step()
        opt.zero_grad()
    losses = acc.gather(loss.detach().reshape(1))
    lines.append(f"epoch {epoch}: {acc.num_processes} processes, losses {[round(v, 4) for v in losses.tolist()]}")
acc.wait_for_everyone()
weight = acc.unwrap_model(model)[0].weight
lines.append(f"rank {acc.process_index}: weight sum {weight.sum().item():.4f}")
with open(sys.argv[1] + f".{acc.process_index}", "w") as f:
    f.write("\\n".join(lines))
acc.end_training()
"""

with tempfile.TemporaryDirectory() as folder:
    worker = os.path.join(folder, "worker.py")
    with open(worker, "w") as f:
        f.write(WORKER)
    out = os.path.join(folder, "out")
    args = launch_command_parser().parse_args(
        [
            "--multi_gpu",
            "--num_processes",
            "2",
            "--num_machines",
            "1",
            "--mixed_precision",
            "no",
            "--dynamo_backend",
            "no",
            "--main_process_port",
            "0",
            worker,
            out,
        ]
    )
    launch_command(args)
    for rank in (0, 1):
        with open(f"{out}.{rank}") as f:
            print(f.read())
sys.stdout.flush()
