# library: timm
"""timm's training kit over disttorch: FX feature extraction (torchvision's
``models.feature_extraction``: node names, ``create_feature_extractor``, ``features_only`` with
``feature_cls="fx"``), ``features_only``/``forward_head(pre_logits=True)``/``reset_classifier``/
grad checkpointing on Swin and LeViT, RandAugment and AugMix policies under a seed, Mixup/CutMix
with label smoothing into timm's losses, ``create_optimizer_v2`` (layer decay, LARS, Lion,
Adafactor, SGDP), a warmup cosine schedule stepped per update, ``ModelEmaV3`` and
``CheckpointSaver`` with ``load_checkpoint(use_ema=True)``."""

import os
import random
import tempfile

import numpy as np
import timm
import torch
from PIL import Image
from timm.data import Mixup, create_transform
from timm.loss import BinaryCrossEntropy, JsdCrossEntropy, SoftTargetCrossEntropy
from timm.models import create_feature_extractor, get_graph_node_names, load_checkpoint
from timm.optim import create_optimizer_v2
from timm.scheduler import create_scheduler_v2
from timm.utils import CheckpointSaver, ModelEmaV3, dispatch_clip_grad

torch.set_num_threads(1)


def total(t):
    return f"{float(t.detach().double().sum()):.5f}"


torch.manual_seed(0)
resnet = timm.create_model("resnet10t", pretrained=False, num_classes=3).eval()
train_nodes, eval_nodes = get_graph_node_names(resnet)
print("nodes", len(train_nodes), train_nodes[:4], train_nodes[-3:], train_nodes == eval_nodes)
x = torch.randn(2, 3, 32, 32)
extractor = create_feature_extractor(
    resnet, return_nodes={"layer2": "mid", "layer3.0.act2": "act", "fc": "out"}
)
found = extractor(x)
print(
    "extract",
    [(k, tuple(v.shape), total(v)) for k, v in found.items()],
    torch.allclose(found["out"], resnet(x)),
)
torch.manual_seed(0)
narrow = {"depths": (1, 1, 1, 1), "dims": (8, 16, 24, 32)}
fx = timm.create_model(
    "convnext_atto", pretrained=False, features_only=True, feature_cls="fx", out_indices=(1, 3), **narrow
)
print("fx", type(fx).__name__, [(tuple(t.shape), total(t)) for t in fx(x)])

for name, size, kwargs in (
    (
        "swin_tiny_patch4_window7_224",
        56,
        {"img_size": 56, "depths": (1, 1), "num_heads": (1, 2), "embed_dim": 16},
    ),
    ("levit_128s", 64, {"img_size": 64}),
):
    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False, num_classes=4, **kwargs)
    image = torch.randn(2, 3, size, size)
    model.set_grad_checkpointing(True)
    model(image).square().mean().backward()
    grad = sum(float(p.grad.double().pow(2).sum()) for p in model.parameters() if p.grad is not None) ** 0.5
    model.eval()
    with torch.no_grad():
        pre = model.forward_head(model.forward_features(image), pre_logits=True)
        model.reset_classifier(7)
        logits = model(image)
    torch.manual_seed(0)
    features = timm.create_model(name, pretrained=False, features_only=True, **kwargs)(image)
    print(
        name,
        f"grad {grad:.5f}",
        tuple(pre.shape),
        total(pre),
        tuple(logits.shape),
        [tuple(f.shape) for f in features],
    )

picture = Image.fromarray(np.random.default_rng(0).integers(0, 256, (40, 48, 3), dtype=np.uint8))
for policy in ("rand-m9-mstd0.5-inc1", "augmix-m5-w3-d2"):
    transform = create_transform(32, is_training=True, auto_augment=policy)
    torch.manual_seed(1)
    random.seed(1)
    np.random.seed(1)
    print("augment", policy, [total(transform(picture)) for _ in range(2)])

torch.manual_seed(0)
np.random.seed(0)
logits = torch.randn(4, 5, requires_grad=True)
for kwargs in (
    {"mixup_alpha": 0.8, "cutmix_alpha": 1.0},
    {"mixup_alpha": 0.0, "cutmix_alpha": 1.0, "mode": "elem"},
):
    images, soft = Mixup(label_smoothing=0.1, num_classes=5, **kwargs)(
        torch.randn(4, 3, 16, 16), torch.tensor([0, 1, 2, 4])
    )
    for loss_fn in (SoftTargetCrossEntropy(), BinaryCrossEntropy(smoothing=0.1)):
        logits.grad = None
        loss = loss_fn(logits, soft)
        loss.backward()
        print(
            "mix",
            kwargs.get("mode", "batch"),
            type(loss_fn).__name__,
            total(images),
            f"{float(loss):.6f}",
            total(logits.grad.abs()),
        )
jsd = JsdCrossEntropy(num_splits=2, smoothing=0.1)(logits, torch.tensor([1, 3]))
print("jsd", f"{float(jsd):.6f}")

for name, kwargs in (
    ("adamw", {"layer_decay": 0.7}),
    ("lamb", {"layer_decay": 0.7}),
    ("lars", {}),
    ("lion", {}),
    ("adafactor", {}),
    ("sgdp", {}),
):
    torch.manual_seed(0)
    model = timm.create_model("convnext_atto", pretrained=False, num_classes=3, **narrow)
    optimizer = create_optimizer_v2(model, name, lr=0.01, weight_decay=0.05, **kwargs)
    for _ in range(2):
        optimizer.zero_grad()
        model(x).square().mean().backward()
        optimizer.step()
    with torch.no_grad():
        print("optim", name, len(optimizer.param_groups), f"{float(model(x).square().mean()):.6f}")

optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1)
scheduler, epochs = create_scheduler_v2(
    optimizer,
    "cosine",
    num_epochs=4,
    warmup_epochs=1,
    warmup_lr=0.001,
    min_lr=1e-4,
    step_on_epochs=False,
    updates_per_epoch=2,
)
rates = []
for update in range(1, 9):
    scheduler.step_update(update)
    rates.append(f"{optimizer.param_groups[0]['lr']:.5f}")
print("schedule", epochs, rates)

torch.manual_seed(0)
model = timm.create_model("convnext_atto", pretrained=False, num_classes=3, **narrow)
ema = ModelEmaV3(model, decay=0.9, use_warmup=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
folder = tempfile.mkdtemp()
saver = CheckpointSaver(
    model,
    optimizer,
    model_ema=ema,
    checkpoint_dir=folder,
    recovery_dir=folder,
    decreasing=True,
    max_history=2,
)
for step, metric in enumerate((0.5, 0.3, 0.4)):
    optimizer.zero_grad()
    model(x).square().mean().backward()
    dispatch_clip_grad(model.parameters(), 0.5, mode=("norm", "value", "agc")[step])
    optimizer.step()
    ema.update(model, step=step)
    best = saver.save_checkpoint(step, metric=metric)
print("saved", best, sorted(os.listdir(folder)))
restored = timm.create_model("convnext_atto", pretrained=False, num_classes=3, **narrow)
load_checkpoint(restored, os.path.join(folder, "model_best.pth.tar"), use_ema=True)
print(
    "ema",
    *(f"{sum(float(p.double().sum()) for p in m.parameters()):.5f}" for m in (ema.module, restored, model)),
)
