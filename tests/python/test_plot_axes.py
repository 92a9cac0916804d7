# SPDX-License-Identifier: Apache-2.0
"""dpas.plot(ax=...): the plot of a sweep drawn on matplotlib Axes (Debian's python3-matplotlib,
installed by scripts/install-deps.sh: its absence is a failure, not a skip), the same plot the
library draws to a file.

- Known answers by hand: max_f of median is floor((N - 1) / 2), of Krum floor((N - 3) / 2) (none
  at N = 2: the point is left out), of the mean 0 (a series of zeros, drawn inside the frame);
  1e12 bytes is '1 TB' and 0.025 s is '25 ms' on the axes (SI, as the CLI).
- Consistency with the library's own plot (two paths of ours): the legend's entries, a series
  on an earlier one dashed and named '(same as median)', one with no point said so, and each
  panel's title are the texts of the SVG the library draws for the same request; three varied
  inputs give one Axes per panel; the log axis of a doubling range.
- Refusals: Axes of the wrong count, a file or a size with ax, an ax that is not an Axes; each
  names the field.

Usage: /usr/bin/python3 test_plot_axes.py (PYTHONPATH and DPAS_LIBRARY as the other tests)"""
import html
import re
import sys
import unittest

try:
    import matplotlib
except ImportError as e:
    sys.exit("test_plot_axes: matplotlib is missing (scripts/install-deps.sh installs "
             "python3-matplotlib): %s" % e)
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import dpas  # noqa: E402
from dpas.errors import ArgumentTypeError, InvalidValue  # noqa: E402

REF = {"scenario": "ReferenceJobAttackSurface"}
MAX_F = dict(REF, dp_degree="2..64", attr="max_f", rule="mean,median,trimmed_mean,krum")


def svg_texts(svg):
    return {html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg.decode())}


def labels(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


class Axes(unittest.TestCase):
    def tearDown(self):
        plt.close("all")

    def test_one_panel_by_hand(self):
        fig, ax = plt.subplots()
        got = dpas.plot(ax=ax, **MAX_F)
        self.assertEqual(got, [ax])
        lines = {line.get_label(): line for line in ax.get_lines()}
        ns = [2, 4, 8, 16, 32, 64]
        mean = lines["mean"]
        median = lines["median"]
        krum = lines["krum"]
        self.assertEqual(list(median.get_xdata()), ns)
        self.assertEqual(list(median.get_ydata()), [(n - 1) // 2 for n in ns])
        self.assertEqual(list(mean.get_ydata()), [0] * 6)
        # Krum needs N >= 2f + 3: at N = 2 no f at all, the point left out
        self.assertEqual(list(krum.get_xdata()), ns[1:])
        self.assertEqual(list(krum.get_ydata()), [(n - 3) // 2 for n in ns[1:]])
        # the zeros are drawn inside the frame, not on its edge
        self.assertLess(ax.get_ylim()[0], 0)
        # trimmed_mean's max_f is median's at every N: dashed, and named
        same = lines["trimmed_mean (same as median)"]
        self.assertEqual(same.get_linestyle(), "--")
        self.assertEqual(median.get_linestyle(), "-")
        self.assertEqual(ax.get_legend().get_title().get_text(), "rule")
        # consistency: the entries, the title and the axis names are the library's SVG's texts
        svg = dpas.plot(**MAX_F)
        texts = svg_texts(svg)
        for t in labels(ax) + [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]:
            self.assertIn(t, texts)
        self.assertEqual(ax.get_xscale(), "log")  # a doubling range: log base 2, as the SVG
        self.assertEqual(ax.xaxis.get_major_formatter()(64, 0), "64")

    def test_units_and_panels(self):
        keys = dict(REF, f="1..4", attr="bytes_per_worker", rule="median,krum",
                    schedule="allgather,sharded")
        fig, axs = plt.subplots(2)
        got = dpas.plot(ax=axs, **keys)
        self.assertEqual(len(got), 2)
        texts = svg_texts(dpas.plot(**keys))
        for a in axs:
            self.assertIn(a.get_title(), texts)
            for t in labels(a):
                self.assertIn(t, texts)
        self.assertEqual([a.get_title() for a in axs],
                         ["bytes_per_worker vs f (schedule allgather)",
                          "bytes_per_worker vs f (schedule sharded)"])
        # Krum is not realised on sharded: in the legend, said so, as in the SVG
        self.assertIn("krum (every point left out)", labels(axs[1]))
        fmt = axs[0].yaxis.get_major_formatter()
        self.assertEqual(fmt(1e12, 0), "1 TB")
        keys = dict(REF, dp_degree="2..8", attr="time_s", rule="median", schedule="allgather")
        fig, ax = plt.subplots()
        dpas.plot(ax=ax, **keys)
        self.assertEqual(ax.yaxis.get_major_formatter()(0.025, 0), "25 ms")
        self.assertEqual(ax.yaxis.get_major_formatter()(2, 0), "2 s")

    def test_font_and_labels(self):
        fig, ax = plt.subplots()
        dpas.plot(ax=ax, xlabel="replicas", ylabel="tolerated", font_size=9, **MAX_F)
        self.assertEqual((ax.get_xlabel(), ax.get_ylabel()), ("replicas", "tolerated"))
        self.assertEqual(ax.xaxis.label.get_fontsize(), 9)

    def test_refusals(self):
        fig, axs = plt.subplots(3)
        with self.assertRaises(InvalidValue) as c:
            dpas.plot(ax=axs, **MAX_F)
        self.assertEqual(c.exception.field, "ax")
        self.assertIn("1 panel", str(c.exception))
        self.assertIn("got 3 Axes", str(c.exception))
        for name, v in (("file", "x.svg"), ("format", "pdf"), ("width", 400), ("height", 300)):
            with self.assertRaises(InvalidValue) as c:
                dpas.plot(ax=axs[0], **dict(MAX_F, **{name: v}))
            self.assertEqual(c.exception.field, name)
        for bad in ("axes", 3, [axs[0], "x"]):
            with self.assertRaises(ArgumentTypeError) as c:
                dpas.plot(ax=bad, **MAX_F)
            self.assertEqual(c.exception.field, "ax")
        with self.assertRaises(dpas.Error) as c:  # the library's own refusal, as for a file
            dpas.plot(ax=axs[0], **dict(MAX_F, rule="nosuchrule"))
        self.assertEqual(c.exception.field, "rule")


if __name__ == "__main__":
    unittest.main()
