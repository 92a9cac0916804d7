# SPDX-License-Identifier: Apache-2.0
"""The documentation's examples stay true. Every page is read: README.md and every docs/**/*.md
(a glob, so a new page is covered without touching this file). In each page:

- '$ dpas ...' lines in fenced blocks are run from the source tree and their output compared
  with the lines that follow (stdout and stderr together, as a terminal shows them) up to the
  next '$' line or the end of the block. A block that elides output with '...' is checked line
  by line for the lines it shows. '$ echo $?' checks the exit status of the command before it.
- '<!-- $ dpas ... -->' (or '<!-- $ ./NAME -->', a program below) before rendered output (a
  markdown table shown as a table): the command's output must be the lines after the comment,
  up to the first blank line.
- A ```c block whose first line is '/* NAME.c ...' is a complete program: it is compiled against
  the built library (--cc, --cflags, --lib) and each '$ ./NAME [ARGS]' line runs it, checked as
  above. '$ cc ...' lines show how a user compiles it and are not run. A program that no
  '$ ./NAME' line runs is an error: its output would be unchecked.
- Relative links and images must name files that exist (and, for a page, a heading that
  exists when the link names one). A link to a docs/*.md page that is not written yet is
  listed as pending, not an error: those pages are written on other branches.
- '>>>' examples are counted here; tests/python runs them as doctests.

Other '$' commands (mpirun, cat, curl, ...) are listed as not checked here: mpirun examples are
the MPI tests' business. A page without any checkable example is listed, and is an error only
for README.md, whose tour must be real output; a prose page (hardening, testing) or a page whose
examples another suite checks (measuring, serve) may have none.

Usage: python3 readme_check.py --root SRC --dpas BUILD/dpas [--cc CC --lib LIBDPAS --cflags F]"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```", re.S | re.M)
RENDERED = re.compile(r"^<!-- \$ ((?:dpas|\./[A-Za-z0-9_]+)\b.*?) -->\n((?:.+\n?)*)", re.M)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6} +(.*?) *#*$", re.M)
PROGRAM = re.compile(r"\A/\* ([A-Za-z0-9_]+)\.c\b")


def pages(root):
    found = [os.path.join(root, "README.md")]
    found += sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    return [p for p in found if os.path.isfile(p)]


def slug(heading):
    """GitHub's anchor for a heading: lower case, code marks and punctuation dropped."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


class Page:
    def __init__(self, path, root, args):
        self.path, self.root, self.args = path, root, args
        self.name = os.path.relpath(path, root)
        self.text = open(path, encoding="utf-8").read()
        self.failures = 0
        self.counts = {"cli": 0, "rendered": 0, "c": 0, "python": 0}
        self.unchecked, self.pending = [], []
        self.programs = {}  # NAME -> executable, or None when not compiled

    def fail(self, msg):
        print(f"{self.name}: {msg}")
        self.failures += 1

    def run(self, argv):
        p = subprocess.run(argv, cwd=self.root, capture_output=True, text=True)
        return p.returncode, (p.stderr + p.stdout).splitlines()

    def compare(self, cmd, got, want):
        if any(w.strip() == "..." for w in want):
            missing = [w for w in want if w.strip() != "..." and w not in got]
            if missing:
                self.fail(f"'{cmd}': lines not in the output: {missing[:3]}")
        elif got != want:
            self.fail(f"'{cmd}' prints:\n" + "\n".join(got) + "\n-- the page shows:\n" + "\n".join(want))

    def compile(self, name, source, tmp):
        if not self.args.cc:
            print(f"{self.name}: {name}.c not compiled (no --cc): its runs are skipped")
            self.programs[name] = None
            return
        src, exe = os.path.join(tmp, name + ".c"), os.path.join(tmp, name)
        with open(src, "w", encoding="utf-8") as f:
            f.write(source)
        libdir = os.path.dirname(os.path.abspath(self.args.lib))
        cmd = [self.args.cc, "-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
               *shlex.split(self.args.cflags), src, self.args.lib, f"-Wl,-rpath,{libdir}",
               "-o", exe]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            self.fail(f"{name}.c does not compile:\n{p.stdout}{p.stderr}")
            self.programs[name] = None
        else:
            self.programs[name] = exe

    def check_block(self, lines):
        i, last_rc = 0, None
        while i < len(lines):
            line = lines[i]
            if not line.startswith("$ "):
                i += 1
                continue
            j = i + 1
            while j < len(lines) and not lines[j].startswith("$ "):
                j += 1
            cmd, want = line[2:], lines[i + 1:j]
            i = j
            if cmd == "echo $?":
                if last_rc is not None and want and want[0].strip() != str(last_rc):
                    self.fail(f"exit status {last_rc}, the page says {want[0]}")
                continue
            try:
                words = shlex.split(cmd)
            except ValueError:  # a line continued with '\' (a shell session shown, not run)
                words = cmd.split()
            if words[0] == "dpas":
                last_rc, got = self.run([self.args.dpas] + words[1:])
                self.counts["cli"] += 1
            elif words[0].startswith("./") and words[0][2:] in self.programs:
                exe = self.programs[words[0][2:]]
                if exe is None:
                    last_rc = None
                    continue
                last_rc, got = self.run([exe] + words[1:])
                self.counts["c"] += 1
            elif words[0] in ("cc", "gcc", "clang"):
                continue
            else:
                self.unchecked.append(words[0])
                last_rc = None
                continue
            self.compare(cmd, got, want)

    def check(self, tmp):
        for m in FENCE.finditer(self.text):
            lang, body = m.group(1), m.group(2)
            lines = body.splitlines()
            if lang == "c":
                prog = PROGRAM.match(body)
                if prog:
                    self.compile(prog.group(1), body, tmp)
                continue
            self.counts["python"] += sum(1 for line in lines if line.startswith(">>> "))
            self.check_block(lines)
        for name, exe in self.programs.items():
            if not re.search(rf"^(<!-- )?\$ \./{name}\b", self.text, re.M):
                self.fail(f"{name}.c is never run: show its output after '$ ./{name}'")
        for m in RENDERED.finditer(self.text):
            cmd, want = m.group(1), m.group(2).splitlines()
            try:
                words = shlex.split(cmd)
            except ValueError:  # a line continued with '\' (a shell session shown, not run)
                words = cmd.split()
            if words[0] == "dpas":
                exe = self.args.dpas
            elif words[0][2:] not in self.programs:
                self.fail(f"'{cmd}': no '/* {words[0][2:]}.c' program on this page")
                continue
            else:
                exe = self.programs[words[0][2:]]
                if exe is None:
                    continue  # not compiled: said so above
            _, got = self.run([exe] + words[1:])
            self.counts["rendered"] += 1
            self.compare(cmd, got, want)
        self.check_links()
        if self.name == "README.md" and not (self.counts["cli"] + self.counts["rendered"]):
            self.fail("no checked example: the README's tour must be real output")

    def check_links(self):
        prose = FENCE.sub("", self.text)
        prose = re.sub(r"`[^`\n]*`", "", prose)
        for target in LINK.findall(prose):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(self.path), path)) if path else self.path
            if not os.path.exists(full):
                rel = os.path.relpath(full, self.root)
                if re.fullmatch(r"docs/[a-z_]+\.md", rel):
                    self.pending.append(rel)
                else:
                    self.fail(f"the link {target} names {rel}, which does not exist")
                continue
            if anchor and full.endswith(".md"):
                text = open(full, encoding="utf-8").read()
                if anchor not in {slug(h) for h in HEADING.findall(FENCE.sub("", text))}:
                    self.fail(f"the link {target}: {os.path.relpath(full, self.root)} has no heading #{anchor}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, help="the source tree (README.md, docs/)")
    ap.add_argument("--dpas", required=True, help="the dpas executable")
    ap.add_argument("--cc", help="a C compiler for the pages' C programs")
    ap.add_argument("--lib", help="the built libdpas.so the C programs link")
    ap.add_argument("--cflags", default="", help="include flags for dpas/dpas.h and dpas/version.h")
    args = ap.parse_args()
    if args.cc and not args.lib:
        ap.error("--cc needs --lib")
    args.dpas = os.path.abspath(args.dpas)
    failures, totals = 0, {"cli": 0, "rendered": 0, "c": 0, "python": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for path in pages(args.root):
            page = Page(path, args.root, args)
            page.check(tmp)
            failures += page.failures
            for k, v in page.counts.items():
                totals[k] += v
            names = {"cli": "CLI", "rendered": "rendered", "c": "C runs", "python": "Python"}
            shown = ", ".join(f"{v} {names[k]}" for k, v in page.counts.items() if v) or "no checkable example"
            extra = ""
            if page.unchecked:
                extra += f"; not checked here: {', '.join(sorted(set(page.unchecked)))}"
            if page.pending:
                extra += f"; links to pages not written yet: {', '.join(sorted(set(page.pending)))}"
            print(f"{page.name}: {shown}{extra}")
    n = len(pages(args.root))
    print(f"{n} pages: {totals['cli']} CLI examples, {totals['rendered']} rendered outputs and "
          f"{totals['c']} runs of C programs checked here; {totals['python']} Python examples "
          f"('>>>' lines) for tests/python; {failures} failures")
    checked = totals["cli"] + totals["rendered"] + totals["c"]
    return 1 if failures or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
