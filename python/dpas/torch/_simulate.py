# SPDX-License-Identifier: Apache-2.0
"""The benchmark's runs, simulated in one process: N workers of data-parallel SGD, h = N - f
honest and f Byzantine, aggregated by the same code the DDP hook runs.

What is the same as the hook (dpas.torch's allgather schedule, one bucket): each honest worker's
vector is its gradient, or its worker momentum m = beta m + (1 - beta) g in float32 (the hook's
formula); the Byzantine rows are made by dpas.torch.attacks.rows from the honest vectors (the
hook's omniscient attacks, the same function); the aggregate is dpas.aggregate(rule, rows, f,
convention=..., nnm=...) on the (N, d) float32 matrix, honest rows first (the hook's call); the
server steps with plain SGD on it. What is not: no processes, no wire, no DDP buckets (the
whole gradient is one row, which the hook also aggregates as one), no bucketing pre-aggregation.

The data protocol is ByzFL's benchmark's (LPD-EPFL/byzfl, byzfl/benchmark/train.py: the training
set is dealt to the honest clients only, the Byzantine clients are extra and hold no data; a
validation split is carved from the training set): a fixed, seeded validation split is taken
out of the training set; the rest is dealt to the h honest workers only (IID or Dirichlet(alpha)
per class, dpas.torch.data.dirichlet_split); the f Byzantine workers get no data. The oracle is
the same h honest workers with the same data and batches, aggregated by the plain mean, with no
Byzantine worker at all. A run with no attack (attack None) aggregates the h honest rows alone
with the rule and its declared f: what the robust rule costs when nobody attacks.
"""
import typing

import numpy as np

VALIDATION_SHARE = 0.1
VALIDATION_MAX = 2000

RUN_KEYS = ("dataset", "model", "n", "f", "rule", "pre", "attack", "attack_parameters",
            "momentum", "seed", "alpha", "steps", "lr", "batch", "convention", "limit_train",
            "limit_test", "limit_validation", "oracle")


def ranks(n: int, f: int) -> typing.Tuple[typing.Tuple[int, ...], typing.Tuple[int, ...]]:
    """(honest ranks, Byzantine ranks): the first n - f are honest, the last f Byzantine."""
    return tuple(range(n - f)), tuple(range(n - f, n))


def validation_split(count: int, limit: typing.Optional[int] = None):
    """(training indices, validation indices) of a training set of `count` samples: a fixed
    permutation (seed 0, the same for every run and seed); the validation part is
    min(VALIDATION_MAX, ceil(VALIDATION_SHARE x count)); limit (if given) keeps only the first
    `limit` of the training part (a smaller benchmark, e.g. in the tests; the test set is cut
    by the run's limit_test)."""
    order = np.random.default_rng(0).permutation(count)
    nval = min(VALIDATION_MAX, int(np.ceil(VALIDATION_SHARE * count)))
    val, train = np.sort(order[:nval]), order[nval:]
    if limit is not None:
        train = train[:limit]
    return np.sort(train), val


def honest_split(y_train, n: int, f: int, alpha, seed: int) -> typing.List[np.ndarray]:
    """The indices (into y_train) each honest worker holds: the whole training part dealt to the
    n - f honest workers only (the Byzantine workers hold nothing)."""
    from .data import dirichlet_split
    return dirichlet_split(y_train, n - f, alpha, seed)


def build_model(kind: str, features: int, classes: int, shape=None):
    """mlp: features -> 64 -> classes. cnn (images of shape (1, H, W)): two 5 x 5 convolutions
    (8 and 16 channels, ReLU, 2 x 2 max pooling; 3 x 3 with padding 1 for images under 16
    pixels) and a linear layer, the LeNet-like form of ByzFL's cnn_mnist, narrower (5,994
    parameters at 28 x 28, 208 + 3,216 + 2,570: the benchmark runs many models on two cores)."""
    import torch
    from torch import nn
    if kind == "mlp":
        return nn.Sequential(nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, classes))
    if shape is None:
        raise ValueError(f"the cnn needs images; this data set has {features} plain features")
    k, pad = (5, 0) if shape[1] >= 16 else (3, 1)
    body = nn.Sequential(nn.Unflatten(1, shape), nn.Conv2d(shape[0], 8, k, padding=pad),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, k, padding=pad),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten())
    with torch.no_grad():
        width = body(torch.zeros(1, features)).shape[1]
    return nn.Sequential(body, nn.Linear(width, classes))


def _accuracy(model, x, y, chunk=2000) -> float:
    import torch
    right = 0
    with torch.no_grad():
        for i in range(0, len(y), chunk):
            right += int((model(x[i:i + chunk]).argmax(1) == y[i:i + chunk]).sum())
    return right / len(y)


def simulate(spec: dict, data, observe: typing.Optional[typing.Callable] = None) -> dict:
    """One run. data: dpas.torch.data.load's ((x, y), (x_test, y_test), classes). observe, if
    given, is called each step with (step, rows) where rows is the (rows, d) matrix aggregated
    (the tests check who is in it). Returns the run's spec with its final test and validation
    accuracy, and the error that stopped it (None if none)."""
    import torch
    import dpas
    from . import attacks as _attacks
    from .data import IMAGE_SHAPE
    torch.set_num_threads(1)
    (x_all, y_all), (x_test, y_test), classes = data
    n, f = spec["n"], spec["f"]
    oracle = spec["oracle"]
    honest, byz = ranks(n, f)
    train, val = validation_split(len(y_all), spec["limit_train"])
    parts = honest_split(y_all[train], n, f, spec["alpha"], spec["seed"])
    xt = torch.from_numpy(x_all[train])
    yt = torch.from_numpy(y_all[train])
    torch.manual_seed(spec["seed"])
    model = build_model(spec["model"], x_all.shape[1], classes, IMAGE_SHAPE.get(spec["dataset"]))
    params = [p for p in model.parameters()]
    d = sum(p.numel() for p in params)
    loss_fn = torch.nn.CrossEntropyLoss()
    gens = [torch.Generator().manual_seed(spec["seed"] * 1000 + r) for r in honest]
    mine = [torch.from_numpy(p) for p in parts]
    beta = spec["momentum"]
    momenta = [None] * len(honest)
    attack = None if oracle else spec["attack"]
    nbyz = 0 if attack is None else f  # no attack: the Byzantine workers send nothing
    atk_params = _attacks.check(attack, spec["attack_parameters"], byz, n) if attack else None
    rule = "mean" if oracle else spec["rule"]
    pre = () if oracle else tuple(spec["pre"] or ())
    declared = 0 if rule == "mean" else f

    def aggregate(rows):
        return dpas.aggregate(rule, np.ascontiguousarray(rows), declared,
                              convention=None if oracle else spec["convention"],
                              nnm="nnm" in pre)
    ctx = _attacks.Context(aggregate, byz, n) if attack else None
    batched = _per_worker_gradients(model, loss_fn)
    error = None
    for step in range(spec["steps"]):
        rows = np.empty((len(honest) + nbyz, d), np.float32)
        idx = torch.stack([mine[i][torch.randint(0, mine[i].numel(), (spec["batch"],),
                                                 generator=gens[i])]
                           for i in range(len(honest))])
        grads = batched(xt[idx], yt[idx])  # (h, d): each honest worker's gradient
        for i in range(len(honest)):
            g = grads[i]
            if beta:
                g = g * (1 - beta) if momenta[i] is None else momenta[i] * beta + g * (1 - beta)
                momenta[i] = g
            rows[i] = g.numpy()
        if nbyz:
            ctx.step = step
            rows[len(honest):] = _attacks.rows(attack, atk_params, rows[:len(honest)], nbyz,
                                               ctx)
        if observe is not None:
            observe(step, rows)
        try:
            agg = aggregate(rows)
        except ValueError as e:  # a rule refusing its rows (non-finite: a diverged model)
            error = f"step {step}: {e}"
            break
        if not np.all(np.isfinite(agg)):
            error = f"step {step}: the aggregate is not finite"
            break
        with torch.no_grad():
            off = 0
            step_t = torch.from_numpy(agg)
            for p in params:
                p -= spec["lr"] * step_t[off:off + p.numel()].reshape(p.shape)
                off += p.numel()
    lt = spec["limit_test"]
    acc = _accuracy(model, torch.from_numpy(x_test[:lt]), torch.from_numpy(y_test[:lt]))
    val = val[:spec["limit_validation"]]
    vacc = _accuracy(model, torch.from_numpy(x_all[val]), torch.from_numpy(y_all[val]))
    return {**{k: spec[k] for k in RUN_KEYS}, "pre": list(pre), "parameters": d,
            "accuracy": acc, "validation": vacc, "error": error,
            "attack_parameters": atk_params if attack else None}


def _per_worker_gradients(model, loss_fn):
    """A function (x (h, B, features), y (h, B)) -> (h, d) float32: each worker's gradient of
    its mean loss on its own batch at the current weights. With functorch (torch 1.13's vmap):
    one batched call; without: a loop over the workers (the same values up to rounding)."""
    import torch
    params = [p for p in model.parameters()]
    try:
        from functorch import grad, make_functional, vmap
    except ImportError:
        vmap = None
    if vmap is not None:
        fmodel, _ = make_functional(model)

        def loss(ps, x, y):
            return loss_fn(fmodel(ps, x), y)
        per = vmap(grad(loss), in_dims=(None, 0, 0))

        def batched(x, y):
            out = per(tuple(p.detach() for p in params), x, y)
            return torch.cat([o.reshape(o.shape[0], -1) for o in out], dim=1).contiguous()
        return batched

    def looped(x, y):
        out = []
        for i in range(x.shape[0]):
            model.zero_grad(set_to_none=True)
            loss_fn(model(x[i]), y[i]).backward()
            out.append(torch.cat([p.grad.reshape(-1) for p in params]))
        return torch.stack(out)
    return looped


_CACHE: dict = {}


def run_one(spec: dict) -> dict:
    """simulate(spec) with the data set loaded once per process."""
    from .data import load
    key = (spec["dataset"], spec["seed"] if spec["dataset"] == "gaussian" else 0)
    if key not in _CACHE:
        _CACHE[key] = load(spec["dataset"], seed=key[1])
    return simulate(spec, _CACHE[key])
