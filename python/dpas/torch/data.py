# SPDX-License-Identifier: Apache-2.0
"""The data sets of the demonstration and the benchmark (no download), and their splits.

* ``digits``: scikit-learn's handwritten digits (1797 images of 8 x 8 pixels, 10 classes; Debian's
  python3-sklearn ships the file), pixels scaled to [0, 1]; a fixed, seeded 80/20 split into
  1437 training and 360 test images.
* ``fashion-mnist``: Zalando's Fashion-MNIST (Xiao et al. 2017: 70,000 grey images of 28 x 28
  pixels, 10 classes of clothing), read from the IDX files of Debian's dataset-fashion-mnist
  (/usr/share/datasets/fashion-mnist; the environment variable DPAS_FASHION_MNIST names another
  directory holding the same four files), pixels scaled to [0, 1]; its own split: 60,000
  training and 10,000 test images. Features are the 784 pixels, row-major (the CNN reshapes them
  to 1 x 28 x 28).
* ``gaussian``: the generated set of the first demonstration: 4 Gaussian clusters in 24
  dimensions, 5 % of the labels flipped; 4800 training and 1000 test samples.

dirichlet_split deals the training set to the workers: IID (alpha None: shuffled, round-robin)
or non-IID with class proportions drawn from Dirichlet(alpha) per class (Hsu et al. 2019; the
split of Allouah et al. 2023 and ByzFL): small alpha gives each worker few classes.
"""
import gzip
import importlib.util
import os
import typing

import numpy as np

from dpas import _check
from dpas.errors import InvalidValue

DATASETS = ("digits", "fashion-mnist", "gaussian")
FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"
IMAGE_SHAPE = {"digits": (1, 8, 8), "fashion-mnist": (1, 28, 28)}


def _digits_file() -> str:
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the digits data set needs scikit-learn's data files (Debian: apt "
                          "install python3-sklearn)")
    path = os.path.join(list(spec.submodule_search_locations)[0], "datasets", "data",
                        "digits.csv.gz")
    if not os.path.isfile(path):
        raise ImportError(f"scikit-learn is there but not its digits file ({path})")
    return path


def read_idx(path: str) -> np.ndarray:
    """An IDX file (LeCun's MNIST format, gzip-compressed or not) as an array: two zero bytes,
    the type (0x08: unsigned bytes), the number of dimensions, each dimension as a big-endian
    32-bit integer, then the values. Anything else is refused with the path and the reason."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise InvalidValue(f"{path}: not an IDX file (it must start with two zero bytes)", "path")
    if raw[2] != 0x08:
        raise InvalidValue(f"{path}: IDX type 0x{raw[2]:02x} is not supported (only 0x08, "
                           f"unsigned bytes)", "path")
    ndim = raw[3]
    head = 4 + 4 * ndim
    if ndim == 0 or len(raw) < head:
        raise InvalidValue(f"{path}: IDX header of {ndim} dimensions is cut short", "path")
    dims = tuple(int.from_bytes(raw[4 + 4 * k:8 + 4 * k], "big") for k in range(ndim))
    count = int(np.prod(dims, dtype=np.int64))
    if len(raw) - head != count:
        raise InvalidValue(f"{path}: the header {dims} promises {count} values, the file holds "
                           f"{len(raw) - head}", "path")
    return np.frombuffer(raw, dtype=np.uint8, offset=head).reshape(dims)


def _fashion_mnist():
    where = os.environ.get("DPAS_FASHION_MNIST") or FASHION_MNIST_DIR
    out = []
    for part in ("train", "t10k"):
        files = [os.path.join(where, f"{part}-{kind}-idx{d}-ubyte.gz")
                 for kind, d in (("images", 3), ("labels", 1))]
        for f in files:
            if not os.path.isfile(f):
                raise ImportError(f"the fashion-mnist data set needs {f} (Debian: apt install "
                                  f"dataset-fashion-mnist; or set DPAS_FASHION_MNIST to the "
                                  f"directory holding the four IDX files)")
        x, y = read_idx(files[0]), read_idx(files[1])
        if x.ndim != 3 or y.ndim != 1 or len(x) != len(y):
            raise InvalidValue(f"{files[0]}: {x.shape} images for {y.shape} labels", "path")
        out.append((x.reshape(len(x), -1).astype(np.float32) / 255.0, y.astype(np.int64)))
    return out[0], out[1], 10


def load(name: str, seed: int = 0):
    """((x_train, y_train), (x_test, y_test), classes): float32 features, int64 labels."""
    if name == "digits":
        with gzip.open(_digits_file(), "rt") as fh:
            raw = np.loadtxt(fh, delimiter=",", dtype=np.float32)
        x, y = raw[:, :-1] / 16.0, raw[:, -1].astype(np.int64)
        order = np.random.default_rng(0).permutation(len(y))
        x, y = x[order], y[order]
        cut = len(y) - 360
        return (x[:cut], y[:cut]), (x[cut:], y[cut:]), 10
    if name == "fashion-mnist":
        return _fashion_mnist()
    if name == "gaussian":
        g = np.random.default_rng(seed)
        features, classes = 24, 4
        centers = g.normal(0.0, 1.0, (classes, features)) * 0.8

        def draw(n):
            y = g.integers(0, classes, n)
            x = centers[y] + g.normal(0.0, 1.0, (n, features))
            flip = g.random(n) < 0.05
            y = np.where(flip, g.integers(0, classes, n), y)
            return x.astype(np.float32), y.astype(np.int64)
        return draw(4800), draw(1000), classes
    raise InvalidValue(f"dataset must be one of {', '.join(DATASETS)}, got {name!r}", "dataset")


def dirichlet_split(y, workers: int, alpha: typing.Optional[float],
                    seed: int) -> typing.List[np.ndarray]:
    """The indices of each worker's samples. alpha None: IID (a seeded shuffle dealt round
    robin). Otherwise, for each class, its samples (shuffled) cut among the workers in
    proportions drawn from Dirichlet(alpha, ..., alpha); a worker left with no sample gets one
    from the worker with the most (so every worker can draw a batch)."""
    workers = _check.int64("workers", workers, minimum=1)
    g = np.random.default_rng([seed, 1])
    if alpha is None:
        order = g.permutation(len(y))
        return [np.sort(order[w::workers]) for w in range(workers)]
    alpha = _check.real("alpha", alpha)
    if not alpha > 0 or not np.isfinite(alpha):
        raise InvalidValue(f"alpha must be a positive number, got {alpha}", "alpha")
    parts: typing.List[list] = [[] for _ in range(workers)]
    for c in np.unique(y):
        idx = g.permutation(np.flatnonzero(y == c))
        p = g.dirichlet(np.full(workers, alpha))
        cuts = (np.cumsum(p)[:-1] * len(idx)).astype(int)
        for w, piece in enumerate(np.split(idx, cuts)):
            parts[w].extend(piece.tolist())
    for w in range(workers):
        if not parts[w]:
            donor = max(range(workers), key=lambda k: len(parts[k]))
            parts[w].append(parts[donor].pop())
    return [np.sort(np.array(p, dtype=np.int64)) for p in parts]


def dominant_share(y, split) -> typing.List[float]:
    """For each worker, the share of its samples in its most frequent class (IID: about 1/C;
    Dirichlet with small alpha: close to 1)."""
    return [float(np.bincount(y[s]).max() / len(s)) for s in split]
