# SPDX-License-Identifier: Apache-2.0
"""dpas.step: the step analysis from Python. The numbers are the library's (test_step.c checks
them by hand); here a hand check of the compute and the buckets, the consistency of Python's rows
with 'dpas step -o json' (two paths over one library: a consistency test), the types of the
keyword arguments and the errors."""
import json
import os
import subprocess
import unittest

import dpas

KEYS = dict(model="Llama3_8B", fleet="Lab_64_H100", dp_degree=64,
            gradient_bytes_per_param="bf16", checkpoint_bytes_per_param="14B")


class Step(unittest.TestCase):
    def test_compute_and_buckets_by_hand(self):
        d = dpas.step(tokens=4_000_000, mfu=0.45, rule=["median"], schedule="sharded", **KEYS)
        # (6 x 8.03e9 + 12 x 32 x 8192 x 4096) x 4e6 FLOP over 64 H100 at 989e12 x 0.45:
        # 6PT plus attention's 12 L s h per token (PaLM, Chowdhery et al. 2022, Appendix B)
        # for Llama 3 8B's 32 layers, hidden 4096 and sequence 8192
        per_token = 6 * 8.03e9 + 12 * 32 * 8192 * 4096
        self.assertAlmostEqual(d["attention_flops"], 12 * 32 * 8192 * 4096 * 4e6, delta=1e3)
        self.assertAlmostEqual(d["compute_s"], per_token * 4e6 / (64 * 989e12 * 0.45),
                               delta=1e-12)
        self.assertEqual(d["mfu_basis"], "given")
        # 16.06e9 B of bf16 gradients in buckets of 25 MiB = 13107200 parameters: 613
        self.assertEqual(d["bucket_parameters"], 13107200)
        self.assertEqual(d["buckets"], -(-8_030_000_000 // 13107200))
        (row,) = d["rows"]
        # the sharded schedule sends 2(N-1)/N x G = 126/64 x 16.06e9 B, exact
        self.assertEqual(row["bytes_per_worker"], 16_060_000_000 * 126 // 64)
        self.assertGreater(row["share"], 0)

    def test_same_rows_as_the_cli(self):  # a consistency test
        cli = os.environ.get("DPAS_CLI", "dpas")
        out = subprocess.run([cli, "step", "--model", "Llama3_8B", "--fleet", "Lab_64_H100",
                              "--dp", "64", "--grad", "bf16", "--ckpt", "14B", "--tokens", "4M",
                              "--rule", "krum,median", "--zero",
                              "3", "-o", "json"], check=True, capture_output=True, text=True)
        want = json.loads(out.stdout)
        got = dpas.scenario(**KEYS).step(tokens="4M", rule=["krum", "median"], zero=3)
        want["scenario"] = got["scenario"]  # a scenario object has no label here either way
        self.assertEqual(got, want)

    def test_global_batch_and_sequence(self):
        a = dpas.step(tokens=2048 * 1024, **KEYS)
        b = dpas.step(global_batch=1024, sequence=2048, **KEYS)
        self.assertEqual(a["tokens"], b["tokens"])
        self.assertEqual(a["mfu_basis"], "assumed")

    def test_published_step_times(self):
        """Compute time against MosaicML's published MPT benchmarks (llm-foundry,
        scripts/train/benchmarking/README.md, table 'H100 80GB BF16'; FSDP FULL_SHARD, data
        parallel only): at the published utilisation, dpas's compute time is within 15% of the
        published step (GlobalBatchSize(T) / Throughput(T/s)). Four rows ran without activation
        checkpointing: 6PT at the published MFU. The 70b ran with it (the table's 'Activation
        Checkpointing' True): recompute='full', 8PT, at the published HFU, which counts the
        recomputed forward as 8PT does (56.76% = 4/3 x its MFU 42.57%). The gap is attention's
        FLOPs, which their MFU counts (12 x layers x d_model x seq per token) and 6PT does not.
        Rows: params, GPUs, tokens per step, MFU or HFU %, tokens/s, activation checkpointing."""
        published = [(6658859008, 8, 98304, 46.44, 85144, False),      # 7b, seq 2048
                     (1315950592, 64, 2621440, 40.85, 2841754, False),  # 1b, seq 2048
                     (2651837440, 64, 2359296, 40.8, 1441663, False),   # 3b, seq 2048
                     (12853954560, 64, 262144, 39.86, 307209, False),   # 13b, seq 2048
                     (64862437376, 64, 4194304, 56.76, 66523, True)]    # 70b, seq 2048: HFU
        for params, gpus, tokens, util, tps, ckpt in published:
            d = dpas.step(parameters=params, fleet="Lab_64_H100", nodes=gpus // 8,
                          dp_degree=gpus, gradient_bytes_per_param="bf16",
                          checkpoint_bytes_per_param="16B", tokens=tokens, mfu=util / 100,
                          zero=3, rule="mean", schedule="allreduce",
                          **({"recompute": "full"} if ckpt else {}))
            self.assertEqual(d["flops_factor"], 8 if ckpt else 6)
            step = tokens / tps
            self.assertLess(abs(d["compute_s"] / step - 1), 0.15, (params, d["compute_s"], step))

    def test_megatron_weak_scaling(self):
        """Compute time against Megatron-LM's weak-scaling table (Narayanan et al., "Efficient
        Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC 2021, Table 1:
        GPT models on A100, sequence 2048, vocabulary 51200, full activation recomputation).
        The published iteration time is the paper's FLOPs per iteration (Eq. 3, recomputation
        counted: 96 B s l h^2 (1 + s/(6h) + V/(16 l h))) over GPUs x the achieved TFLOP/s per
        GPU; dpas is given that throughput over A100's 312 TFLOP/s as its MFU and
        recompute=full (8PT). The parameters are the paper's Eq. 2 (12 l h^2 (1 + 13/(12h) +
        (V + s)/(12 l h)), which rounds to the table's counts). Rows: heads, hidden, layers,
        tensor-parallel, pipeline-parallel, GPUs, batch, TFLOP/s per GPU."""
        table = [(24, 2304, 24, 1, 1, 32, 512, 137), (32, 3072, 30, 2, 1, 64, 512, 138),
                 (32, 4096, 36, 4, 1, 128, 512, 142), (48, 6144, 40, 8, 1, 256, 1024, 135),
                 (64, 8192, 48, 8, 2, 512, 1536, 138), (80, 10240, 60, 8, 4, 1024, 1792, 140),
                 (96, 12288, 80, 8, 8, 1536, 2304, 148), (128, 16384, 96, 8, 16, 1920, 2160, 155),
                 (128, 20480, 105, 8, 35, 2520, 2520, 163),
                 (160, 25600, 128, 8, 64, 3072, 3072, 163)]
        V, s = 51200, 2048
        for a, h, l, t, p, gpus, B, tflops in table:
            params = round(12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h)))
            flops = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
            published = flops / (gpus * tflops * 1e12)
            d = dpas.step(parameters=params, fleet="Training_1K_A100", nodes=gpus // 8,
                          dp_degree=gpus // (t * p), gradient_bytes_per_param="bf16",
                          checkpoint_bytes_per_param="16B", global_batch=B, sequence=s,
                          mfu=tflops / 312, recompute="full", rule="mean",
                          schedule="allreduce")
            self.assertEqual(d["flops_factor"], 8)
            self.assertLess(abs(d["compute_s"] / published - 1), 0.15,
                            (h, l, d["compute_s"], published))

    def test_where_it_fits_holds_when_run(self):  # a consistency test: our own paths
        """Issue 32: every 'it fits ...' the step and memory answers suggest is run as the
        command it implies, and fits; the next one does not. The cases: the step's micro-batch
        defaulted (the replica's share of the tokens, which moves with dp_degree), given, and a
        memory check with a dp_degree that does not divide the fleet (1024 H100s over 120
        replicas: 56 have 8, 64 have 9; the state must fit the 8)."""
        def mem_step(**k):
            return dpas.step(rule="mean", schedule="allreduce", **k)["memory"]

        def mem_check(**k):
            return dpas.memory(**k).as_dict()

        base = dict(KEYS, tokens="4M")
        cases = [(mem_step, dict(base, recompute="full")),
                 (mem_step, dict(base, recompute="full", micro_batch=1)),
                 (mem_step, dict(base, recompute="selective", zero=3)),
                 (mem_check, dict(scenario="ReferenceJobAttackSurface", zero=1, dp_degree=120)),
                 (mem_check, dict(scenario="ReferenceJobAttackSurface", zero=2, dp_degree=120)),
                 (mem_check, dict(model="GPT3", fleet="Training_1K_A100", dp_degree=128,
                                  gradient_bytes_per_param="bf16",
                                  checkpoint_bytes_per_param="14B", zero=1, micro_batch=1))]
        for run, keys in cases:
            m = run(**keys)
            fleet_acc = 1024 if "scenario" in keys or keys.get("fleet") == "Training_1K_A100" else 64
            x = m["largest_dp_degree_that_fits"]
            if x is not None:
                for n in range(1, x + 1):  # 'at dp_degree <= x': every one of them
                    self.assertTrue(run(**dict(keys, dp_degree=n))["fits"], (keys, n))
                if x < fleet_acc:
                    self.assertFalse(run(**dict(keys, dp_degree=x + 1))["fits"], (keys, x + 1))
            else:
                self.assertFalse(run(**dict(keys, dp_degree=1))["fits"], keys)
            z = m["smallest_zero_stage_that_fits"]
            if z is not None and z > keys.get("zero", 0):
                self.assertTrue(run(**dict(keys, zero=z))["fits"], (keys, z))
                self.assertFalse(run(**dict(keys, zero=z - 1))["fits"], (keys, z - 1))
            d, nodes = m["smallest_dp_degree_that_fits"], m["smallest_nodes_that_fits"]
            if d is not None:
                k = m["accelerators_per_replica"]
                self.assertEqual(k, int(k))
                self.assertEqual(d * k, nodes * 8)  # whole nodes of 8
                self.assertTrue(run(**dict(keys, nodes=nodes, dp_degree=d))["fits"], (keys, d))
                # the whole-node fleet one step smaller, replicas of k still
                step = 8 // __import__("math").gcd(int(k), 8)
                if d > step:
                    smaller = dict(keys, nodes=(d - step) * int(k) // 8, dp_degree=d - step)
                    self.assertFalse(run(**smaller)["fits"], smaller)

    def test_memory_keys(self):
        # GPT-3 (Brown et al. Table 2.1: 96 layers, h 12288, 96 heads, s 2048), one sequence,
        # selective recomputation: 34sbh x 96 = 34 x 2048 x 12288 x 96 B (Korthikanti et al.)
        m = dpas.memory(model="GPT3", fleet="Training_1K_A100", dp_degree=128,
                        gradient_bytes_per_param="2 B", checkpoint_bytes_per_param="14 B",
                        zero=3, micro_batch=1, recompute="selective", optimizer="adam")
        self.assertEqual(m.activations_bytes.bytes, 34 * 2048 * 12288 * 96)
        self.assertEqual(m.total_bytes.bytes, 16 * 175 * 10**9 // 128 + 34 * 2048 * 12288 * 96)
        self.assertEqual(m.optimizer_bytes_per_param, 12)
        self.assertEqual(m.layers, 96)
        with self.assertRaises(dpas.InvalidValue):
            dpas.memory(model="GPT3", fleet="Training_1K_A100", dp_degree=128,
                        gradient_bytes_per_param="2 B", checkpoint_bytes_per_param="14 B",
                        stragglers="5%")

    def test_recompute_of_a_shapeless_workload(self):
        # a workload given by its parameters has no shape: recompute none states the default
        # (6PT: 6 x 8e9 x 4e6 over 64 H100 at 989e12 x 0.4), full adds the forward (8PT),
        # selective would change only the activations nobody counts, and is refused
        keys = dict(parameters="8e9", fleet="Lab_64_H100", dp_degree=64, tokens=4_000_000,
                    mfu=0.4, gradient_bytes_per_param="bf16", checkpoint_bytes_per_param="14B",
                    rule=["mean"], schedule="allreduce")
        self.assertAlmostEqual(dpas.step(recompute="none", **keys)["compute_s"],
                               6 * 8e9 * 4e6 / (64 * 989e12 * 0.4), delta=1e-12)
        self.assertAlmostEqual(dpas.step(recompute="full", **keys)["compute_s"],
                               8 * 8e9 * 4e6 / (64 * 989e12 * 0.4), delta=1e-12)
        with self.assertRaisesRegex(dpas.InvalidValue, "recompute counts the activations"):
            dpas.step(recompute="selective", **keys)

    def test_errors(self):
        with self.assertRaises(dpas.InvalidValue) as e:
            dpas.step(**KEYS)
        self.assertIn("tokens is required", str(e.exception))
        with self.assertRaises(dpas.InvalidValue):
            dpas.step(tokens=1000, mfu=1.5, **KEYS)
        with self.assertRaises(dpas.InvalidValue):
            dpas.step(tokens=1000, precision="fp8", **KEYS)
        with self.assertRaises(dpas.ArgumentTypeError):
            dpas.step(tokens=1000, mfu=True, **KEYS)


if __name__ == "__main__":
    unittest.main()
