# SPDX-License-Identifier: Apache-2.0
"""The attacks a simulated Byzantine rank of dpas.torch runs, as the papers define them.

Every attack maps what the Byzantine ranks know to the rows they send. An attack that needs only
the attacker's own vector (``knows = "own"``) runs from its honest gradient (or worker momentum);
one that needs the honest vectors (``knows = "honest"``) makes the hook *omniscient*: the honest
ranks send their vectors to the Byzantine ranks first (a cost of the simulation, counted apart in
``HookState.simulation_bytes``), as the papers' threat model grants. Sums and statistics are taken
by dpas's kernels (dpas.attack) where one exists; the others are written here from the papers.

=================  ========  ==============================================================
attack             knows     the row each Byzantine rank sends (mu, sigma: the honest mean and
                             per-coordinate standard deviation, h - 1 in the denominator)
=================  ========  ==============================================================
sign_flip          own       -scale x its own vector (Karimireddy et al. 2021's "bit flipping";
                             with omniscient=True, -scale x mu, ByzFL's SignFlipping). scale 1.
ipm                honest    -epsilon x mu (inner product manipulation, Xie et al. 2020).
                             epsilon 0.1 (the paper's attack on median and Krum; Karimireddy et
                             al. 2022 and Allouah et al. 2023 use it too).
foe                honest    (1 - tau) x mu ("Fall of Empires", the same paper, in ByzFL's
                             parametrisation); tau 3.
alie               honest    mu + z sigma (Baruch et al. 2019); z = z_max for n = N replicas and
                             the actual number of attackers: Phi^-1((n - s) / n), s = floor(n/2
                             + 1) - f (dpas.attack's default, from the paper).
mimic              honest    a copy of one honest rank's vector (Karimireddy et al. 2022): the
                             honest rank ``target`` (default: the lowest honest rank).
mimic_opt          honest    mimic with the paper's heuristic: for the first ``learn`` steps
                             (default 20) the attackers track the direction z of largest
                             variance of the honest vectors (an online power iteration about
                             their running mean) and copy the lowest honest rank; afterwards
                             they copy the honest rank whose vector has the largest |<x_i, z>|.
alie_opt           honest    alie with the z that hurts the configured rule most: the z
ipm_opt                      (resp. epsilon) maximising ||aggregate(honest + f copies) - mu||,
foe_opt                      found by a line search of ``evals`` evaluations (default 16) of the
                             hook's own rule and pre-aggregation on the whole vectors (ByzFL's
                             Optimal_* attacks). foe_opt searches tau.
label_flip         own       sends its honest gradient computed on flipped labels: the training
                             loop flips them (dpas.torch.flip_labels: y -> C - 1 - y, Allouah et
                             al. 2023); the hook sends the vector unchanged.
large_value        own       every coordinate = value (default FLT_MAX).
nan                own       every coordinate NaN.
inf                own       every coordinate +Inf (sign < 0: -Inf).
=================  ========  ==============================================================
"""
import dataclasses
import math
import typing

import dpas
from dpas import _check
from dpas.errors import ArgumentTypeError, InvalidValue


@dataclasses.dataclass(frozen=True)
class Attack:
    name: str
    knows: str                      # "own" or "honest"
    parameters: typing.Tuple[str, ...]
    whole: bool = False             # needs whole vectors (evaluates the rule, or picks a row)
    source: str = ""


ATTACKS: typing.Dict[str, Attack] = {a.name: a for a in (
    Attack("sign_flip", "own", ("scale",), source="Karimireddy et al. 2021 (bit flipping); ByzFL"),
    Attack("ipm", "honest", ("epsilon",), source="Xie et al. 2020"),
    Attack("foe", "honest", ("tau",), source="Xie et al. 2020 (Fall of Empires), ByzFL's form"),
    Attack("alie", "honest", ("z",), source="Baruch et al. 2019"),
    Attack("mimic", "honest", ("target",), source="Karimireddy et al. 2022"),
    Attack("mimic_opt", "honest", ("learn",), whole=True, source="Karimireddy et al. 2022"),
    Attack("alie_opt", "honest", ("evals",), whole=True, source="ByzFL Optimal_ALittleIsEnough"),
    Attack("ipm_opt", "honest", ("evals",), whole=True,
           source="ByzFL Optimal_InnerProductManipulation"),
    Attack("foe_opt", "honest", ("evals",), whole=True, source="ByzFL, FOE's tau optimised"),
    Attack("label_flip", "own", (), source="Allouah et al. 2023"),
    Attack("large_value", "own", ("value",), source="dpas.attack"),
    Attack("nan", "own", (), source="dpas.attack"),
    Attack("inf", "own", ("sign",), source="dpas.attack"),
)}

DEFAULTS = {("ipm", "epsilon"): 0.1, ("foe", "tau"): 3.0, ("sign_flip", "scale"): 1.0,
            ("mimic_opt", "learn"): 20, ("alie_opt", "evals"): 16, ("ipm_opt", "evals"): 16,
            ("foe_opt", "evals"): 16}
_INTEGER_PARAMETERS = {"target", "learn", "evals"}


def check(name: typing.Any, parameters: typing.Any, byzantine: typing.Sequence[int],
          world: int) -> typing.Dict[str, typing.Any]:
    """The attack's parameters, checked (names, types, ranges) and completed with defaults."""
    _check.text("attack", name)
    if name not in ATTACKS:
        raise dpas.UnknownName(f"attack must be one of {', '.join(ATTACKS)}, got {name!r}",
                               "attack")
    a = ATTACKS[name]
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, dict):
        raise ArgumentTypeError(f"attack_parameters must be a dict, got "
                                f"{type(parameters).__name__}", "attack_parameters")
    out: typing.Dict[str, typing.Any] = {}
    for key, v in parameters.items():
        if key not in a.parameters:
            took = (f"its parameter is {a.parameters[0]!r}" if a.parameters else "it takes none")
            raise InvalidValue(f"attack {name!r} got an unexpected parameter {key!r}; {took}",
                               "attack_parameters")
        if key in _INTEGER_PARAMETERS:
            out[key] = _check.int64(f"attack_parameters[{key!r}]", v, minimum=0)
        else:
            x = _check.real(f"attack_parameters[{key!r}]", v)
            if not math.isfinite(x) and key != "value":
                raise InvalidValue(f"attack_parameters[{key!r}] must be finite, got {x}",
                                   "attack_parameters")
            out[key] = x
    for p in a.parameters:
        if p not in out and (name, p) in DEFAULTS:
            out[p] = DEFAULTS[(name, p)]
    honest = [r for r in range(world) if r not in byzantine]
    if name == "mimic":
        t = out.setdefault("target", honest[0])
        if t not in honest:
            raise InvalidValue(f"attack_parameters['target'] must be an honest rank (one of "
                               f"{honest}), got {t}", "attack_parameters")
    if name.endswith("_opt") and name != "mimic_opt" and out["evals"] < 2:
        raise InvalidValue(f"attack_parameters['evals'] must be >= 2, got {out['evals']}",
                           "attack_parameters")
    return out


def flip_labels(y, classes: int):
    """Label flipping (Allouah et al. 2023): label l becomes classes - 1 - l (a torch tensor or
    a numpy array of ints in [0, classes))."""
    classes = _check.int64("classes", classes, minimum=1)
    return (classes - 1) - y


class Context:
    """What an attack may use beyond the vectors: the rule the hook runs (for the optimised
    attacks), its state across steps (mimic_opt), and the ranks."""

    def __init__(self, aggregate: typing.Callable, byzantine: typing.Sequence[int], world: int):
        self.aggregate = aggregate  # (rows (n, d) float32) -> (d,) float32, the hook's rule
        self.byzantine = tuple(byzantine)
        self.honest = tuple(r for r in range(world) if r not in self.byzantine)
        self.world = world
        self.step = 0
        self.z = None      # mimic_opt: the direction of largest variance
        self.mu = None     # mimic_opt: the running mean of the honest means
        self.last_factor = None  # the optimised attacks' chosen factor (recorded)


def _line_maximise(objective: typing.Callable[[float], float], evals: int) -> float:
    """A best-effort argmax over [0, inf) of objective with `evals` evaluations: expand the step
    (x = 0, 1, 3, 7, ...: doubling) while the objective grows, then shrink it by 0.8 around the
    best point found (the exploration ByzFL's Optimal attacks describe)."""
    best_x, best_y = 0.0, objective(0.0)
    used, delta, x = 1, 1.0, 0.0
    while used < evals:
        x = best_x + delta
        y = objective(x)
        used += 1
        if y > best_y:
            best_x, best_y, delta = x, y, delta * 2
        else:
            delta *= 0.8
            break
    while used < evals:
        x = x + delta if x < best_x else max(0.0, x - delta)
        y = objective(x)
        used += 1
        if y > best_y:
            best_x, best_y = x, y
        delta *= 0.8
    return best_x


def rows(name: str, params: dict, known, nbyz: int, ctx: Context):
    """The (nbyz, d) float32 rows the Byzantine ranks send. known: (1, d) (the attacker's own
    vector) or (h, d) (the honest vectors, in rank order of ctx.honest), float32 C-contiguous."""
    import numpy as np
    known = np.ascontiguousarray(known, dtype=np.float32)

    def repeat(v):
        return np.tile(np.asarray(v, np.float32), (nbyz, 1))

    if name == "label_flip":
        return repeat(known[0])
    if name in ("sign_flip", "large_value", "nan", "inf", "alie"):
        return dpas.attack(name, known, nbyz, **params)
    if name == "ipm":
        return dpas.attack("ipm", known, nbyz, epsilon=params["epsilon"])
    if name == "foe":  # (1 - tau) mu = -(tau - 1) mu
        return dpas.attack("ipm", known, nbyz, epsilon=params["tau"] - 1.0)
    if name == "mimic":
        return repeat(known[ctx.honest.index(params["target"])])
    if name == "mimic_opt":
        return repeat(known[_mimic_choice(params["learn"], known, ctx)])
    mu = known.mean(axis=0, dtype=np.float64)

    def make(factor):
        if name == "alie_opt":
            return dpas.attack("alie", known, nbyz, z=factor)
        if name == "ipm_opt":
            return dpas.attack("ipm", known, nbyz, epsilon=factor)
        return dpas.attack("ipm", known, nbyz, epsilon=factor - 1.0)  # foe_opt: tau = factor

    def damage(factor):
        out = ctx.aggregate(np.concatenate([known, make(factor)]))
        return float(np.linalg.norm(out.astype(np.float64) - mu))

    factor = _line_maximise(damage, params["evals"])
    ctx.last_factor = factor
    return make(factor)


def _mimic_choice(learn: int, honest, ctx: Context) -> int:
    """Karimireddy et al. 2022's heuristic: which honest row to copy (an index into honest)."""
    import numpy as np
    x = honest.astype(np.float64)
    step = ctx.step
    if step < learn:
        t = 1.0 / (step + 1)
        mean = x.mean(axis=0)
        ctx.mu = mean if ctx.mu is None else (1 - t) * ctx.mu + t * mean
        if ctx.z is None:
            ctx.z = np.random.default_rng(12345).standard_normal(x.shape[1])
            ctx.z /= np.linalg.norm(ctx.z)
        dev = x - ctx.mu
        g = (dev * (dev @ ctx.z)[:, None]).sum(axis=0)
        n = np.linalg.norm(g)
        if n > 0:
            g /= n
        ctx.z = (1 - t) * ctx.z + t * g
        n = np.linalg.norm(ctx.z)
        if n > 0:
            ctx.z /= n
        return 0
    return int(np.argmax(np.abs(x @ ctx.z)))
