# SPDX-License-Identifier: Apache-2.0
"""dpas's robust aggregators in Flower (flwr): a Strategy that aggregates the clients' updates
with a dpas.byzfl aggregator, and the per-layer helper it uses.

Flower's documented interface (flwr.server.strategy.Strategy): initialize_parameters,
configure_fit, aggregate_fit(server_round, results, failures) -> (Parameters or None, metrics),
configure_evaluate, aggregate_evaluate, evaluate; results is a list of (ClientProxy, FitRes), a
FitRes has .parameters (flwr.common.Parameters, whose layers flwr.common.parameters_to_ndarrays
gives as a list of numpy arrays, Flower's NDArrays) and .num_examples. RobustStrategy wraps a
strategy (FedAvg, say) and replaces its aggregate_fit: each client's layers are laid end to end
into one vector (the rules measure distances between whole models), the vectors go through the
pre-aggregators and the aggregator, and the result is cut back into the layers' shapes. Every
other method is the wrapped strategy's.

num_examples is used only with weighted=True, and only by Average (FedAvg's weighted mean),
Median (the weighted coordinate-wise median) and GeometricMedian (RFA's weighted geometric
median): the other robust rules are defined by counts of clients and have no weighted form that
keeps their guarantee (a client's declared weight would let one Byzantine client claim any
weight), and weighted=True with one of them is refused.

    >>> import numpy as np
    >>> from dpas import byzfl, flower
    >>> clients = [[np.array([[1., 2.]]), np.array([3.])],
    ...            [np.array([[2., 3.]]), np.array([4.])],
    ...            [np.array([[9e9, 0.]]), np.array([0.])]]
    >>> [layer.tolist() for layer in flower.aggregate_layers(byzfl.Median(), clients)]
    [[[2.0, 2.0]], [3.0]]
"""
from . import byzfl as _b
from .errors import ArgumentTypeError, InvalidValue

try:  # Flower, when it is installed: the base class and the conversions
    from flwr.server.strategy import Strategy as _Base
    from flwr.common import ndarrays_to_parameters as _to_parameters
    from flwr.common import parameters_to_ndarrays as _to_ndarrays
except ImportError:
    _Base, _to_parameters, _to_ndarrays = object, None, None

__all__ = ["aggregate_layers", "RobustStrategy"]


def aggregate_layers(aggregator, clients, pre_aggregators=(), weights=None):
    """The aggregate of the clients' models given as layers (a list per client of numpy arrays,
    Flower's NDArrays): every client the same number of layers of the same shapes; computed in
    float32, or float64 when a layer is float64 or integer (a counter such as batch norm's
    num_batches_tracked); a list of arrays of the layers' shapes and dtypes (integer layers
    rounded). weights (one number >= 0 per client, not all 0, e.g. Flower's num_examples): for
    Average, Median and GeometricMedian (without pre-aggregators), their weighted forms; the
    other rules have none in dpas, and are refused with weights."""
    import numpy
    if not isinstance(aggregator, _b._Aggregator):
        raise ArgumentTypeError(f"aggregator must be a dpas.byzfl aggregator, got "
                                f"{type(aggregator).__name__}", "aggregator")
    for p in pre_aggregators:
        if not isinstance(p, _b._Pre):
            raise ArgumentTypeError(f"pre_aggregators holds {type(p).__name__}, not a dpas.byzfl "
                                    f"pre-aggregator", "pre_aggregators")
    clients = [list(c) for c in clients]
    if not clients:
        raise InvalidValue("aggregate_layers needs at least one client's layers", "clients")
    shapes = [numpy.shape(a) for a in clients[0]]
    dtypes = [numpy.asarray(a).dtype for a in clients[0]]
    for i, c in enumerate(clients):
        got = [numpy.shape(a) for a in c]
        if got != shapes:
            raise InvalidValue(f"client {i} has layers of shapes {got}, client 0 {shapes}: every "
                               f"client must send the same model", "clients")
        # the same dtypes too: a float64 layer among float32 ones was cast to client 0's
        # dtype silently (contradictory inputs are an error naming both)
        for k, a in enumerate(c):
            dt = numpy.asarray(a).dtype
            if dt != dtypes[k]:
                raise InvalidValue(f"client {i}'s layer {k} is {dt}, client 0's {dtypes[k]}: every "
                                   f"client must send the same model (convert the layers to one "
                                   f"dtype)", "clients")
    for k, dt in enumerate(dtypes):
        if dt.kind not in "fiu":
            raise ArgumentTypeError(f"layer {k} must hold numbers, got {dt}", "clients")
    work = numpy.float64 if any(dt == numpy.float64 or dt.kind in "iu" for dt in dtypes) \
        else numpy.float32
    sizes = [int(numpy.prod(s)) for s in shapes]
    X = numpy.empty((len(clients), sum(sizes)), dtype=work)
    for i, c in enumerate(clients):
        at = 0
        for k, (a, size) in enumerate(zip(c, sizes)):
            a = numpy.asarray(a)
            # an integer layer goes through float64: exact to 2^53 only (2^64 - 1 came back 0)
            if a.dtype.kind in "iu" and a.size and \
                    max(abs(int(a.max())), abs(int(a.min()))) > 2 ** 53:
                raise InvalidValue(f"client {i}'s layer {k} ({a.dtype}) holds a value beyond "
                                   f"2^53 in magnitude: integer layers are aggregated in float64, "
                                   f"exact to 2^53 only", "clients")
            X[i, at:at + size] = a.astype(work).ravel()
            at += size
    if weights is not None:
        if not aggregator.weighted or pre_aggregators:
            raise InvalidValue(f"weights apply to Average, Median and GeometricMedian alone (the "
                               f"weighted mean, coordinate-wise median and geometric median); "
                               f"{type(aggregator).__name__}"
                               f"{' after pre-aggregators' if pre_aggregators else ''} has no "
                               f"weighted form in dpas: give weights=None", "weights")
        import numbers
        wl = list(weights) if isinstance(weights, (list, tuple)) or \
            isinstance(weights, numpy.ndarray) else None
        if wl is None or any(isinstance(x, (bool, numpy.bool_)) or
                             not isinstance(x, (numbers.Real, numpy.number)) for x in wl):
            # numpy would read "3" or True as a weight
            raise ArgumentTypeError(f"weights must be a list of {len(clients)} numbers, got "
                                    f"{weights!r:.80}", "weights")
        from .kernels import _weight
        w = numpy.asarray([_weight(i, x, type(aggregator).__name__)
                           for i, x in enumerate(wl)], dtype=numpy.float64)
        if w.shape != (len(clients),) or not numpy.isfinite(w).all() or (w < 0).any() or \
                not w.max() > 0:
            raise InvalidValue(f"weights must be {len(clients)} finite numbers >= 0, not all 0, "
                               f"got {weights!r:.200}", "weights")
        # the library's weighted rules scale the weights themselves (1e308 + 1e308 does not
        # overflow there; issue 29)
        v = aggregator(X, weights=w)  # a client with a NaN or Inf: left out, against f
    else:
        for p in pre_aggregators:
            X = p(X)
        v = aggregator(X)
    out, at = [], 0
    for s, size, dt in zip(shapes, sizes, dtypes):
        part = numpy.asarray(v[at:at + size]).reshape(s)
        out.append((numpy.rint(part) if dt.kind in "iu" else part).astype(dt))
        at += size
    return out


class RobustStrategy(_Base):
    """A Flower Strategy: `strategy`'s (FedAvg's, say) every method, but aggregate_fit with
    dpas: aggregate_layers(aggregator, the clients' layers, pre_aggregators). With failures and
    a strategy whose accept_failures is False, no aggregate (as FedAvg). to_ndarrays and
    from_ndarrays convert Parameters to layers and back (default: Flower's own
    parameters_to_ndarrays and ndarrays_to_parameters). weighted=True: the clients weighted by
    their num_examples (Average only)."""

    def __init__(self, strategy, aggregator, pre_aggregators=(), *, weighted=False,
                 to_ndarrays=None, from_ndarrays=None):
        self.strategy = strategy
        self.weighted = bool(weighted)
        self.aggregator = aggregator
        self.pre_aggregators = list(pre_aggregators)
        self.to_ndarrays = to_ndarrays or _to_ndarrays
        self.from_ndarrays = from_ndarrays or _to_parameters
        if self.to_ndarrays is None or self.from_ndarrays is None:
            raise ArgumentTypeError("Flower (flwr) is not installed: give to_ndarrays and "
                                    "from_ndarrays", "to_ndarrays")

    def initialize_parameters(self, client_manager):
        return self.strategy.initialize_parameters(client_manager)

    def configure_fit(self, server_round, parameters, client_manager):
        return self.strategy.configure_fit(server_round, parameters, client_manager)

    def configure_evaluate(self, server_round, parameters, client_manager):
        return self.strategy.configure_evaluate(server_round, parameters, client_manager)

    def aggregate_evaluate(self, server_round, results, failures):
        return self.strategy.aggregate_evaluate(server_round, results, failures)

    def evaluate(self, server_round, parameters):
        return self.strategy.evaluate(server_round, parameters)

    def aggregate_fit(self, server_round, results, failures):
        if not results:
            return None, {}
        if failures and not getattr(self.strategy, "accept_failures", True):
            return None, {}
        layers = [self.to_ndarrays(res.parameters) for _, res in results]
        weights = [res.num_examples for _, res in results] if self.weighted else None
        out = aggregate_layers(self.aggregator, layers, self.pre_aggregators, weights)
        return self.from_ndarrays(out), {}

    def __repr__(self):
        return (f"dpas.flower.RobustStrategy({self.strategy!r}, {self.aggregator!r}, "
                f"{self.pre_aggregators!r})")
