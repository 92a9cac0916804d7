# SPDX-License-Identifier: Apache-2.0
"""Plot tests. Usage: python3 check_plots.py DPAS PNGCHECK CASE ('list' prints the cases)
  svg_golden    a tiny sweep plot equals tests/plot/tiny_expected.svg, written by hand
  svg_geometry  the bytes-per-worker plot: valid XML (xmllint), three series of ten points at the
                x and y positions computed here from the axes' definition, the same bytes twice
  svg_render    rsvg-convert renders it to a non-blank 800 x 500 PNG
  png_cairo     dpas's own PNG (cairo) is 800 x 500 and not blank
  pdf_f_facets  f on x with N = min_n(f) of each rule, rules as series, schedules as panels, to a
                PDF (pdfinfo: a page per schedule at the size asked; pdftotext: the titles, labels,
                legend and ticks) and its --data CSV (every number against min_n by hand)
  svg_zero      a series of zeros (mean's max_f) is drawn above the frame's bottom edge, at the
                position computed here, and named in the legend"""
import csv
import io
import math
import os
import re
import shutil
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
    cases = ["svg_golden", "svg_geometry", "svg_render", "png_cairo", "pdf_f_facets", "svg_zero"]
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
            # allreduce and sharded move the same bytes: the later is dashed and named
            for label in ("100 GB", "1 TB", "10 TB", "100 TB", "1 PB", "2", "1024", "allgather",
                          "sharded (same as allreduce)", "schedule"):
                assert label in texts, (label, texts)
            dashed = [pl.get("stroke") for pl in lines if pl.get("stroke-dasharray")]
            assert dashed == ["#2ca02c"], dashed
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
        if case == "pdf_f_facets":
            return pdf_f_facets(dpas, d)
        if case == "svg_zero":
            out = os.path.join(d, "zero.svg")
            sweep(dpas, out, ["ReferenceJobAttackSurface", "--dp", "3..11+2", "--rule", "mean,krum",
                              "--attr", "max_f"])
            root = ET.parse(out).getroot()
            lines = {pl.get("stroke"): [tuple(map(float, p.split(","))) for p in pl.get("points").split()]
                     for pl in root.findall(f"{NS}polyline")}
            # y: linear, ticks 0..4 (krum's max_f = (N - 3) / 2 reaches 4 at N = 11), the frame
            # from -0.04 x 4 below 0 to 4 over [440, 50]; x: linear, ticks 2..12 over [90, 780]
            def y(v):
                return 440 - (v + 0.16) / 4.16 * 390
            def x(n):
                return 90 + (n - 2) / 10 * 690
            dps = [3, 5, 7, 9, 11]
            want = {"#1f77b4": [0] * 5, "#d62728": [(n - 3) // 2 for n in dps]}
            assert set(lines) == set(want), lines
            for col, vals in want.items():
                assert len(lines[col]) == 5, lines[col]
                for (px, py), n, v in zip(lines[col], dps, vals):
                    assert abs(px - x(n)) < 0.01 and abs(py - y(v)) < 0.01, (col, px, py, x(n), y(v))
            assert y(0) < 440 - 10, "the zero series lies on the frame"
            texts = [t.text for t in root.iter(f"{NS}text")]
            assert "mean" in texts and "krum" in texts, texts
            return 0
    return 1


def pdf_f_facets(dpas, d):
    """Three varied inputs to a PDF: f (x, N = min_n(f)), rule (series), schedule (panels)."""
    for tool in ("pdfinfo", "pdftotext"):
        if not shutil.which(tool):
            print(f"{tool} is missing: scripts/install-deps.sh installs poppler-utils")
            return 1
    pdf, csv_path = os.path.join(d, "f.pdf"), os.path.join(d, "f.csv")
    p = sweep(dpas, pdf, ["ReferenceJobAttackSurface", "--f", "0..4+1", "--rule", "krum,median,bulyan",
                          "--schedule", "allgather,ps", "--attr", "bytes_per_worker",
                          "--title", "Bytes to tolerate f", "--xlabel", "Byzantine workers f",
                          "--width", "640", "--height", "400", "--font-size", "11",
                          "--data", csv_path])
    # min_n(f) by the rules' conditions (dpas rules): krum n >= 2f + 3, median n > 2f, bulyan
    # n >= 4f + 3; GPT-3's 175e9 parameters at 2 B: 350e9 gradient bytes; the busiest worker of
    # allgather receives the N - 1 others' gradients, and so does ps's server: 350e9 x (N - 1)
    # in both (0 at N = 1: median at f = 0 has nothing to send, a point of zeros)
    min_n = {"krum": lambda f: 2 * f + 3, "median": lambda f: 2 * f + 1, "bulyan": lambda f: 4 * f + 3}
    G = 350e9
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert len(rows) == 30, len(rows)
    for r in rows:
        assert int(r["dp_degree"]) == min_n[r["rule"]](int(r["f"])), r
    data = list(csv.DictReader(open(csv_path)))
    assert list(data[0]) == ["schedule", "rule", "f", "bytes_per_worker"], list(data[0])
    assert len(data) == 2 * 3 * 5, len(data)
    for r in data:
        n = min_n[r["rule"]](int(r["f"]))
        assert float(r["bytes_per_worker"]) == G * (n - 1), (r, n)
    assert any(float(r["bytes_per_worker"]) == 0 for r in data)
    info = subprocess.run(["pdfinfo", pdf], capture_output=True, text=True, check=True).stdout
    assert re.search(r"^Pages:\s+2$", info, re.M), info
    assert re.search(r"^Page size:\s+640 x 400 pts", info, re.M), info
    for page, sched in ((1, "allgather"), (2, "ps")):
        text = subprocess.run(["pdftotext", "-f", str(page), "-l", str(page), pdf, "-"],
                              capture_output=True, text=True, check=True).stdout
        words = [w.strip() for w in text.splitlines() if w.strip()]
        for want in (f"Bytes to tolerate f (schedule {sched})", "Byzantine workers f", "bytes_per_worker",
                     "rule", "krum", "median", "bulyan", "0", "4"):
            assert want in words, (page, want, words)
        if sched == "allgather":  # bulyan at f = 4: 350e9 x 18 = 6.3 TB, the top tick 7 TB
            assert "7 TB" in words, words
    return 0


if __name__ == "__main__":
    sys.exit(main())
