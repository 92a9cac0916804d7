#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Hostile but legal labels through every renderer (issue 10): a scenario name, a workload name and
a fleet name holding a tab, quotes, a backslash, '|', a newline, '<&>', non-ASCII text and 10 kB
of text, and sweep labels with a tab, go through show, eval, cost, inventory and sweep in every
format. Each output must keep its format's promise:
  json      parses, and the label reads back exactly;
  csv       every row has the header's number of cells (Python's csv reader), labels read back;
  markdown  every table row has the header's number of unescaped '|' separators;
  text      no label adds a line (one line per row, whatever the label holds);
  svg       a plot whose title and series hold the same text (and invalid UTF-8) is XML.
Labels with invalid UTF-8 cannot be written in YAML or JSON (both parsers refuse them, with exit 1
and a message); they reach the SVG through --title, which is what the last case checks.
Usage: hostile_labels.py DPAS"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

DPAS = sys.argv[1]
BASE = 'tab\there "quoted" back\\slash pipe|pipe new\nline <&> \u00e9\u4e2d'
LONG = BASE + " " + "x" * 10240
problems = []


def run(args, ok=0):
    p = subprocess.run([DPAS] + args, capture_output=True)
    if p.returncode != ok:
        problems.append(f"{args[:3]}...: exit {p.returncode}: {p.stderr[:300]!r}")
    return p.stdout


def scenario_file(d, name):
    path = os.path.join(d, "hostile.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"name": name, "workload": {"name": name, "parameters": 175e9},
                   "fleet": {"name": name, "nodes": 128, "accelerators_per_node": 8,
                             "node": "DGX_H100", "fabric": "InfiniBand_HDR"},
                   "dp_degree": 128, "gradient_bytes_per_param": "bf16",
                   "checkpoint_bytes_per_param": "14 B", "weight_bytes_per_param": "2 B"}, f)
    return path


def check_json(cmd, out, label):
    try:
        doc = json.loads(out.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        problems.append(f"{cmd} json: does not parse: {e}")
        return
    if label is not None and isinstance(doc, dict) and "scenario" in doc and doc["scenario"] != label:
        problems.append(f"{cmd} json: the scenario label does not read back")


def check_csv(cmd, out):
    rows = list(csv.reader(io.StringIO(out.decode("utf-8"), newline="")))
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        problems.append(f"{cmd} csv: rows of {sorted(widths)} cells")
    return rows


def md_cells(line):
    """Split a markdown table row at its unescaped pipes."""
    cells, cur, esc = [], "", False
    for ch in line:
        if esc:
            cur += ch
            esc = False
        elif ch == "\\":
            cur += ch
            esc = True
        elif ch == "|":
            cells.append(cur)
            cur = ""
        else:
            cur += ch
    cells.append(cur)
    return cells


def check_markdown(cmd, out):
    text = out.decode("utf-8")
    block = []
    for line in text.split("\n") + [""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if block:
            n = {len(md_cells(x)) for x in block}
            if len(n) != 1:
                problems.append(f"{cmd} markdown: a table with rows of {sorted(n)} cells")
            block = []


def check_text(cmd, out, plain_out):
    # the same command with a plain label: the hostile one must not add lines
    nl = b"\n"
    if out.count(nl) != plain_out.count(nl):
        problems.append(f"{cmd} text: {out.count(nl)} lines, {plain_out.count(nl)} with a plain "
                        "label")


def main():
    with tempfile.TemporaryDirectory() as d:
        for label in (BASE, LONG):
            hostile = scenario_file(d, label)
            plain = os.path.join(d, "plain.json")
            os.replace(scenario_file(d, "plain"), plain)
            hostile = scenario_file(d, label)
            for cmd in (["eval"], ["cost"], ["inventory"], ["sweep", "--dp", "2,4",
                                                           "--grad", "2\tB,4 B"]):
                name = cmd[0]
                for fmt in ("json", "csv", "markdown", "text"):
                    out = run(cmd + [hostile, "-o", fmt])
                    if fmt == "json":
                        check_json(name, out, None if name == "sweep" else label)
                    elif fmt == "csv":
                        check_csv(name, out)
                    elif fmt == "markdown":
                        check_markdown(name, out)
                    else:
                        check_text(name, out, run(cmd + [plain, "-o", fmt]))
            # the sweep's own labels read back from CSV and JSON
            rows = check_csv("sweep", run(["sweep", hostile, "--dp", "8", "--grad", "2\tB,4 B",
                                           "-o", "csv"]))
            if rows and [r[0] for r in rows[1:]] != ["2\tB", "4 B"]:
                problems.append(f"sweep csv: labels read back as {[r[0] for r in rows[1:]]!r}")
        # SVG: a title and series with the same text and invalid UTF-8
        svg = os.path.join(d, "p.svg")
        title = LONG.encode("utf-8") + b" \xff\xfe invalid \x01 control"
        run([b"sweep".decode(), "ReferenceJobAttackSurface", "--dp", "2..64", "--grad", "2\tB,4 B",
             "--plot", svg, "--title", title.decode("utf-8", "surrogateescape")])
        try:
            ET.parse(svg)
        except (ET.ParseError, OSError) as e:
            problems.append(f"sweep --plot svg: not well-formed XML: {e}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
