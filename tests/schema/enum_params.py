# SPDX-License-Identifier: Apache-2.0
"""Issue 30: no public function takes an enumeration as int, and no public struct holds one in an int.

A source check of include/dpas/*.h (not a test of behaviour): every parameter and field declared
`int NAME` (or `int *NAME`) is refused when NAME is one of the names that hold an enumeration
(ENUM_NAMES: a collective, a format, a schedule, a network model's kind, ...) or when the comment
on its line names an enumeration's type (`int x; /* dpas_collective */`): such a value has its
enum's type, dpas_collective and not int. Enumerations are int-sized in C, so the Python ctypes
mirrors (python/dpas/_ffi.py, c_int) keep their ABI.

Usage: enum_params.py SOURCE_DIR. Exit 0 when every such declaration is typed, 1 with each
offending file:line otherwise.
"""
import glob
import os
import re
import sys

# Names that hold an enumeration wherever a public header declares them.
ENUM_NAMES = {
    "coll", "collective", "collective_from", "ranks_from", "nodes_from", "transferred_from",
    "kind", "net_kind", "default_kind", "format", "units", "schedule", "sched", "basis", "regime",
    "from_regime", "dtype", "isa", "metric", "ymetric", "metrics", "recompute",
    "smallest_recompute", "xunit", "yunit", "attr", "analysis", "input", "prefix", "scope",
    "topo", "topology_source", "per_node_from", "key", "type", "source", "plot_format",
}


def strip_block_comments(text):
    """The text with every /* ... */ comment blanked but kept in place (lines keep their numbers);
    returns (code, comments per line)."""
    code, notes = [], {}
    line = 1
    i = 0
    while i < len(text):
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = len(text) if j < 0 else j + 2
            body = text[i:j]
            notes.setdefault(line, []).append(body)
            code.append("".join("\n" if c == "\n" else " " for c in body))
            line += body.count("\n")
            i = j
        else:
            c = text[i]
            code.append(c)
            line += c == "\n"
            i += 1
    return "".join(code), notes


def offences(text, enum_types):
    code, notes = strip_block_comments(text)
    found = []
    for n, line in enumerate(code.split("\n"), 1):
        if line.lstrip().startswith("#"):
            continue
        # `int a`, `int *a`, `const int a`, and the names after it in `int a, b;` (fields)
        for m in re.finditer(r"(?<![\w])(?:const\s+)?int\s+(\**\s*\w+(?:\s*,\s*\**\s*\w+)*)\s*[;,)\[]",
                             line):
            names = [x.strip(" *") for x in m.group(1).split(",")]
            comment = " ".join(notes.get(n, []))
            for name in names:
                if name in ENUM_NAMES:
                    found.append((n, name, "holds an enumeration"))
                else:
                    hit = [t for t in enum_types if re.search(r"\b%s\b" % t, comment)]
                    if hit and len(names) == 1:
                        found.append((n, name, "its comment names %s" % hit[0]))
    return found


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "."
    headers = sorted(glob.glob(os.path.join(src, "include", "dpas", "*.h")))
    if not headers:
        print("enum_params: no headers under %s/include/dpas" % src)
        return 1
    texts = {h: open(h, encoding="utf-8").read() for h in headers}
    enum_types = set()
    for t in texts.values():
        enum_types.update(re.findall(r"typedef\s+enum\s+\w*\s*\{[^}]*\}\s*(\w+)\s*;", t, re.S))
    # the check itself must see an offence: a declaration of each form it refuses
    probe = ("DPAS_API int f(int coll, const int *format);\n"
             "typedef struct s { int collective_from, ranks_from; int x; /* dpas_collective */ } s;\n")
    if len(offences(probe, {"dpas_collective"})) != 5:
        print("enum_params: the check misses its own probe: %r" % offences(probe, {"dpas_collective"}))
        return 1
    bad = 0
    for h, t in texts.items():
        for n, name, why in offences(t, enum_types):
            print("%s:%d: int %s: %s; give it its enum's type" % (os.path.relpath(h, src), n, name, why))
            bad += 1
    print("enum_params: %d header(s), %d enumeration(s), %d int-typed enum value(s)"
          % (len(headers), len(enum_types), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
