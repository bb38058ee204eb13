# library: transformers
"""transformers Trainer with an eval dataset, compute_metrics, eval_strategy="steps", gradient_accumulation_steps, a linear warmup schedule, load_best_model_at_end over saved checkpoints; a tiny BERT sequence classifier in float32."""

import contextlib
import io

import numpy as np
import torch
import transformers
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments, set_seed

torch.set_num_threads(1)
transformers.logging.set_verbosity_error()
set_seed(0)
model = BertForSequenceClassification(
    BertConfig(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=32,
        num_labels=2,
    )
)
g = torch.Generator().manual_seed(0)
ids = torch.randint(3, 50, (40, 10), generator=g)
labels = (ids[:, 0] > 25).long()
train = [{"input_ids": i, "labels": y} for i, y in zip(ids[:32], labels[:32])]
evald = [{"input_ids": i, "labels": y} for i, y in zip(ids[32:], labels[32:])]


def metrics(p):
    return {"acc": float((np.argmax(p.predictions, -1) == p.label_ids).mean())}


args = TrainingArguments(
    output_dir="out",
    per_device_train_batch_size=4,
    gradient_accumulation_steps=2,
    num_train_epochs=3,
    learning_rate=5e-3,
    warmup_steps=2,
    lr_scheduler_type="linear",
    eval_strategy="steps",
    eval_steps=4,
    save_strategy="steps",
    save_steps=4,
    load_best_model_at_end=True,
    metric_for_best_model="eval_loss",
    save_total_limit=2,
    logging_steps=4,
    report_to=[],
    use_cpu=True,
    disable_tqdm=True,
    seed=0,
)
tr = Trainer(model=model, args=args, train_dataset=train, eval_dataset=evald, compute_metrics=metrics)
with contextlib.redirect_stdout(io.StringIO()):  # (the Trainer prints its logs with timings)
    tr.train()
    final = tr.evaluate()
for rec in tr.state.log_history:
    if "eval_loss" in rec:
        print("step", rec["step"], "eval_loss %.4f" % rec["eval_loss"], "acc %.3f" % rec["eval_acc"])
    elif "loss" in rec:
        print("step", rec["step"], "loss %.4f" % rec["loss"], "lr %.6f" % rec["learning_rate"])
print("best", tr.state.best_model_checkpoint.split("/")[-1], "%.4f" % tr.state.best_metric)
print("final eval %.4f" % final["eval_loss"])
