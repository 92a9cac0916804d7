# SPDX-License-Identifier: Apache-2.0
"""Plot tests. Usage: python3 check_plots.py DPAS PNGCHECK CASE ('list' prints the cases)
  svg_golden    a tiny sweep plot equals tests/plot/tiny_expected.svg, written by hand
  svg_geometry  the bytes-per-worker plot: valid XML (xmllint), three series of ten points at the
                x and y positions computed here from the axes' definition, the same bytes twice
  svg_render    rsvg-convert renders it to a non-blank 800 x 500 PNG
  png_cairo     dpas's own PNG (cairo) is 800 x 500 and not blank"""
import math
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
NS = "{http://www.w3.org/2000/svg}"


def sweep(dpas, out, extra):
    args = [dpas, "sweep"] + extra + ["--plot", out, "-o", "csv", "--no-chart"]
    p = subprocess.run(args, capture_output=True, text=True)
    assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p


BYTES = ["ReferenceJobAttackSurface", "--dp", "2..1024", "--schedule", "allreduce,allgather,sharded",
         "--attr", "bytes_per_worker"]


def main():
    dpas, pngcheck, case = sys.argv[1], sys.argv[2], sys.argv[3]
    cases = ["svg_golden", "svg_geometry", "svg_render", "png_cairo"]
    if case == "list":
        print(";".join(cases))
        return 0
    with tempfile.TemporaryDirectory() as d:
        if case == "svg_golden":
            out = os.path.join(d, "tiny.svg")
            sweep(dpas, out, ["--params", "1e9", "--nodes", "1", "--accelerators-per-node", "4", "--grad",
                              "bf16", "--ckpt", "14B", "--dp", "2,4", "--attr", "gather_factor"])
            want = open(os.path.join(HERE, "tiny_expected.svg")).read()
            got = open(out).read()
            if got != want:
                print("differs from tiny_expected.svg:\n" + got)
                return 1
            return 0
        out = os.path.join(d, "bytes.svg")
        sweep(dpas, out, BYTES)
        if case == "svg_geometry":
            subprocess.run(["xmllint", "--noout", out], check=True)
            root = ET.parse(out).getroot()
            lines = root.findall(f"{NS}polyline")
            assert len(lines) == 3, len(lines)
            # x: log2 axis from 2 to 1024 over [90, 780]; y: log10 axis from 1e11 to 1e15 over
            # [440, 50]: allreduce moves 2(N-1)/N x 350e9, allgather (N-1) x 350e9
            def x(n):
                return 90 + (math.log2(n) - 1) / 9 * 690

            def y(b):
                return 440 - (math.log10(b) - 11) / 4 * 390
            dps = [2 ** k for k in range(1, 11)]
            expect = {"#1f77b4": [2 * (n - 1) / n * 350e9 for n in dps],
                      "#d62728": [(n - 1) * 350e9 for n in dps],
                      "#2ca02c": [2 * (n - 1) / n * 350e9 for n in dps]}
            for pl in lines:
                pts = [tuple(map(float, p.split(","))) for p in pl.get("points").split()]
                want = expect[pl.get("stroke")]
                assert len(pts) == 10, len(pts)
                for (px, py), n, b in zip(pts, dps, want):
                    assert abs(px - x(n)) < 0.01 and abs(py - y(b)) < 0.01, (px, py, x(n), y(b))
            texts = [t.text for t in root.iter(f"{NS}text")]
            for label in ("100 GB", "1 TB", "10 TB", "100 TB", "1 PB", "2", "1024", "allgather"):
                assert label in texts, (label, texts)
            again = os.path.join(d, "again.svg")
            sweep(dpas, again, BYTES)
            assert open(out, "rb").read() == open(again, "rb").read(), "not deterministic"
            return 0
        if case == "svg_render":
            png = os.path.join(d, "bytes.png")
            subprocess.run(["rsvg-convert", out, "-o", png], check=True)
            return subprocess.run([pngcheck, png, "800", "500", "2000"]).returncode
        if case == "png_cairo":
            png = os.path.join(d, "time.png")
            sweep(dpas, png, ["--model", "GPT3", "--fleet", "Training_1K,Research_256", "--dp", "2..256",
                              "--grad", "bf16", "--ckpt", "14B", "--schedule", "allreduce", "--attr",
                              "time_flat_s"])
            return subprocess.run([pngcheck, png, "800", "500", "2000"]).returncode
    return 1


if __name__ == "__main__":
    sys.exit(main())
