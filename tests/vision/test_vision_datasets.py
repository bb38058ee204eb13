"""``torchvision.datasets`` (``disttorch.vision.datasets``) on torchvision's on-disk layouts,
made tiny in a temporary folder: MNIST's IDX files (fetched with ``download=True`` from a
local HTTP server, checked by MD5), CIFAR's pickled batches, an image folder, FakeData."""

import gzip
import hashlib
import http.server
import io
import os
import pickle
import tarfile
import threading

import numpy as np
import pytest

import disttorch as dt
from disttorch.vision import datasets, transforms

pytest.importorskip("PIL")

RNG = np.random.default_rng(6)
DIGITS = RNG.integers(0, 256, (5, 28, 28), dtype=np.uint8)
LABELS = np.array([3, 1, 4, 1, 5], np.uint8)


def _idx(array: np.ndarray) -> bytes:
    header = (0x08 << 8 | array.ndim).to_bytes(4, "big") + b"".join(n.to_bytes(4, "big") for n in array.shape)
    return header + array.tobytes()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A local HTTP server for a folder, in a thread; its base URL and folder."""
    folder = tmp_path_factory.mktemp("served")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/", folder
    httpd.shutdown()
    thread.join(timeout=5)


def test_mnist_downloads_checks_and_reads(server, tmp_path):
    url, served = server
    served_files = []
    for split in ("train", "t10k"):
        for kind, array in (("images-idx3", DIGITS), ("labels-idx1", LABELS)):
            name = f"{split}-{kind}-ubyte.gz"
            packed = gzip.compress(_idx(array))
            (served / name).write_bytes(packed)
            served_files.append((name, hashlib.md5(packed).hexdigest()))

    class Tiny(datasets.MNIST):
        mirrors = [url + "missing/", url]
        resources = served_files

    with pytest.raises(RuntimeError, match="Dataset not found. You can use download=True"):
        Tiny(tmp_path)
    data = Tiny(tmp_path, train=False, download=True, transform=transforms.ToTensor())
    assert sorted(os.listdir(tmp_path / "Tiny" / "raw"))[0] == "t10k-images-idx3-ubyte"
    image, label = data[2]
    assert len(data) == 5 and label == 4 and image.shape == (1, 28, 28)
    np.testing.assert_allclose(image.numpy()[0], DIGITS[2] / np.float32(255), rtol=1e-6)
    assert data.targets.dtype == dt.int64 and data.data.dtype == dt.uint8
    assert "Split: Test" in repr(data) and data.class_to_idx["4 - four"] == 4

    class Corrupt(Tiny):
        resources = [(served_files[0][0], "0" * 32)] + served_files[1:]

    with pytest.raises(RuntimeError, match="Error downloading train-images-idx3-ubyte.gz:\nTried"):
        Corrupt(tmp_path / "other", download=True)


def test_cifar_reads_pickled_batches_and_refuses_code(server, tmp_path):
    base, served = server
    batch = {"data": RNG.integers(0, 256, (4, 3072), dtype=np.uint8), "labels": [0, 2, 1, 2]}
    meta = {"label_names": ["cat", "dog", "ship"]}
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        for name, obj in (("data_batch_1", batch), ("test_batch", batch), ("batches.meta", meta)):
            blob = pickle.dumps(obj, protocol=2)
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    (served / "tiny-cifar.tar.gz").write_bytes(archive.getvalue())
    md5s = {}
    with tarfile.open(fileobj=io.BytesIO(archive.getvalue())) as tar:
        for member in tar.getmembers():
            md5s[member.name.split("/")[-1]] = hashlib.md5(tar.extractfile(member).read()).hexdigest()

    class Tiny(datasets.CIFAR10):
        url = base + "tiny-cifar.tar.gz"
        filename = "tiny-cifar.tar.gz"
        tgz_md5 = hashlib.md5(archive.getvalue()).hexdigest()
        train_list = [["data_batch_1", md5s["data_batch_1"]]]
        test_list = [["test_batch", md5s["test_batch"]]]
        meta = {"filename": "batches.meta", "key": "label_names", "md5": md5s["batches.meta"]}

    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        Tiny(tmp_path)
    data = Tiny(tmp_path, download=True)
    image, label = data[1]
    assert image.size == (32, 32) and label == 2 and data.classes == ["cat", "dog", "ship"]
    assert np.array_equal(np.asarray(image), batch["data"][1].reshape(3, 32, 32).transpose(1, 2, 0))
    evil = tmp_path / "cifar-10-batches-py" / "data_batch_1"
    evil.write_bytes(pickle.dumps({"data": os.getcwd}))
    with pytest.raises(pickle.UnpicklingError, match="not posix.getcwd"):
        datasets.cifar._load_batch(str(evil))


def test_image_folder_and_fake_data(tmp_path):
    from PIL import Image

    for cls, color in (("b", 200), ("a", 10)):
        (tmp_path / cls).mkdir()
        Image.new("RGB", (4, 3), (color, 0, 0)).save(tmp_path / cls / "x.png")
    (tmp_path / "a" / "notes.txt").write_text("skipped")
    folder = datasets.ImageFolder(tmp_path, transform=transforms.PILToTensor())
    assert folder.classes == ["a", "b"] and folder.targets == [0, 1] and len(folder) == 2
    image, label = folder[1]
    assert label == 1 and image.shape == (3, 3, 4) and int(image[0, 0, 0]) == 200
    (tmp_path / "c").mkdir()
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes c"):
        datasets.ImageFolder(tmp_path)
    fake = datasets.FakeData(size=3, image_size=(3, 5, 6), num_classes=4)
    first, again = fake[1], fake[1]
    assert first[0].size == (6, 5) and np.array_equal(np.asarray(first[0]), np.asarray(again[0]))
    with pytest.raises(IndexError):
        fake[3]


def test_celeba_reads_splits_and_targets(tmp_path, monkeypatch):
    from PIL import Image

    folder = tmp_path / "celeba"
    (folder / "img_align_celeba").mkdir(parents=True)
    names = [f"{i:06d}.jpg" for i in range(1, 5)]
    for i, name in enumerate(names):
        Image.new("RGB", (4, 5), (40 * i, 0, 0)).save(folder / "img_align_celeba" / name)
    (folder / "list_eval_partition.txt").write_text("".join(f"{n} {i % 2}\n" for i, n in enumerate(names)))
    (folder / "identity_CelebA.txt").write_text("".join(f"{n} {7 + i}\n" for i, n in enumerate(names)))
    rows = "".join(f"{n}    {i}  2 3 4\n" for i, n in enumerate(names))
    (folder / "list_bbox_celeba.txt").write_text(f"4\nimage_id x_1 y_1 width height\n{rows}")
    rows = "".join(f"{n} {i} " + " ".join(["5"] * 9) + "\n" for i, n in enumerate(names))
    (folder / "list_landmarks_align_celeba.txt").write_text(f"4\nlefteye_x ...\n{rows}")
    rows = "".join(f"{n} {'-1' if i else ' 1'}  1\n" for i, n in enumerate(names))
    (folder / "list_attr_celeba.txt").write_text(f"4\nSmiling Young \n{rows}")
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):  # CelebA's MD5s
        datasets.CelebA(tmp_path)
    monkeypatch.setattr(datasets.celeba, "check_integrity", lambda path, md5=None: os.path.isfile(path))
    valid = datasets.CelebA(tmp_path, split="valid", target_type=["attr", "identity", "bbox", "landmarks"])
    assert valid.filename == names[1::2] and valid.attr_names == ["Smiling", "Young", ""]
    image, (attr, identity, bbox, landmarks) = valid[0]
    assert image.size == (4, 5) and attr.tolist() == [0, 1] and attr.dtype == dt.int64
    assert int(identity) == 8 and bbox.tolist() == [1, 2, 3, 4] and landmarks.tolist()[:2] == [1, 5]
    every = datasets.CelebA(tmp_path, split="all", target_transform=lambda a: int(a[0]))
    assert len(every) == 4 and [every[i][1] for i in range(4)] == [1, 0, 0, 0]
    assert datasets.CelebA(tmp_path, target_type=[])[0][1] is None
    with pytest.raises(ValueError, match="Unknown value 'bogus' for argument split"):
        datasets.CelebA(tmp_path, split="bogus")
    with pytest.raises(ValueError, match='Target type "pose" is not recognized'):
        datasets.CelebA(tmp_path, target_type="pose")[0]


@pytest.mark.parity
def test_fake_data_matches_torchvision(torch):
    torchvision = pytest.importorskip("torchvision")
    ours = datasets.FakeData(size=4, image_size=(3, 5, 6), num_classes=7, random_offset=3)
    theirs = torchvision.datasets.FakeData(size=4, image_size=(3, 5, 6), num_classes=7, random_offset=3)
    for i in range(4):
        assert ours[i][1] == theirs[i][1] and np.array_equal(np.asarray(ours[i][0]), np.asarray(theirs[i][0]))
    assert repr(ours) == repr(theirs)
