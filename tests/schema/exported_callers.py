# SPDX-License-Identifier: Apache-2.0
"""Issue 30: no exported function of libdpas lacks a caller in src/, tests/ or docs/.

A source check (not a test of behaviour): the functions libdpas.so exports (nm -D
--defined-only, type T) are each looked for outside their definition and declaration: a call or a
use as a value in src/, tests/ or python/ (the binding: its ctypes names in quotes count), lines
that are only a comment left out, or a mention in docs/ or README.md (the API a user needs and
the docs show). A function nothing calls is removed, or tested and documented (docs/library.md).

Usage: exported_callers.py SOURCE_DIR LIBDPAS_SO. Exit 0 when each has a caller, 1 naming those
that have none.
"""
import os
import re
import subprocess
import sys

CODE_DIRS = ("src", "tests", "python", "bench")
CODE_EXT = (".c", ".h", ".py", ".js", ".cmake", ".txt", ".sh")
DOCS = ("docs", "README.md")


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    return sorted({f[2] for f in (l.split() for l in out.splitlines()) if len(f) == 3 and f[1] == "T"})


def files(root, tops, exts):
    for top in tops:
        p = os.path.join(root, top)
        if os.path.isfile(p):
            yield p
            continue
        for d, dirs, names in os.walk(p):
            dirs[:] = [x for x in dirs if x not in ("node_modules", "__pycache__")]
            for n in names:
                if n.endswith(exts):
                    yield os.path.join(d, n)


def main():
    src, lib = sys.argv[1], sys.argv[2]
    syms = exported(lib)
    if not syms:
        print("exported_callers: %s exports no function" % lib)
        return 1
    this = os.path.abspath(__file__)
    code = []
    for f in files(src, CODE_DIRS, CODE_EXT):
        if os.path.abspath(f) == this:
            continue
        for line in open(f, encoding="utf-8", errors="replace"):
            s = line.strip()
            if not s or s.startswith(("*", "/*", "//", "#")) and not s.startswith(("#define", "# ")):
                continue
            if "dpas_" in line:
                code.append(line)
    docs = "".join(open(f, encoding="utf-8", errors="replace").read()
                   for f in files(src, DOCS, (".md",)))
    code_text = "".join(code)
    missing = []
    for s in syms:
        # a definition starts at column 0 with its return type ("int dpas_x(", "char *dpas_x(")
        definition = re.compile(r"^(?:static\s+)?[A-Za-z_][\w \*]*\b%s\(" % s, re.M)
        uses = len(re.findall(r"\b%s\b" % s, code_text)) - len(definition.findall(code_text))
        if uses <= 0 and not re.search(r"\b%s\b" % s, docs):
            missing.append(s)
    for s in missing:
        print("%s: exported by libdpas, called nowhere in src/, tests/ or python/ and named in no "
              "doc: remove it, or test it and document it in docs/library.md" % s)
    print("exported_callers: %d exported functions, %d without a caller" % (len(syms), len(missing)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
