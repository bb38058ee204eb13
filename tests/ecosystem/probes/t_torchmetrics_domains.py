# library: torchmetrics
"""torchmetrics image, text, retrieval, audio, clustering and nominal metrics: SSIM, MS-SSIM, PSNR, TV, BLEU, CER/WER, Perplexity, RetrievalMRR/NDCG/MAP, SI-SDR, SNR, SDR (its Toeplitz solve calls flip(dims=...)), MutualInfoScore, CramersV, Dice, JaccardIndex, KLDivergence."""

import torch
import torchmetrics as tm
import torchmetrics.audio
import torchmetrics.clustering
import torchmetrics.functional as F
import torchmetrics.image
import torchmetrics.nominal
import torchmetrics.retrieval
import torchmetrics.segmentation
import torchmetrics.text

torch.set_num_threads(1)
torch.manual_seed(0)


def r(x):
    if isinstance(x, dict):
        return {k: r(v) for k, v in sorted(x.items())}
    x = torch.as_tensor(x)
    return [round(float(v), 5) for v in x.flatten()] if x.numel() > 1 else round(float(x), 5)


a = torch.rand(2, 3, 64, 64)
b = (a + 0.1 * torch.randn_like(a)).clamp(0, 1)
print("ssim", r(tm.image.StructuralSimilarityIndexMeasure(data_range=1.0)(b, a)))
print(
    "ssim nog",
    r(
        F.image.structural_similarity_index_measure(
            b, a, data_range=1.0, gaussian_kernel=False, kernel_size=5, reduction="none"
        )
    ),
)
print(
    "psnr",
    r(tm.image.PeakSignalNoiseRatio(data_range=1.0)(b, a)),
    r(F.image.peak_signal_noise_ratio(b, a, data_range=(0.0, 1.0), dim=(1, 2, 3), reduction="none")),
)
print("tv", r(tm.image.TotalVariation()(a)), "uqi", r(tm.image.UniversalImageQualityIndex()(b, a)))
print(
    "ergas",
    r(tm.image.ErrorRelativeGlobalDimensionlessSynthesis()(b + 0.01, a + 0.01)),
    "sam",
    r(tm.image.SpectralAngleMapper()(b + 0.01, a + 0.01)),
)
big = torch.rand(1, 1, 180, 180)
bigb = (big + 0.05 * torch.randn_like(big)).clamp(0, 1)
print(
    "msssim", r(tm.image.MultiScaleStructuralSimilarityIndexMeasure(data_range=1.0, kernel_size=5)(bigb, big))
)
print(
    "bleu",
    r(
        tm.text.BLEUScore(n_gram=2, smooth=True)(
            ["the cat sat on the mat"], [["a cat sat on the mat", "the cat is on the mat"]]
        )
    ),
)
print("sacre", r(tm.text.SacreBLEUScore()(["the cat sat on the mat"], [["a cat sat on the mat"]])))
print(
    "cer",
    r(tm.text.CharErrorRate()(["hello wrld", "abc"], ["hello world", "abd"])),
    "wer",
    r(tm.text.WordErrorRate()(["the cat sat"], ["the cat sat down"])),
    "mer",
    r(tm.text.MatchErrorRate()(["a b c"], ["a x c d"])),
)
print(
    "chrf",
    r(tm.text.CHRFScore()(["the cat sat on the mat"], [["a cat sat on the mat"]])),
    "edit",
    r(tm.text.EditDistance()(["kitten"], ["sitting"])),
)
logits = torch.randn(2, 8, 10)
tgt = torch.randint(0, 10, (2, 8))
tgt[0, :2] = -100
print("ppl", r(tm.text.Perplexity(ignore_index=-100)(logits, tgt)))
idx = torch.tensor([0, 0, 0, 1, 1, 1, 1])
pr = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
tg = torch.tensor([False, False, True, False, True, False, True])
for M in [
    tm.retrieval.RetrievalMRR(),
    tm.retrieval.RetrievalNormalizedDCG(top_k=2),
    tm.retrieval.RetrievalMAP(),
    tm.retrieval.RetrievalPrecision(top_k=2),
    tm.retrieval.RetrievalRecall(top_k=2),
    tm.retrieval.RetrievalHitRate(top_k=1),
    tm.retrieval.RetrievalFallOut(top_k=2),
    tm.retrieval.RetrievalRPrecision(),
]:
    print("ret", type(M).__name__, r(M(pr, tg, indexes=idx)))
print(
    "ret F",
    r(F.retrieval.retrieval_normalized_dcg(pr, tg.long())),
    r(F.retrieval.retrieval_reciprocal_rank(pr, tg)),
)
s = torch.randn(2, 400)
n = s + 0.3 * torch.randn(2, 400)
print(
    "audio",
    r(tm.audio.ScaleInvariantSignalDistortionRatio()(n, s)),
    r(tm.audio.SignalNoiseRatio()(n, s)),
    r(tm.audio.ScaleInvariantSignalNoiseRatio()(n, s)),
    r(tm.audio.SignalDistortionRatio()(n, s)),
)
pit = tm.audio.PermutationInvariantTraining(
    F.audio.scale_invariant_signal_noise_ratio, mode="speaker-wise", eval_func="max"
)
print("pit", r(pit(torch.stack([n, n.flip(0)], 0)[:, :, :], torch.stack([s, s], 0))))
c1 = torch.randint(0, 3, (30,))
c2 = torch.randint(0, 3, (30,))
print(
    "clust",
    r(tm.clustering.MutualInfoScore()(c1, c2)),
    r(tm.clustering.AdjustedRandScore()(c1, c2)),
    r(tm.clustering.NormalizedMutualInfoScore()(c1, c2)),
    r(tm.clustering.RandScore()(c1, c2)),
)
print(
    "nominal",
    r(tm.nominal.CramersV(num_classes=3)(c1, c2)),
    r(tm.nominal.TheilsU(num_classes=3)(c1, c2)),
    r(tm.nominal.TschuprowsT(num_classes=3)(c1, c2)),
)
seg_p = torch.randint(0, 3, (2, 8, 8))
seg_t = torch.randint(0, 3, (2, 8, 8))
print(
    "jaccard",
    r(tm.JaccardIndex(task="multiclass", num_classes=3)(seg_p, seg_t)),
    r(tm.JaccardIndex(task="multiclass", num_classes=3, average=None)(seg_p, seg_t)),
)
print(
    "dice",
    r(tm.segmentation.DiceScore(num_classes=3, input_format="index")(seg_p, seg_t)),
    r(tm.segmentation.MeanIoU(num_classes=3, input_format="index")(seg_p, seg_t)),
)
p = torch.softmax(torch.randn(4, 5), -1)
q = torch.softmax(torch.randn(4, 5), -1)
print(
    "kl",
    r(tm.KLDivergence()(p, q)),
    "tweedie",
    r(tm.TweedieDevianceScore(power=1.5)(p.flatten() + 0.1, q.flatten() + 0.1)),
)
print(
    "pairwise",
    r(F.pairwise_cosine_similarity(p, q).sum()),
    r(F.pairwise_euclidean_distance(p, q).sum()),
    r(F.pairwise_manhattan_distance(p).sum()),
)
print(
    "concord",
    r(tm.ConcordanceCorrCoef()(p.flatten(), q.flatten())),
    "logcosh",
    r(tm.LogCoshError()(p.flatten(), q.flatten())),
    "minkowski",
    r(tm.MinkowskiDistance(p=3)(p.flatten(), q.flatten())),
)
print(
    "hinge",
    r(tm.HingeLoss(task="multiclass", num_classes=5)(p, torch.tensor([0, 1, 2, 3]))),
    "fbeta",
    r(tm.FBetaScore(task="multiclass", num_classes=5, beta=0.5)(p, torch.tensor([0, 1, 2, 3]))),
)
print(
    "specatsens",
    r(
        tm.classification.BinarySpecificityAtSensitivity(min_sensitivity=0.5)(
            torch.rand(20), torch.randint(0, 2, (20,))
        )
    ),
    r(
        tm.classification.BinaryRecallAtFixedPrecision(min_precision=0.5)(
            torch.rand(20), torch.randint(0, 2, (20,))
        )
    ),
)
