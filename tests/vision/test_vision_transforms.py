"""``torchvision.transforms`` (``disttorch.vision.transforms``) on tensor and PIL images:
torchvision's numbers and, for the random transforms, its draws (same seed, same crops),
where torchvision is installed; round trips and errors everywhere."""

import importlib

import numpy as np
import pytest

import disttorch as dt
from disttorch.vision import transforms as T
from disttorch.vision.transforms import functional as F

RNG = np.random.default_rng(3)
IMAGE = RNG.random((3, 12, 16)).astype(np.float32)
IMAGE8 = (IMAGE * 255).astype(np.uint8)


@pytest.fixture
def torchvision():
    return pytest.importorskip("torchvision")


def test_pil_round_trip_and_errors():
    pytest.importorskip("PIL")
    pic = F.to_pil_image(dt.tensor(IMAGE8))
    assert pic.mode == "RGB" and pic.size == (16, 12)
    assert np.array_equal(F.pil_to_tensor(pic).numpy(), IMAGE8)
    np.testing.assert_allclose(F.to_tensor(pic).numpy(), IMAGE8 / np.float32(255), rtol=1e-6)
    assert F.get_dimensions(pic) == [3, 12, 16] == F.get_dimensions(dt.tensor(IMAGE))
    assert F.resize(pic, 6).size == (8, 6) and F.center_crop(pic, 4).size == (4, 4)
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray"):
        F.to_tensor([1, 2])
    with pytest.raises(TypeError, match="Input tensor should be a float tensor"):
        F.normalize(dt.tensor(IMAGE8), [0.5] * 3, [0.5] * 3)


def test_random_transforms_repeat_under_a_seed():
    pipeline = T.Compose(
        [T.RandomResizedCrop(8), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4, 0.1)]
    )
    runs = []
    for _ in range(2):
        dt.manual_seed(7)
        runs.append([pipeline(dt.tensor(IMAGE)).numpy() for _ in range(3)])
    assert all(np.array_equal(a, b) for a, b in zip(*runs)) and runs[0][0].shape == (3, 8, 8)
    assert not np.array_equal(runs[0][0], runs[0][1])


def _tensor_case(lib, tv_transforms):
    """Deterministic functional results, then a seeded random pipeline, on tensor images."""
    F_ = tv_transforms.functional
    x, x8 = lib.tensor(IMAGE), lib.tensor(IMAGE8)
    mode = tv_transforms.InterpolationMode
    values = [
        F_.resize(x, [7, 9]),
        F_.resize(x8, 5),
        F_.resize(x, [20, 30], interpolation=mode.BICUBIC),
        F_.resize(x8, [6, 6], interpolation=mode.NEAREST),
        F_.center_crop(x, [14, 10]),
        F_.pad(x, [1, 2, 3, 4], padding_mode="reflect"),
        F_.pad(x8, [2, 1], padding_mode="edge"),
        F_.pad(x, 2, padding_mode="symmetric"),
        F_.pad(x8, 1, fill=9),
        F_.normalize(x, [0.5, 0.4, 0.3], [0.2, 0.3, 0.4]),
        F_.rgb_to_grayscale(x8, 3),
        F_.adjust_brightness(x8, 1.3),
        F_.adjust_contrast(x, 0.6),
        F_.adjust_saturation(x8, 1.7),
        F_.adjust_hue(x, 0.2),
        F_.adjust_hue(x8, -0.3),
        F_.convert_image_dtype(x, lib.uint8),
        F_.convert_image_dtype(x8, lib.float64),
        F_.gaussian_blur(x8, [3, 5], [0.8, 1.4]),
        F_.crop(x, -2, 3, 8, 20),
    ]
    lib.manual_seed(11)
    pipeline = tv_transforms.Compose(
        [
            tv_transforms.RandomCrop(10, padding=2),
            tv_transforms.RandomResizedCrop(8, scale=(0.2, 1.0)),
            tv_transforms.RandomHorizontalFlip(),
            tv_transforms.RandomVerticalFlip(),
            tv_transforms.RandomApply([tv_transforms.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
            tv_transforms.RandomGrayscale(0.3),
            tv_transforms.RandomErasing(p=0.9, value="random"),
        ]
    )
    values += [pipeline(x) for _ in range(6)]
    values += [tv_transforms.GaussianBlur(3)(x8), tv_transforms.RandomErasing(p=1.0, value=(1, 2, 3))(x)]
    return [v.numpy() for v in values], repr(pipeline)


@pytest.mark.parity
def test_tensor_transforms_match_torchvision(torch, torchvision):
    ours, our_repr = _tensor_case(dt, T)
    theirs, their_repr = _tensor_case(torch, torchvision.transforms)
    assert our_repr == their_repr
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a.dtype == b.dtype and a.shape == b.shape, i
        np.testing.assert_allclose(
            a.astype(np.float64), b.astype(np.float64), rtol=1e-5, atol=1e-5, err_msg=str(i)
        )


def _pil_case(tv_transforms):
    """Functional results and a seeded pipeline on a PIL image, as arrays."""
    F_ = tv_transforms.functional
    pic = F_.to_pil_image(IMAGE8.transpose(1, 2, 0))
    images = [
        F_.resize(pic, [7, 9]),
        F_.pad(pic, [1, 2], padding_mode="reflect"),
        F_.pad(pic, 2, fill=(1, 2, 3)),
        F_.adjust_hue(pic, 0.25),
        F_.adjust_contrast(pic, 0.5),
        F_.to_grayscale(pic, 3),
        F_.center_crop(pic, [16, 20]),
        F_.gaussian_blur(pic, 3),
    ]
    arrays = [np.asarray(im) for im in images]
    pipeline = tv_transforms.Compose(
        [
            tv_transforms.RandomResizedCrop(8),
            tv_transforms.ColorJitter(0.3, 0.3, 0.3, 0.05),
            tv_transforms.ToTensor(),
            tv_transforms.Normalize([0.5] * 3, [0.25] * 3),
        ]
    )
    return arrays, pipeline, pic


@pytest.mark.parity
def test_pil_transforms_match_torchvision(torch, torchvision):
    ours, our_pipeline, pic = _pil_case(T)
    theirs, their_pipeline, _ = _pil_case(torchvision.transforms)
    for a, b in zip(ours, theirs, strict=True):
        assert np.array_equal(a, b)
    dt.manual_seed(5)
    torch.manual_seed(5)
    for _ in range(3):
        np.testing.assert_allclose(
            our_pipeline(pic).numpy(), their_pipeline(pic).numpy(), rtol=1e-6, atol=1e-6
        )


def _v2_case(lib, tv):
    """transforms.v2.functional on plain tensors (uint8 resized as uint8)."""
    F2 = importlib.import_module(tv.__name__ + ".transforms.v2.functional")
    x8 = lib.tensor(IMAGE8)
    values = [
        F2.resize(x8, [7, 9]),
        F2.resize(x8, 5, interpolation=F2.InterpolationMode.BICUBIC),
        F2.resize(lib.tensor(IMAGE), [20, 24]),
        F2.to_dtype(x8, lib.float32, scale=True),
        F2.to_dtype(lib.tensor(IMAGE), lib.uint8, scale=True),
        F2.grayscale_to_rgb(x8[:1]),
        F2.normalize(F2.to_dtype(x8, lib.float32, scale=True), [0.5] * 3, [0.2] * 3),
    ]
    return [v.numpy() for v in values]


@pytest.mark.parity
def test_v2_functional_matches_torchvision(torch, torchvision):
    from disttorch import vision

    for i, (a, b) in enumerate(zip(_v2_case(dt, vision), _v2_case(torch, torchvision), strict=True)):
        assert a.dtype == b.dtype and a.shape == b.shape, i
        np.testing.assert_allclose(
            a.astype(np.float64), b.astype(np.float64), rtol=1e-5, atol=1e-5, err_msg=str(i)
        )


def test_io_reads_images():
    pytest.importorskip("PIL")
    import io

    from disttorch import vision

    buffer = io.BytesIO()
    F.to_pil_image(dt.tensor(IMAGE8)).save(buffer, format="PNG")
    encoded = dt.tensor(np.frombuffer(buffer.getvalue(), np.uint8))
    assert np.array_equal(vision.io.decode_image(encoded).numpy(), IMAGE8)
    assert vision.io.decode_image(encoded, "RGB_ALPHA").shape == (4, 12, 16)
    gray = vision.io.decode_image(encoded, vision.io.ImageReadMode.GRAY)
    assert gray.shape == (1, 12, 16) and gray.dtype == dt.uint8


def test_rotate_and_random_rotation():
    from PIL import Image

    img = np.arange(3 * 4 * 5, dtype=np.uint8).reshape(4, 5, 3) * 4
    pil = Image.fromarray(img)
    turned = F.rotate(pil, 90, expand=True)  # counter-clockwise, grown to hold the image
    assert turned.size == (4, 5) and np.array_equal(np.asarray(turned), np.rot90(img))
    square = dt.arange(2 * 5 * 5, dtype=dt.float32).reshape(2, 5, 5)
    assert dt.equal(F.rotate(square, 90), dt.rot90(square, 1, [1, 2]))
    assert F.rotate(dt.zeros(1, 6, 4), 30, expand=True).shape == (1, 8, 8)  # torchvision's size
    filled = F.rotate(dt.ones(3, 9, 9), 45, fill=[5.0, 6.0, 7.0])
    assert filled[:, 0, 0].tolist() == [5.0, 6.0, 7.0] and filled[:, 4, 4].tolist() == [1.0] * 3
    smooth = F.rotate(dt.ones(1, 9, 9), 45, F.InterpolationMode.BILINEAR, fill=[0.0])
    assert float(smooth[0, 1, 2]) == 1.0 and 0.0 < float(smooth[0, 0, 1]) < 1.0  # edges blend with fill
    as_bytes = F.rotate(dt.full((1, 4, 4), 200, dtype=dt.uint8), 45)
    assert as_bytes.dtype == dt.uint8 and int(as_bytes[0, 2, 2]) == 200 and int(as_bytes[0, 0, 0]) == 0
    rotation = T.RandomRotation(10)
    dt.manual_seed(3)
    angle = rotation.get_params(rotation.degrees)
    dt.manual_seed(3)
    assert angle == float(dt.empty(1).uniform_(-10.0, 10.0)) and -10 <= angle <= 10
    assert (
        repr(rotation) == "RandomRotation(degrees=[-10.0, 10.0], interpolation=nearest, expand=False, fill=0)"
    )
    assert rotation(pil).size == (5, 4) and rotation(square).shape == (2, 5, 5)
    with pytest.raises(ValueError, match="must be positive"):
        T.RandomRotation(-1)
    with pytest.raises(ValueError, match="degrees should be a sequence of length 2"):
        T.RandomRotation([1, 2, 3])
    with pytest.raises(TypeError, match="Argument angle should be int or float"):
        F.rotate(square, "10")
