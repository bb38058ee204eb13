# library: timm
"""timm over torchvision: create_model for ResNet, ViT, ConvNeXt and EfficientNet (pretrained=False) with forward, backward and an SGD step; a FrozenBatchNorm2d conversion; timm's training and eval transforms (torchvision's RandomResizedCrop, flips, ColorJitter, Resize, CenterCrop, ToTensor, Normalize) on a PIL image under a seed."""

import random

import numpy as np
import timm
import torch
from PIL import Image
from timm.data import create_transform
from timm.utils.model import freeze_batch_norm_2d

torch.manual_seed(0)
torch.set_num_threads(1)

# ViT and ConvNeXt narrowed (their configs take these overrides): full-width truncated-normal
# initialisation of millions of weights would dominate the run
for name, size, kwargs in (
    ("resnet18", 64, {}),
    ("vit_tiny_patch16_224", 32, {"img_size": 32, "depth": 2, "embed_dim": 48, "num_heads": 2}),
    ("convnext_atto", 32, {"depths": (1, 1, 2, 1), "dims": (16, 24, 32, 48)}),
    ("efficientnet_b0", 64, {}),
):
    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False, num_classes=5, **kwargs)
    x = torch.randn(2, 3, size, size)
    target = torch.tensor([1, 3])
    loss = torch.nn.functional.cross_entropy(model(x), target)
    loss.backward()
    grad = sum(float(p.grad.double().pow(2).sum()) for p in model.parameters() if p.grad is not None) ** 0.5
    torch.optim.SGD(model.parameters(), lr=0.1).step()
    with torch.no_grad():
        after = float(torch.nn.functional.cross_entropy(model(x), target))
    print(
        f"{name} params {sum(p.numel() for p in model.parameters())} loss {float(loss):.6f} grad {grad:.5f} after {after:.6f}"
    )

frozen = freeze_batch_norm_2d(timm.create_model("resnet18", pretrained=False, num_classes=3).eval())
print(
    "frozen",
    type(frozen.bn1).__module__,
    type(frozen.bn1).__name__,
    float(frozen(torch.ones(1, 3, 32, 32)).sum()),
)

pixels = np.random.default_rng(0).integers(0, 256, (40, 48, 3), dtype=np.uint8)
image = Image.fromarray(pixels)
train = create_transform(32, is_training=True, color_jitter=0.4, hflip=0.5)
evaluate = create_transform(32, is_training=False, crop_pct=0.875)
torch.manual_seed(3)
random.seed(3)  # timm's RandomResizedCropAndInterpolation draws from Python's random
for _ in range(3):
    out = train(image)
    print("train", tuple(out.shape), f"{float(out.sum()):.5f}", f"{float(out[0, 0, :4].sum()):.5f}")
out = evaluate(image)
print("eval", tuple(out.shape), f"{float(out.sum()):.5f}")
print("eval transforms", [type(t).__name__ for t in evaluate.transforms])
