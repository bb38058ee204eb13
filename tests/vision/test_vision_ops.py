"""``torchvision.ops`` (``disttorch.vision.ops``): boxes against hand-computed values and a
brute-force NMS, gradients in float64, and torchvision's numbers where it is installed
(its compiled ``nms`` cannot load on a CPU-only PyTorch, so NMS is checked by its definition)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.vision import ops

BOXES = np.array(
    [[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 10], [21, 19, 29, 31]], np.float32
)


@pytest.fixture
def torchvision():
    return pytest.importorskip("torchvision")


def _brute_nms(boxes, scores, threshold):
    """NMS by its definition: visit in stable descending score order, keep a box unless a
    kept box overlaps it with IoU > threshold."""
    kept = []
    for i in sorted(range(len(scores)), key=lambda k: -scores[k]):
        a = boxes[i]
        for j in kept:
            b = boxes[j]
            w = max(min(a[2], b[2]) - max(a[0], b[0]), 0)
            h = max(min(a[3], b[3]) - max(a[1], b[1]), 0)
            inter = w * h
            union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
            if inter / union > threshold:
                break
        else:
            kept.append(i)
    return kept


def test_nms_and_batched_nms_follow_the_definition():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 50, (60, 2)).astype(np.float32)
    boxes = np.concatenate([xy, xy + rng.uniform(1, 20, (60, 2)).astype(np.float32)], 1)
    scores = rng.permutation(60).astype(np.float32)
    scores[5] = scores[9]  # a tie keeps input order
    for threshold in (0.0, 0.3, 0.7):
        keep = ops.nms(dt.tensor(boxes), dt.tensor(scores), threshold)
        assert keep.dtype == dt.int64 and keep.tolist() == _brute_nms(boxes, scores, threshold)
    idxs = rng.integers(0, 3, 60)
    keep = ops.batched_nms(dt.tensor(boxes), dt.tensor(scores), dt.tensor(idxs), 0.3).tolist()
    expected = [
        i
        for c in range(3)
        for i in np.flatnonzero(idxs == c)[_brute_nms(boxes[idxs == c], scores[idxs == c], 0.3)]
    ]
    assert keep == sorted(expected, key=lambda i: -scores[i])
    assert ops.nms(dt.zeros(0, 4), dt.zeros(0), 0.5).shape == (0,)
    with pytest.raises(RuntimeError, match="boxes should have 4 elements in dimension 1, got 3"):
        ops.nms(dt.zeros(2, 3), dt.zeros(2), 0.5)


def test_box_arithmetic():
    b = dt.tensor(BOXES)
    iou = ops.box_iou(b[:2], b)
    assert np.allclose(iou[0].numpy(), [1, 81 / 119, 0, 1, 0])
    assert ops.box_area(b).tolist() == [100, 100, 100, 100, 96]
    assert ops.box_convert(b[:1], "xyxy", "cxcywh").tolist() == [[5, 5, 10, 10]]
    for fmt in ("xywh", "cxcywh"):
        back = ops.box_convert(ops.box_convert(b, "xyxy", fmt), fmt, "xyxy")
        assert np.allclose(back.numpy(), BOXES)
        assert np.allclose(
            ops.box_iou(ops.box_convert(b, "xyxy", fmt), ops.box_convert(b, "xyxy", fmt), fmt=fmt).numpy(),
            ops.box_iou(b, b).numpy(),
        )
    assert ops.generalized_box_iou(b[2:3], b[:1]).item() == pytest.approx(0 - (900 - 200) / 900)
    assert ops.clip_boxes_to_image(dt.tensor([[-5.0, 2, 40, 8]]), (6, 30)).tolist() == [[0, 2, 30, 6]]
    assert ops.remove_small_boxes(b, 9).tolist() == [0, 1, 2, 3]
    assert ops.remove_small_boxes(b, 8).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="Unsupported Bounding Box Conversions"):
        ops.box_convert(b, "xyxy", "yxyx")


def test_box_and_loss_gradients_in_float64():
    rng = np.random.default_rng(1)
    xy = rng.uniform(0, 5, (3, 2))
    a = dt.tensor(np.concatenate([xy, xy + rng.uniform(1, 4, (3, 2))], 1), requires_grad=True)
    b = dt.tensor(np.concatenate([xy + 0.5, xy + rng.uniform(2, 5, (3, 2))], 1), requires_grad=True)
    for iou in (ops.generalized_box_iou, ops.distance_box_iou):  # complete_box_iou's weight is
        assert dt.autograd.gradcheck(iou, (a, b))  # a constant by design: not a true gradient
    logits = dt.tensor(rng.normal(size=(4, 3)), requires_grad=True)
    targets = dt.tensor((rng.random((4, 3)) > 0.5).astype(np.float64))
    assert dt.autograd.gradcheck(lambda x: ops.sigmoid_focal_loss(x, targets, reduction="mean"), (logits,))
    with pytest.raises(ValueError, match="Invalid alpha value"):
        ops.sigmoid_focal_loss(logits, targets, alpha=2)


def _ops_case(lib, tv_ops):
    """Values of the box functions, the focal loss, the misc blocks and stochastic depth."""
    lib.manual_seed(0)
    rng = np.random.default_rng(2)
    b = lib.tensor(BOXES)
    x = lib.tensor(rng.normal(size=(2, 4, 5, 5)).astype(np.float32))
    frozen = tv_ops.misc.FrozenBatchNorm2d(4)
    frozen.running_mean.fill_(0.5)
    frozen.weight.fill_(2.0)
    block = tv_ops.Conv2dNormActivation(4, 6, 3, stride=2)
    se = tv_ops.SqueezeExcitation(4, 2)
    mlp = tv_ops.MLP(5, [7, 3], norm_layer=lib.nn.LayerNorm, dropout=0.0)
    values = [
        tv_ops.box_iou(b, b),
        tv_ops.generalized_box_iou(b, b),
        tv_ops.distance_box_iou(b[:3], b),
        tv_ops.complete_box_iou(b, b[1:]),
        tv_ops.box_convert(b, "xywh", "cxcywh"),
        tv_ops.sigmoid_focal_loss(x, (x > 0).float(), reduction="sum"),
        frozen(x),
        block(x),
        se(x),
        mlp(x),
        tv_ops.stochastic_depth(x, 0.5, "row"),
        tv_ops.StochasticDepth(0.3, "batch")(x),
        tv_ops.misc.Permute([0, 2, 3, 1])(x),
    ]
    return [v.detach().numpy() for v in values], [repr(m) for m in (frozen, block, mlp)]


@pytest.mark.parity
def test_ops_match_torchvision(torch, torchvision):
    ours, our_reprs = _ops_case(dt, ops)
    theirs, their_reprs = _ops_case(torch, torchvision.ops)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert our_reprs == their_reprs


X = np.random.default_rng(9).normal(size=(2, 3, 9, 11))
ROIS = np.array([[0, 1.3, 0.7, 7.9, 6.2], [1, -2, -1, 4, 3], [1, 5.5, 2.25, 12.5, 10], [0, 3, 3, 3.2, 3.1]])


def _brute_roi_align(x, rois, out_h, out_w, scale, ratio, aligned):
    """RoI Align sample by sample, as torchvision's CPU kernel defines it."""
    height, width = x.shape[2:]
    out = np.zeros((len(rois), x.shape[1], out_h, out_w))
    for k, (b, *box) in enumerate(rois):
        x1, y1, x2, y2 = (v * scale - (0.5 if aligned else 0.0) for v in box)
        rw, rh = (x2 - x1, y2 - y1) if aligned else (max(x2 - x1, 1.0), max(y2 - y1, 1.0))
        gh = ratio if ratio > 0 else int(np.ceil(rh / out_h))
        gw = ratio if ratio > 0 else int(np.ceil(rw / out_w))
        for ph in range(out_h):
            for pw in range(out_w):
                total = 0.0
                for iy in range(gh):
                    for ix in range(gw):
                        y = y1 + ph * rh / out_h + (iy + 0.5) * rh / out_h / gh
                        xx = x1 + pw * rw / out_w + (ix + 0.5) * rw / out_w / gw
                        if y < -1 or y > height or xx < -1 or xx > width:
                            continue
                        y, xx = min(max(y, 0), height - 1), min(max(xx, 0), width - 1)
                        y0, x0 = int(y), int(xx)
                        y1_, x1_ = min(y0 + 1, height - 1), min(x0 + 1, width - 1)
                        ly, lx = y - y0, xx - x0
                        img = x[int(b)]
                        total = total + (
                            (1 - ly) * (1 - lx) * img[:, y0, x0]
                            + (1 - ly) * lx * img[:, y0, x1_]
                            + ly * (1 - lx) * img[:, y1_, x0]
                            + ly * lx * img[:, y1_, x1_]
                        )
                out[k, :, ph, pw] = total / max(gh * gw, 1)
    return out


@pytest.mark.parametrize(
    "out_size, scale, ratio, aligned",
    [((3, 3), 1.0, -1, False), ((2, 4), 0.5, 2, False), ((4, 3), 1.3, 0, True)],
)
def test_roi_align_follows_the_kernel_and_has_its_gradient(out_size, scale, ratio, aligned):
    x = dt.tensor(X, requires_grad=True)
    out = ops.roi_align(x, dt.tensor(ROIS), out_size, scale, ratio, aligned)
    expected = _brute_roi_align(X, ROIS, *out_size, scale, ratio, aligned)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    if aligned:  # one case is enough for the gradient (the backward is the same product)
        one_channel = dt.tensor(X[:, :1], requires_grad=True)
        args = (dt.tensor(ROIS), out_size, scale, ratio, aligned)
        assert dt.autograd.gradcheck(lambda x: ops.roi_align(x, *args), (one_channel,))
    per_image = [dt.tensor(ROIS[ROIS[:, 0] == 0, 1:]), dt.tensor(ROIS[ROIS[:, 0] == 1, 1:])]
    module = ops.RoIAlign(out_size, scale, ratio, aligned)
    assert module(x, per_image).shape == (4, 3, *out_size)
    with pytest.raises(RuntimeError, match="to have the same type"):
        ops.roi_align(x.float(), dt.tensor(ROIS), 2)


@pytest.mark.parity
def test_roi_align_matches_torchvision_inside_the_image(torch, torchvision):
    """torchvision without its compiled ops runs its PyTorch RoI Align, which agrees with the
    kernel for regions inside the image (outside, it clamps where the kernel gives zero)."""
    rois = np.array(
        [[0, 1.3, 0.7, 7.9, 6.2], [1, 0.2, 0.1, 4, 3], [1, 5.5, 2.25, 9.5, 7], [0, 3, 3, 3.2, 3.1]]
    )
    results = []
    for lib, tv_ops in ((dt, ops), (torch, torchvision.ops)):
        x = lib.tensor(X.astype(np.float32), requires_grad=True)
        out = tv_ops.roi_align(x, lib.tensor(rois.astype(np.float32)), (3, 2), 0.9, -1, True)
        (out * lib.arange(out.numel()).reshape(out.shape)).sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy(), repr(tv_ops.RoIAlign(3, 0.5, 2))))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-5)
    assert results[0][2] == results[1][2]
