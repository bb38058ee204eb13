# library: torchmetrics
"""torchmetrics MetricCollection with compute_groups, prefix/postfix, clone; retrieval metrics (MRR, NDCG, precision@k, recall@k, MAP, hit rate)."""

import torch
from torchmetrics import MetricCollection
from torchmetrics.classification import (
    MulticlassAccuracy,
    MulticlassF1Score,
    MulticlassPrecision,
    MulticlassRecall,
)
from torchmetrics.retrieval import (
    RetrievalHitRate,
    RetrievalMAP,
    RetrievalMRR,
    RetrievalNormalizedDCG,
    RetrievalPrecision,
    RetrievalRecall,
)

torch.manual_seed(0)
mc = MetricCollection(
    {
        "acc": MulticlassAccuracy(4),
        "f1": MulticlassF1Score(4, average="macro"),
        "p": MulticlassPrecision(4),
        "r": MulticlassRecall(4),
    },
    compute_groups=True,
    prefix="val_",
)
for _ in range(3):
    logits, t = torch.randn(16, 4), torch.randint(0, 4, (16,))
    mc.update(logits, t)
print("groups", mc.compute_groups)
print({k: round(v.item(), 4) for k, v in mc.compute().items()})
c2 = mc.clone(prefix="test_")
c2.update(torch.randn(8, 4), torch.randint(0, 4, (8,)))
print(sorted(c2.compute().keys()))
preds = torch.rand(30)
target = torch.rand(30) > 0.6
idx = torch.arange(3).repeat_interleave(10)
rm = MetricCollection(
    [
        RetrievalMRR(),
        RetrievalNormalizedDCG(top_k=5),
        RetrievalPrecision(top_k=3),
        RetrievalRecall(top_k=3),
        RetrievalMAP(),
        RetrievalHitRate(top_k=2),
    ]
)
print({k: round(v.item(), 4) for k, v in rm(preds, target, indexes=idx).items()})
