# SPDX-License-Identifier: Apache-2.0
"""The data sets of the demonstration and the benchmark (no download), and their splits.

* ``digits``: scikit-learn's handwritten digits (1797 images of 8 x 8 pixels, 10 classes; Debian's
  python3-sklearn ships the file), pixels scaled to [0, 1]; a fixed, seeded 80/20 split into
  1437 training and 360 test images.
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

DATASETS = ("digits", "gaussian")


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
