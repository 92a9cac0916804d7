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
        # 6 x 8.03e9 x 4e6 FLOP over 64 H100 at 989e12 x 0.45
        self.assertAlmostEqual(d["compute_s"], 6 * 8.03e9 * 4e6 / (64 * 989e12 * 0.45),
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
        parallel only, no activation checkpointing): at the published MFU, dpas's 6PT compute
        time is within 15% of the published step (GlobalBatchSize(T) / Throughput(T/s)). The
        gap is attention's FLOPs, which their MFU counts (12 x layers x d_model x seq per token)
        and 6PT does not. Rows: params, GPUs, tokens per step, MFU %, tokens/s."""
        published = [(6658859008, 8, 98304, 46.44, 85144),      # 7b, seq 2048
                     (1315950592, 64, 2621440, 40.85, 2841754),  # 1b, seq 2048
                     (2651837440, 64, 2359296, 40.8, 1441663),   # 3b, seq 2048
                     (12853954560, 64, 262144, 39.86, 307209),   # 13b, seq 2048
                     (64862437376, 64, 4194304, 42.57, 66523)]   # 70b, seq 2048 (checkpointing)
        for params, gpus, tokens, mfu, tps in published:
            d = dpas.step(parameters=params, fleet="Lab_64_H100", nodes=gpus // 8,
                          dp_degree=gpus, gradient_bytes_per_param="bf16",
                          checkpoint_bytes_per_param="16B", tokens=tokens, mfu=mfu / 100,
                          zero=3, rule="mean", schedule="allreduce")
            step = tokens / tps
            self.assertLess(abs(d["compute_s"] / step - 1), 0.15, (params, d["compute_s"], step))

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
