#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Rewrite the output under each `$ dpas ...` line of README.md and docs/**/*.md with what the
built dpas prints now (stderr then stdout, as tests/readme_check.py compares them). Run after a
deliberate change of output; review the diff before committing.
usage: scripts/regen_docs.py BUILD/dpas"""
import glob
import os
import re
import shlex
import subprocess
import sys

FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```", re.S | re.M)
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
dpas = os.path.abspath(sys.argv[1])


def regen_block(body):
    lines, out, i = body.splitlines(), [], 0
    while i < len(lines):
        line = lines[i]
        j = i + 1
        while j < len(lines) and not lines[j].startswith("$ "):
            j += 1
        want = lines[i + 1:j]
        out.append(line)
        if line.startswith("$ dpas ") and not any(w.strip() == "..." for w in want):
            p = subprocess.run([dpas] + shlex.split(line[2:])[1:], cwd=root, capture_output=True,
                               text=True)
            out.extend((p.stderr + p.stdout).splitlines())
        else:
            out.extend(want)
        i = j
    return "\n".join(out) + "\n"


for path in [os.path.join(root, "README.md")] + glob.glob(os.path.join(root, "docs/**/*.md"),
                                                              recursive=True):
    text = open(path, encoding="utf-8").read()
    new = FENCE.sub(lambda m: "```" + m.group(1) + "\n" + (regen_block(m.group(2)) if m.group(1) == "" else m.group(2)) + "```", text)
    if new != text:
        open(path, "w", encoding="utf-8").write(new)
        print("rewrote", os.path.relpath(path, root))
