# SPDX-License-Identifier: Apache-2.0
"""dpas calibrate recovers alpha and beta within 1% from nccl-tests output generated with known
values (scripts/gen_nccl_tests.py: exact alpha-beta times, printed to 0.01 us as nccl-tests does):
the alpha-beta line and the piecewise fit (one regime, since the data has one).
Usage: python3 calibrate_check.py DPAS GENERATOR"""
import json
import os
import subprocess
import sys
import tempfile

CASES = [("all_reduce", 8, 5e-6, 25e9, False), ("all_gather", 8, 5e-6, 25e9, False),
         ("all_reduce", 16, 3.7e-6, 41e9, False), ("all_gather", 32, 11e-6, 6.25e9, False),
         ("all_reduce", 4, 2e-5, 1.2e10, True)]


def main():
    dpas, gen = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        for coll, n, alpha, beta, csv in CASES:
            path = os.path.join(d, f"{coll}_{n}.{'csv' if csv else 'txt'}")
            with open(path, "w") as f:
                subprocess.run([sys.executable, gen, coll, str(n), str(alpha), str(beta)] +
                               (["--csv"] if csv else []), stdout=f, check=True)
            p = subprocess.run([dpas, "calibrate", path, "-o", "json"], capture_output=True, text=True)
            assert p.returncode == 0, (p.stdout, p.stderr)
            fits = json.loads(p.stdout)["fits"]
            assert [f["model"] for f in fits] == ["alpha_beta", "piecewise", "empirical", "nccl"], fits
            for fit in fits[:2]:
                assert fit["collective"] == coll and fit["ranks"] == n, fit
                for got, want, what in ((fit["alpha_s"], alpha, "alpha"),
                                        (fit["beta_bytes_per_s"], beta, "beta")):
                    if abs(got - want) > 0.01 * want:
                        print(f"{coll} n={n} {fit['model']}: {what} {got} vs {want}")
                        return 1
            assert fits[0]["r2"] > 0.9999, fits[0]
            assert len(fits[1]["regimes"]) == 1, fits[1]["regimes"]
    return 0


if __name__ == "__main__":
    sys.exit(main())
