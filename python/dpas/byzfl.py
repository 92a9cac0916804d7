# SPDX-License-Identifier: Apache-2.0
"""ByzFL's classes, by ByzFL's names and parameter names, on dpas's C kernels.

ByzFL (LPD-EPFL/byzfl) is the reference library of Byzantine-robust aggregators: its
aggregators are objects with parameters, called on the vectors (``TrMean(f=2)(vectors)``), its
pre-aggregators turn the vectors into other vectors, its attacks make the one vector Byzantine
clients send. This module has the same classes with the same parameters, so that switching is a
change of import; each calls dpas's kernels (dpas.aggregate, dpas.preaggregate, dpas.attack),
which read the vectors where they lie. The vectors are what dpas.aggregate takes: a 2-D numpy
array or torch CPU tensor, or a list of 1-D rows, float32 or float64; the result has the input's
kind and dtype, as ByzFL's does (ByzFL turns torch tensors into float32; dpas keeps float64).

Where dpas differs from ByzFL (docs/byzfl.md has the whole list):
  - A vector with a NaN or an Inf is Byzantine: it is left out and counted against f; more of
    them than f is an error (dpas.InvalidValue). The classes ByzFL gives no f (Average, Median,
    GeometricMedian, CenteredClipping, Clipping, Bucketing) take a keyword f=0 for that.
  - Every class also takes the keywords threads= and workspace= of dpas.aggregate.
  - Integers are ints, reals are ints or floats (ByzFL wants floats), bools are neither.
  - float16 and bfloat16 vectors (numpy, torch, or lists of them) are computed in float32 (one
    copy) and the result is returned in their dtype (aggregators and pre-aggregators; the
    GeometricMedian/CenteredClipping start and the attacks take float32/float64 only).
  - The rules' own differences: see each class.

    >>> import numpy as np
    >>> from dpas import byzfl
    >>> x = np.array([[1., 2., 3.], [4., 5., 6.], [7., 8., 9.]])
    >>> byzfl.TrMean(f=1)(x)
    array([4., 5., 6.])
    >>> byzfl.GeometricMedian()(x)
    array([3.78788764, 4.78788764, 5.78788764])
    >>> byzfl.MoNNA(f=1)(x)
    array([2.5, 3.5, 4.5])
"""
import numbers

from . import kernels as _k
from .errors import ArgumentTypeError, InvalidValue

__all__ = ["Average", "Median", "TrMean", "GeometricMedian", "Krum", "MultiKrum",
           "CenteredClipping", "MDA", "MoNNA", "Meamed", "CAF", "SMEA", "NNM", "Bucketing",
           "ARC", "Clipping", "SignFlipping", "InnerProductManipulation", "ALittleIsEnough",
           "Optimal_InnerProductManipulation", "Optimal_ALittleIsEnough", "Mimic", "Gaussian",
           "Inf", "LabelFlipping", "AdaptiveClipping"]


def _real(field, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ArgumentTypeError(f"{field} must be a number, got {type(v).__name__} {v!r}", field)
    return float(v)


def _extras(extras):
    for key in extras:
        if key not in ("threads", "workspace"):
            raise ArgumentTypeError(f"unexpected keyword argument {key!r}: dpas adds only f, "
                                    f"threads and workspace to ByzFL's parameters", key)
    return dict(extras)


def _half(vectors):
    """float16 / bfloat16 vectors as float32, and the way back (dpas.kernels._half)."""
    return _k._half(vectors, "vectors")


class _Aggregator:
    """An aggregator: __call__(vectors) -> the aggregate, one vector of the input's kind."""
    rule = ""
    convention = None

    def __init__(self, f=0, **extras):
        self.f = _k._int("f", f, minimum=0)
        self._extras = _extras(extras)

    def _options(self):
        return {}

    def _options_for(self, numpy, rows):
        """Every option of the rule as this aggregator runs it on rows (the optimal attacks
        evaluate it with them)."""
        return self._options()

    def _constant(self):
        """True when the aggregate does not depend on the vectors (GeometricMedian with T = 0)."""
        return False

    def _prepared(self, options):
        """The rule with this object's parameters, built once (and again if they change)."""
        key = (self.f, repr(options))
        prep = self.__dict__.get("_prep")
        if prep is None or prep[0] != key:
            prep = self._prep = (key, _k._Prepared("aggregate", self.rule, self.f, self.convention,
                                                   self._extras.get("threads", 1),
                                                   self._extras.get("workspace"), options))
        return prep[1]

    weighted = False  # has a weighted form (dpas_agg_opts.weights): Average, Median, GeometricMedian

    def _check_weights(self, weights):
        if weights is not None and not self.weighted:
            raise InvalidValue(f"{type(self).__name__} has no weighted form (weights apply to "
                               f"Average, Median and GeometricMedian): a rule defined by counts "
                               f"of vectors does not keep its guarantee with weights a client "
                               f"declares; give weights=None", "weights")

    def __call__(self, vectors, weights=None):
        """weights (dpas, not ByzFL): one per vector, for Average, Median and GeometricMedian."""
        self._check_weights(weights)
        vectors, back = _half(vectors)
        if weights is None:
            out = self._prepared(self._options())(vectors)
        else:
            out = _k.aggregate(self.rule, vectors, self.f, convention=self.convention,
                               weights=weights, **self._options(), **self._extras)
        return back(out) if back else out

    def __repr__(self):
        return f"dpas.byzfl.{type(self).__name__}(f={self.f})"


class Average(_Aggregator):
    """The mean of the vectors. (ByzFL's Average; dpas: the rule mean, summed in double.) The
    keyword f (default 0) is how many non-finite vectors to leave out; the mean tolerates no
    Byzantine vector (Blanchard et al., NeurIPS 2017)."""
    rule = "mean"
    weighted = True


class Median(_Aggregator):
    """The coordinate-wise median (Yin et al., ICML 2018); for an even count, the mean of the
    two middle values. ByzFL's Median takes no f; here the keyword f (default 0) bounds the
    non-finite vectors left out (dpas needs 2f < n)."""
    rule = "median"
    weighted = True


class TrMean(_Aggregator):
    """The coordinate-wise trimmed mean: drop the f largest and the f smallest values of each
    coordinate, average the rest (Yin et al., ICML 2018). ByzFL: the same, 2f < n."""
    rule = "trimmed_mean"


class Meamed(_Aggregator):
    """Per coordinate, the mean of the n - f values closest to the median (Xie et al. 2018,
    Phocas/Meamed). dpas's tie rule: of two values equally far from the median, the one below
    it first (ByzFL's argsort takes whichever it meets)."""
    rule = "meamed"


class Krum(_Aggregator):
    """Krum (Blanchard et al., NeurIPS 2017) in ByzFL's convention: the vector with the least sum
    of squared distances to its n - f - 1 nearest others, 2f < n (dpas.aggregate's default
    convention is the paper's: n - f - 2, n >= 2f + 3). Ties: the lower index."""
    rule = "krum"
    convention = "byzfl"


class MultiKrum(_Aggregator):
    """Multi-Krum (El Mhamdi et al., ICML 2018) in ByzFL's convention: the mean of the n - f
    vectors of least Krum score (n - f - 1 neighbours), 2f < n."""
    rule = "multi_krum"
    convention = "byzfl"


class MDA(_Aggregator):
    """Minimum diameter averaging (El Mhamdi et al., Garfield; ByzFL's MDA): the mean of the
    n - f vectors of least diameter, every subset examined (dpas: up to 10^7 subsets,
    DPAS_BRUTE_MAX_SUBSETS; ties: the first subset in lexicographic order)."""
    rule = "brute"


class MoNNA(_Aggregator):
    """MoNNA (Farhadkhani et al., ICML 2023): the mean of the n - f vectors nearest to vector
    idx (a trusted one), itself included; 2f < n. dpas computes the n distances to vector idx
    only (O(nd)); ties: the lower index. Vector idx with a NaN or an Inf is an error."""
    rule = "monna"

    def __init__(self, f=0, idx=0, **extras):
        super().__init__(f, **extras)
        self.idx = _k._int("idx", idx, minimum=0)

    def _options(self):
        return {"idx": self.idx}


class CAF(_Aggregator):
    """The covariance-bound agnostic filter (Allouah, Guerraoui and Stephan, ICML 2025): from
    weights 1, while they sum to more than n - 2f, the weights are cut along the top eigenvector
    of the weighted covariance; the weighted mean of least top eigenvalue. dpas computes the
    eigenpairs exactly from the n x n distances (ByzFL: one power iteration from a random
    vector), takes the largest projection among the vectors still weighted (ByzFL: among all),
    and returns the mean for f = 0 (ByzFL: None)."""
    rule = "caf"


class SMEA(_Aggregator):
    """Smallest maximum eigenvalue averaging (Allouah et al., ICML 2023): the mean of the n - f
    vectors whose covariance has the least top eigenvalue, every subset examined in
    lexicographic order (ties: the first). dpas computes each eigenvalue exactly from the
    distances (ByzFL: one power iteration from a random vector) and examines at most 200000
    subsets."""
    rule = "smea"


class GeometricMedian(_Aggregator):
    """The smoothed Weiszfeld algorithm (Weiszfeld 1937; Pillutla et al., IEEE TSP 2022) as
    ByzFL runs it: from 0, T iterations of weights 1 / max(nu, ||z - x_i||). dpas runs the same
    iterations (it would stop early only at a fixed point); its own geometric_median starts from
    the coordinate-wise median and stops on a tolerance instead. ByzFL leaves out only the
    vectors with an Inf; dpas leaves out NaN too, up to the keyword f (default 0)."""
    rule = "geometric_median"
    weighted = True

    def __init__(self, nu=0.1, T=3, *, f=0, **extras):
        super().__init__(f, **extras)
        self.nu = _real("nu", nu)
        if not self.nu > 0:
            raise InvalidValue(f"nu must be > 0, got {nu!r}", "nu")
        self.T = _k._int("T", T, minimum=0)

    def _constant(self):
        return self.T == 0  # ByzFL returns its start, 0, whatever the vectors

    def _options_for(self, numpy, rows):
        return {"start": numpy.zeros(rows.d, rows.dtype), "iterations": self.T,
                "smoothing": self.nu, "tolerance": 1e-300}

    def __call__(self, vectors, weights=None):
        """weights (dpas, not ByzFL): one per vector, the weighted geometric median (RFA's
        alpha_i)."""
        vectors, back = _half(vectors)  # float16 / bfloat16: computed in float32
        w = {} if weights is None else {"weights": weights}
        if self.T == 0:
            out = _k.aggregate("mean", vectors, self.f, **w, **self._extras) * 0
        else:
            import numpy
            rows = _k._rows.rows(numpy, "vectors", vectors)
            out = _k.aggregate(self.rule, vectors, self.f, **self._options_for(numpy, rows),
                               **w, **self._extras)
        return back(out) if back else out


class CenteredClipping(_Aggregator):
    """Centered clipping (Karimireddy, He and Jaggi, ICML 2021) as ByzFL runs it: from m (0 by
    default), L times v += mean_i((x_i - v) min(1, tau / ||x_i - v||)); stateful: the next call
    starts from this call's result. (ByzFL's check on m refuses every m given; dpas takes a
    numpy array or tensor of d values.) dpas's own centered_clipping starts from the
    coordinate-wise median with tau the median distance. The keyword f (default 0) bounds the
    non-finite vectors left out."""
    rule = "centered_clipping"

    def __init__(self, m=None, L=1, tau=100.0, *, f=0, **extras):
        super().__init__(f, **extras)
        self.m = m
        self.L = _k._int("L", L, minimum=0)
        self.tau = _real("tau", tau)
        if not self.tau >= 0:
            raise InvalidValue(f"tau must be >= 0, got {tau!r}", "tau")

    def _constant(self):
        return self.L == 0 or self.tau == 0  # nothing moves v: ByzFL returns m

    def _options_for(self, numpy, rows):
        start = self.m if self.m is not None else numpy.zeros(rows.d, rows.dtype)
        return {"start": start, "iterations": self.L, "tau": self.tau}

    def __call__(self, vectors):
        import numpy
        vectors, back = _half(vectors)  # float16 / bfloat16: computed (and m kept) in float32
        rows = _k._rows.rows(numpy, "vectors", vectors)
        options = self._options_for(numpy, rows)
        if self._constant():
            out = rows.result(_k._rows.vector(numpy, "m", options["start"], rows.dtype,
                                              rows.d).copy())
        else:
            out = _k.aggregate(self.rule, vectors, self.f, **options, **self._extras)
        self.m = out
        return back(out) if back else out


# ---- pre-aggregators ------------------------------------------------------------------------

class _Pre:
    """A pre-aggregator: __call__(vectors) -> vectors of the input's kind. inplace=True (dpas,
    not ByzFL's keyword; ByzFL's Clipping and ARC scale their input in place): the result is
    written over vectors (float32/float64) and returned as a view of them."""
    name = ""

    def __init__(self, f=0, **extras):
        self.f = _k._int("f", f, minimum=0)
        inplace = extras.pop("inplace", False)
        if inplace is not True and inplace is not False:
            raise ArgumentTypeError(f"inplace must be True or False, got {inplace!r:.80}",
                                    "inplace")
        self.inplace = inplace
        self._extras = _extras(extras)

    def _entry(self):
        return self.name

    def _prepared(self, entry):
        key = (self.f, repr(entry))
        prep = self.__dict__.get("_prep")
        if prep is None or prep[0] != key:
            prep = self._prep = (key, _k._Prepared("preaggregate", [entry], self.f, None,
                                                   self._extras.get("threads", 1),
                                                   self._extras.get("workspace"), {}))
        return prep[1]

    def __call__(self, vectors):
        if self.inplace:  # float16/bfloat16 are refused there (a float32 copy is not in place)
            return self._prepared(self._entry())(vectors, inplace=True)
        vectors, back = _half(vectors)
        out = self._prepared(self._entry())(vectors)
        return back(out) if back else out


class _OwnF(_Pre):
    """A pre-aggregator with ByzFL's own f: it runs with it whatever f the aggregator after it
    has (NNM(f=2) before Average)."""

    def _entry(self):
        return (self.name, {"f": self.f})


class NNM(_OwnF):
    """Nearest neighbour mixing (Allouah et al., AISTATS 2023): each vector becomes the mean of
    its n - f nearest, itself included. dpas needs 2f < n (the paper's; ByzFL checks f < n);
    ties: the lower index. A non-finite vector comes out as NaN (and counts against f again in
    the aggregator after it)."""
    name = "nnm"


class ARC(_OwnF):
    """Adaptive robust clipping (Allouah et al., 2024, arXiv:2405.14432): the
    floor(2 f (n - f) / n) largest vectors clipped to the norm of the next largest. dpas counts
    them in integers (ByzFL in floating point) and needs 2f < n (ByzFL: f <= n)."""
    name = "arc"


class Clipping(_Pre):
    """Static clipping (ByzFL's Clipping): each vector with a norm above c scaled to norm c.
    dpas needs c > 0 (c = 0 would send every vector to 0) and does not change the vectors it is
    given (ByzFL clips them in place)."""
    name = "clipping"

    def __init__(self, c=2.0, *, f=0, **extras):
        super().__init__(f, **extras)
        self.c = _real("c", c)
        if not self.c > 0:
            raise InvalidValue(f"c must be > 0, got {c!r}", "c")

    def _entry(self):
        return ("clipping", {"c": self.c})


class Bucketing(_Pre):
    """Bucketing (Karimireddy, He and Jaggi, ICLR 2022): the vectors in a random order, cut into
    buckets of s, each averaged (the last one may be shorter). The order comes from seed; with
    seed=None (the default) a seed is drawn from numpy's global generator, so numpy.random.seed
    makes it reproducible as it does ByzFL's. An aggregator after it counts f Byzantine buckets
    at most."""
    name = "bucketing"

    def __init__(self, s=1, *, seed=None, f=0, **extras):
        super().__init__(f, **extras)
        self.s = _k._int("s", s, minimum=1)
        self.seed = None if seed is None else _k._int("seed", seed, minimum=0, maximum=2**64 - 1)

    def _entry(self):
        seed = self.seed
        if seed is None:
            import numpy
            seed = int(numpy.random.randint(0, 2**63 - 1, dtype=numpy.int64))
        return ("bucketing", {"s": self.s, "seed": seed})

    def __call__(self, vectors):
        entry = self._entry()
        prep = self._prepared(("bucketing", {"s": self.s, "seed": 0}))
        if prep.fast:
            prep.pre[0].seed = entry[1]["seed"]  # the one field that changes per call
            prep.rule = [entry]  # what the fallback path is given
        vectors, back = _half(vectors)
        out = prep(vectors)
        return back(out) if back else out


class AdaptiveClipping(_Pre):
    """Quantile-adaptive clipping (Andrew, Thakkar et al. 2021, arXiv:1905.03871), as TFF's
    robust_aggregator applies it, without noise: each call clips the vectors to norm c (as
    Clipping(c)), then moves c geometrically toward the target quantile of this call's norms,
    c <- c exp(-learning_rate (b - target_quantile)), b the fraction of vectors whose norm was
    <= c (TFF's geometric update; a rate r changes c by at most a factor exp(r)). Stateful, as
    TFF's estimation process: c is the next call's threshold. Defaults: the paper's recommended
    target_quantile 0.5 and learning_rate 0.2; initial is TFF's initial estimate. Not a ByzFL
    class."""
    name = "clipping"

    def __init__(self, initial=1.0, target_quantile=0.5, learning_rate=0.2, *, f=0, **extras):
        super().__init__(f, **extras)
        self.c = _real("initial", initial)
        if not 0 < self.c < float("inf"):
            raise InvalidValue(f"initial must be finite and > 0, got {initial!r}", "initial")
        self.target_quantile = _real("target_quantile", target_quantile)
        if not 0 <= self.target_quantile <= 1:
            raise InvalidValue(f"target_quantile must lie in [0, 1], got {target_quantile!r}",
                               "target_quantile")
        self.learning_rate = _real("learning_rate", learning_rate)
        if not 0 <= self.learning_rate < float("inf"):
            raise InvalidValue(f"learning_rate must be finite and >= 0, got {learning_rate!r}",
                               "learning_rate")

    def _entry(self):
        return ("clipping", {"c": self.c})

    def __call__(self, vectors):
        import math
        import numpy
        out = super().__call__(vectors)
        m = _half(vectors)[0]
        rows = m if hasattr(m, "shape") and not _k._rows._is_tensor(m) else None
        if rows is None:  # a tensor or a list of rows: their norms one by one
            norms = [float(numpy.linalg.norm(numpy.asarray(
                r.detach().double().numpy() if _k._rows._is_tensor(r) else r, dtype=float)))
                for r in (m if isinstance(m, (list, tuple)) else m.unbind(0))]
        else:
            norms = [float(numpy.linalg.norm(numpy.asarray(r, dtype=float))) for r in rows]
        finite = [v for v in norms if math.isfinite(v)]
        if finite:
            below = sum(v <= self.c for v in finite) / len(finite)
            # the geometric update in log space, held within the positive finite doubles: a
            # large learning rate saturates at the largest or the smallest positive bound
            # instead of overflowing math.exp (or staying put when it underflowed to 0)
            step = -self.learning_rate * (below - self.target_quantile)
            lc = math.log(self.c) + step
            self.c = math.exp(min(max(lc, -708.0), 709.0))
        return out


# ---- attacks --------------------------------------------------------------------------------

def _no_extras(cls, extras):
    """An attack's keyword arguments beyond ByzFL's: an ArgumentTypeError naming them (a bare
    TypeError from Python's signature check is not the binding's error class)."""
    for key in extras:
        raise ArgumentTypeError(f"{cls.__name__}() got an unexpected keyword argument {key!r}",
                                key)


class _Attack:
    """An attack: __call__(honest_vectors) -> the one vector the Byzantine clients send."""
    name = ""

    def __init__(self, **extras):
        _no_extras(type(self), extras)

    def _parameters(self):
        return {}

    def _call(self, honest, **more):
        return _k.attack(self.name, honest, 1, **self._parameters(), **more)[0]

    def __call__(self, honest_vectors):
        return self._call(honest_vectors)


class SignFlipping(_Attack):
    """The opposite of the honest mean (Allen-Zhu et al., ICLR 2021; ByzFL's SignFlipping)."""
    name = "sign_flip"


class InnerProductManipulation(_Attack):
    """-tau times the honest mean (Xie, Koyejo and Gupta, UAI 2019); tau = 2 by default."""
    name = "ipm"

    def __init__(self, tau=2.0, **extras):
        _no_extras(type(self), extras)
        self.tau = _real("tau", tau)

    def _parameters(self):
        return {"epsilon": self.tau}


class ALittleIsEnough(_Attack):
    """The honest mean plus tau times the coordinate-wise standard deviation (with n - 1)
    (Baruch et al., NeurIPS 2019); tau = 1.5 by default as in ByzFL (dpas.attack's alie defaults
    to the paper's z_max)."""
    name = "alie"

    def __init__(self, tau=1.5, **extras):
        _no_extras(type(self), extras)
        self.tau = _real("tau", tau)

    def _parameters(self):
        return {"z": self.tau}


class _Optimal(_Attack):
    def __init__(self, agg=None, pre_agg_list=None, f=1, evals=20, start=0.0, delta=10.0,
                 ratio=0.8, **extras):
        _no_extras(type(self), extras)
        self.agg = Average() if agg is None else agg
        if not isinstance(self.agg, _Aggregator):
            raise ArgumentTypeError(f"agg must be a dpas.byzfl aggregator, got "
                                    f"{type(agg).__name__}", "agg")
        self.pre_agg_list = [Clipping()] if pre_agg_list is None else list(pre_agg_list)
        for p in self.pre_agg_list:
            if not isinstance(p, _Pre):
                raise ArgumentTypeError(f"pre_agg_list holds {type(p).__name__}, not a "
                                        f"dpas.byzfl pre-aggregator", "pre_agg_list")
        self.f = _k._int("f", f, minimum=0)
        self.evals = _k._int("evals", evals, minimum=1)
        self.start = _real("start", start)
        self.delta = _real("delta", delta)
        if self.delta == 0:
            raise InvalidValue("delta must not be 0", "delta")
        self.ratio = _real("ratio", ratio)
        if not 0.5 < self.ratio < 1:
            raise InvalidValue(f"ratio must lie strictly between 0.5 and 1, got {ratio!r}", "ratio")

    def __call__(self, honest_vectors):
        import numpy
        rows = _k._rows.rows(numpy, "honest_vectors", honest_vectors)
        if self.agg._constant():  # every factor does the same damage: ByzFL keeps start
            return _k.attack(self._plain, honest_vectors, 1, **{self._factor: self.start})[0]
        options = {"f": self.agg.f, **self.agg._options_for(numpy, rows)}
        if self.pre_agg_list:
            options["pre"] = [p._entry() for p in self.pre_agg_list]
        return _k.attack(self.name, honest_vectors, self.f, rule=self.agg.rule,
                         convention=self.agg.convention, rule_options=options,
                         evals=self.evals, start=self.start, delta=self.delta,
                         ratio=self.ratio)[0]


class Optimal_InnerProductManipulation(_Optimal):  # noqa: N801 (ByzFL's name)
    """InnerProductManipulation with the factor tau that hurts agg (after pre_agg_list) most:
    ByzFL's line search (an expansion from start by steps delta doubled while the distance of
    the aggregate from the honest mean grows, then steps shrunk by ratio), evals evaluations in
    all (Allouah et al., AISTATS 2023). Each evaluation is one run of dpas's kernels on the
    honest vectors and f copies of the Byzantine one, with agg's and each pre-aggregator's own
    parameters: NNM's and ARC's own f, GeometricMedian's nu, T and start 0, CenteredClipping's
    m, L and tau. An aggregator whose result does not depend on the vectors (GeometricMedian
    with T = 0) leaves every factor equal: the factor is start, as ByzFL's search keeps it.
    (ByzFL's CenteredClipping is stateful, so each of its evaluations starts where the last one
    ended; dpas evaluates every factor from agg's m as it was, and leaves agg unchanged.)"""
    name = "optimal_ipm"
    _plain, _factor = "ipm", "epsilon"


class Optimal_ALittleIsEnough(_Optimal):  # noqa: N801 (ByzFL's name)
    """ALittleIsEnough with the factor found by the same line search."""
    name = "optimal_alie"
    _plain, _factor = "alie", "z"


class Mimic(_Attack):
    """A copy of honest vector epsilon (Karimireddy, He and Jaggi, ICLR 2022)."""
    name = "mimic"

    def __init__(self, epsilon=0, **extras):
        _no_extras(type(self), extras)
        self.epsilon = _k._int("epsilon", epsilon, minimum=0)

    def _parameters(self):
        return {"epsilon": self.epsilon}


class Gaussian(_Attack):
    """A vector drawn from N(mu, sigma^2) per coordinate. The numbers come from seed (dpas's own
    generator); with seed=None a seed is drawn from numpy's global generator (ByzFL draws from
    numpy's or torch's)."""
    name = "gaussian"

    def __init__(self, mu=0.0, sigma=1.0, *, seed=None, **extras):
        _no_extras(type(self), extras)
        self.mu = _real("mu", mu)
        self.sigma = _real("sigma", sigma)
        if not self.sigma >= 0:
            raise InvalidValue(f"sigma must be >= 0, got {sigma!r}", "sigma")
        self.seed = None if seed is None else _k._int("seed", seed, minimum=0, maximum=2**64 - 1)

    def __call__(self, honest_vectors):
        seed = self.seed
        if seed is None:
            import numpy
            seed = int(numpy.random.randint(0, 2**63 - 1, dtype=numpy.int64))
        return self._call(honest_vectors, seed=seed, mu=self.mu, sigma=self.sigma)


class Inf(_Attack):
    """A vector of +Inf (ByzFL's Inf). dpas's aggregators leave it out as Byzantine."""
    name = "inf"


class LabelFlipping(_Attack):
    """ByzFL's LabelFlipping: the mean of the vectors it is given. In ByzFL's training loop those
    are the honest clients' gradients computed on flipped labels, y -> nb_labels - 1 - y
    (byzfl/fed_framework/client.py); flip_labels makes such labels for a loop of one's own. The
    mean is dpas's (summed in double); a vector with a NaN or an Inf is an error (f = 0)."""

    def __call__(self, vectors):
        return _k.aggregate("mean", vectors, 0)

    @staticmethod
    def flip_labels(targets, nb_labels):
        """nb_labels - 1 - targets, for a numpy array or torch tensor of integer labels in
        [0, nb_labels)."""
        nb = _k._int("nb_labels", nb_labels, minimum=1)
        kind = getattr(getattr(targets, "dtype", None), "is_floating_point", None)
        if kind is True or getattr(getattr(targets, "dtype", None), "kind", "i") not in "iu":
            raise ArgumentTypeError(f"targets must hold integer labels, got "
                                    f"{getattr(targets, 'dtype', type(targets).__name__)}",
                                    "targets")
        if len(targets) and (int(targets.min()) < 0 or int(targets.max()) >= nb):
            raise InvalidValue(f"targets must lie in [0, {nb}), got {int(targets.min())} to "
                               f"{int(targets.max())}", "targets")
        return (nb - 1) - targets
