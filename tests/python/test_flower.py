# SPDX-License-Identifier: Apache-2.0
"""dpas.flower against Flower's documented Strategy interface (flwr.server.strategy.Strategy:
aggregate_fit(server_round, results, failures) -> (Parameters or None, metrics); a FitRes has
.parameters and .num_examples; flwr.common.parameters_to_ndarrays gives a model's layers).
Flower is not installed here: its Parameters, FitRes and a wrapped strategy are stand-ins with
those documented attributes. Expected values by hand.

Environment: PYTHONPATH names the python/ folder, DPAS_LIBRARY the built libdpas.so."""
import doctest
import unittest

try:
    import numpy as np
except ImportError:
    np = None


class Params:  # flwr.common.Parameters: the layers, here kept as they are
    def __init__(self, layers):
        self.layers = layers


class FitRes:  # flwr.common.FitRes's documented attributes
    def __init__(self, layers, num_examples):
        self.parameters, self.num_examples, self.metrics = Params(layers), num_examples, {}


class Inner:  # a strategy such as FedAvg
    accept_failures = True

    def configure_fit(self, server_round, parameters, client_manager):
        return [("client", server_round)]

    def evaluate(self, server_round, parameters):
        return 0.5, {"round": server_round}


@unittest.skipIf(np is None, "numpy is not installed for this python3")
class Strategy(unittest.TestCase):
    def strategy(self, agg, pre=()):
        from dpas import flower
        return flower.RobustStrategy(Inner(), agg, pre, to_ndarrays=lambda p: p.layers,
                                     from_ndarrays=Params)

    def results(self):
        # 5 clients, a model of two layers: a 2 x 2 weight and a bias; the last one Byzantine
        models = [[np.array([[1., 2.], [3., 4.]], np.float32), np.array([1.], np.float32)],
                  [np.array([[2., 3.], [4., 5.]], np.float32), np.array([2.], np.float32)],
                  [np.array([[3., 4.], [5., 6.]], np.float32), np.array([3.], np.float32)],
                  [np.array([[4., 5.], [6., 7.]], np.float32), np.array([4.], np.float32)],
                  [np.array([[1e9, -1e9], [1e9, 0.]], np.float32), np.array([-1e9], np.float32)]]
        return [(f"proxy{i}", FitRes(m, 10 * (i + 1))) for i, m in enumerate(models)]

    def test_aggregate_fit(self):
        from dpas import byzfl
        params, metrics = self.strategy(byzfl.TrMean(f=1)).aggregate_fit(1, self.results(), [])
        # by hand, per coordinate, the 3 middle values of 5: w00 of 1 2 3 4 1e9 -> (2+3+4)/3 = 3,
        # w01 of -1e9 2 3 4 5 -> 3, w10 of 3 4 5 6 1e9 -> 5, w11 of 0 4 5 6 7 -> 5; the bias of
        # -1e9 1 2 3 4 -> (1+2+3)/3 = 2
        w, b = params.layers
        self.assertEqual(w.dtype, np.float32)
        self.assertEqual(w.tolist(), [[3, 3], [5, 5]])
        self.assertEqual(b.tolist(), [2])
        self.assertEqual(metrics, {})
        # Krum on whole models: client 1's (the least squared distances to its 2 nearest)
        params, _ = self.strategy(byzfl.Krum(f=1)).aggregate_fit(1, self.results(), [])
        self.assertEqual(params.layers[0].tolist(), [[2, 3], [4, 5]])

    def test_delegates_and_failures(self):
        from dpas import byzfl
        s = self.strategy(byzfl.Median())
        self.assertEqual(s.configure_fit(3, None, None), [("client", 3)])
        self.assertEqual(s.evaluate(2, None), (0.5, {"round": 2}))
        self.assertEqual(s.aggregate_fit(1, [], []), (None, {}))
        s.strategy.accept_failures = False
        self.assertEqual(s.aggregate_fit(1, self.results(), [RuntimeError()]), (None, {}))

    def test_refusals(self):
        from dpas import byzfl, flower
        res = self.results()
        res[2][1].parameters.layers = res[2][1].parameters.layers[:1]
        with self.assertRaisesRegex(ValueError, "client 2 has layers of shapes"):
            self.strategy(byzfl.Median()).aggregate_fit(1, res, [])
        with self.assertRaisesRegex(TypeError, "aggregator must be a dpas.byzfl aggregator"):
            flower.aggregate_layers(len, [[np.ones(2)]])
        with self.assertRaisesRegex(ValueError, "1 gradient has a NaN or Inf"):
            flower.aggregate_layers(byzfl.Median(), [[np.ones(2)], [np.array([np.nan, 1])]])

    def test_weighted(self):
        from dpas import byzfl, flower
        s = flower.RobustStrategy(Inner(), byzfl.Average(), weighted=True,
                                  to_ndarrays=lambda p: p.layers, from_ndarrays=Params)
        res = self.results()[:2]  # num_examples 10 and 20
        params, _ = s.aggregate_fit(1, res, [])
        # by hand: (10 x [1, 2, 3, 4] + 20 x [2, 3, 4, 5]) / 30, bias (10 + 40) / 30
        want = [[(10 + 40) / 30, (20 + 60) / 30], [(30 + 80) / 30, (40 + 100) / 30]]
        for g, w in zip(params.layers[0].ravel().tolist(), sum(want, [])):
            self.assertAlmostEqual(g, w, places=6)
        self.assertAlmostEqual(params.layers[1].tolist()[0], 50 / 30, places=6)
        with self.assertRaisesRegex(ValueError, "TrMean has no weighted form in dpas"):
            flower.aggregate_layers(byzfl.TrMean(f=1), [[np.ones(2)]] * 3, weights=[1, 2, 3])
        with self.assertRaisesRegex(ValueError, "weights must be 2 finite numbers >= 0"):
            flower.aggregate_layers(byzfl.Average(), [[np.ones(2)]] * 2, weights=[1, -1])
        # the weighted median by hand: 1 (weight 3), 2, 3, 100: the running weight reaches half
        # of 6 at 1, so (1 + 2) / 2; the bias 5 (weight 3), 6, 7, 8: (5 + 6) / 2
        clients = [[np.array([v]), np.array([b])] for v, b in ((1., 5.), (2., 6.), (3., 7.),
                                                                (100., 8.))]
        got = flower.aggregate_layers(byzfl.Median(), clients, weights=[3, 1, 1, 1])
        self.assertEqual([g.tolist() for g in got], [[1.5], [5.5]])
        # integer weights are the clients repeated (a consistency test)
        rep = [clients[0]] * 3 + clients[1:]
        for agg in (byzfl.Median(), byzfl.GeometricMedian(T=50)):
            a = flower.aggregate_layers(agg, clients, weights=[3, 1, 1, 1])
            b = flower.aggregate_layers(agg, rep)
            for x, y in zip(a, b):
                self.assertTrue(np.allclose(x, y, rtol=1e-6), (agg, x, y))

    def test_weights_at_the_ends_of_a_double(self):
        # issue 29: two weights of 1e308 overflowed the sum to inf and the mean came out 0; by
        # hand, equal weights give the plain mean, however large or small
        from dpas import byzfl, flower
        c = [[np.array([1., 2.])], [np.array([3., 4.])]]
        for w in ([1e308, 1e308], [1.7e308, 1.7e308], [5e-324, 5e-324], [1e-320, 0]):
            with self.subTest(w=w):
                out = flower.aggregate_layers(byzfl.Average(), c, weights=w)[0].tolist()
                self.assertEqual(out, [1., 2.] if w[1] == 0 else [2., 3.])
        # a weight numpy would read from text or a bool is refused as a type
        for w in (["3", "1"], [True, 1], 5, {"a": 1}):
            with self.subTest(w=w):
                with self.assertRaisesRegex(TypeError, "weights must be a list of 2 numbers"):
                    flower.aggregate_layers(byzfl.Average(), c, weights=w)

    def test_clients_of_two_dtypes_refused(self):
        # issue 29: client 1's float64 layer among client 0's float32 ones was cast silently to
        # float32; contradictory inputs are an error naming both, in either order
        from dpas import byzfl, flower
        a, b = [np.ones(2, np.float32)], [np.zeros(2, np.float64)]
        for clients, want in (([a, b, a], "client 1's layer 0 is float64, client 0's float32"),
                              ([b, a, b], "client 1's layer 0 is float32, client 0's float64")):
            with self.assertRaisesRegex(ValueError, want):
                flower.aggregate_layers(byzfl.Median(), clients)

    def test_integer_layer(self):
        from dpas import byzfl, flower
        out = flower.aggregate_layers(byzfl.Median(), [[np.ones(2, np.float32), np.array(3)],
                                                       [np.zeros(2, np.float32), np.array(4)],
                                                       [np.ones(2, np.float32), np.array(8)]])
        self.assertEqual(out[0].dtype, np.float32)
        self.assertEqual(out[1].dtype, np.array(3).dtype)
        self.assertEqual(out[1].tolist(), 4)
        # an integer beyond 2^53 cannot go through float64 exactly: refused, never wrapped
        # (2^64 - 1 as uint64 came back 0; 2^60 + 1 came back 2^60)
        big = [[np.array([2 ** 64 - 1], np.uint64)], [np.array([2 ** 64 - 1], np.uint64)]]
        with self.assertRaisesRegex(ValueError, "beyond 2\\^53 in magnitude"):
            flower.aggregate_layers(byzfl.Average(), big)
        with self.assertRaisesRegex(ValueError, "client 0's layer 0"):
            flower.aggregate_layers(byzfl.Average(), [[np.array([2 ** 60 + 1])]] * 2)
        # 2^53 itself is exact
        got = flower.aggregate_layers(byzfl.Average(), [[np.array([2 ** 53])]] * 2)
        self.assertEqual(got[0].tolist(), [2 ** 53])

    def test_doc(self):
        import dpas.flower
        self.assertEqual(doctest.testmod(dpas.flower, verbose=False).failed, 0)


if __name__ == "__main__":
    unittest.main()
