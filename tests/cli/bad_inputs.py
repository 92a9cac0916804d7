# SPDX-License-Identifier: Apache-2.0
"""The catalogue of bad inputs (bad_inputs.txt). For each case: exit status 1; in text mode one
'dpas: error: ...' line on stderr holding the expected words (the field and the rule) and
nothing on stdout; with -o json exactly one RFC 9457 problem on stdout ({"type", "title",
"status": 400, "detail"} holding the same words) and nothing on stderr.

Arguments may name files made for the run in a scratch directory: {fifo} a FIFO with no writer
(a read that blocked would hang the case: the timeout fails it), {big} a 2 MiB YAML file, {tmp}
the directory itself (a refused case must leave it as it was made: no partial output); for output paths (issue 21: a write that blocked would hang the case too)
{fifo_svg} and {fifo_png} FIFOs with no reader, {sock_svg} and {sock_png} UNIX sockets, {null_svg}
and {null_png} links to /dev/null, {dir_png} a directory; {old_svg} and {old_csv} files holding
"old", {link_csv} and {link_svg} links to them (two outputs that are one file: both kept as made).

Usage: python3 bad_inputs.py DPAS CASE   ('list' prints the case names)"""
import json
import os
import shlex
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def cases():
    out = {}
    with open(os.path.join(HERE, "bad_inputs.txt"), encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            name, args, needles = (part.strip() for part in line.split(" | ", 2))
            out[name] = (shlex.split(args), [n.strip() for n in needles.split(";;")])
    return out


def main():
    dpas, name = sys.argv[1], sys.argv[2]
    table = cases()
    if name == "list":
        print(";".join(table))
        return 0
    args, needles = table[name]
    cwd = os.path.join(HERE, "bad")
    scratch = tempfile.TemporaryDirectory()
    tmp = scratch.name
    socks = []
    if any("{" in a for a in args):
        os.mkfifo(os.path.join(tmp, "fifo.yaml"))
        with open(os.path.join(tmp, "big.yaml"), "w") as f:
            f.write("dp_degree: 8\n" + ("#" * 1023 + "\n") * 2048)
        for ext in ("svg", "png"):
            os.mkfifo(os.path.join(tmp, "fifo." + ext))
            os.symlink("/dev/null", os.path.join(tmp, "null." + ext))
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(os.path.join(tmp, "sock." + ext))  # bound, not listening: nobody reads
            socks.append(s)
        os.mkdir(os.path.join(tmp, "dir.png"))
        # two outputs that are one file: a link to the other output, whose old content stays
        for old, link in (("old.svg", "link.csv"), ("old.csv", "link.svg")):
            with open(os.path.join(tmp, old), "w") as f:
                f.write("old\n")
            os.symlink(old, os.path.join(tmp, link))
        names = {"fifo": "fifo.yaml", "big": "big.yaml", "fifo_svg": "fifo.svg", "fifo_png": "fifo.png",
                 "sock_svg": "sock.svg", "sock_png": "sock.png", "null_svg": "null.svg",
                 "null_png": "null.png", "dir_png": "dir.png", "old_svg": "old.svg",
                 "link_csv": "link.csv", "old_csv": "old.csv", "link_svg": "link.svg"}
        for k, v in names.items():
            args = [a.replace("{%s}" % k, os.path.join(tmp, v)) for a in args]
        args = [a.replace("{tmp}", tmp) for a in args]
    before = sorted(os.listdir(tmp))
    p = subprocess.run([dpas] + args, cwd=cwd, capture_output=True, timeout=60)
    err = p.stderr.decode("utf-8", "replace")
    problems = []
    if p.returncode != 1:
        problems.append(f"text mode: exit {p.returncode}, expected 1")
    if p.stdout:
        problems.append(f"text mode: stdout is not empty: {p.stdout[:200]!r}")
    if not err.startswith("dpas: error: ") or err.count("\n") != 1:
        problems.append(f"text mode: stderr is not one 'dpas: error:' line: {err!r}")
    for n in needles:
        if n not in err:
            problems.append(f"text mode: the message lacks {n!r}: {err!r}")
    # a case that names its own format: -o json would be a repeated option, itself an error
    own_format = any(a in ("-o", "--output") or a.startswith("--output=") for a in args)
    if own_format:
        needles = ["is given twice"]
    jargs = args[:1] + ["-o", "json"] + args[1:]
    q = subprocess.run([dpas] + jargs, cwd=cwd, capture_output=True, timeout=60)
    if q.returncode != 1:
        problems.append(f"json mode: exit {q.returncode}, expected 1")
    if q.stderr:
        problems.append(f"json mode: stderr is not empty: {q.stderr[:200]!r}")
    try:
        obj = json.loads(q.stdout.decode("utf-8"))
        if not (isinstance(obj, dict) and obj.get("status") == 400 and obj.get("title")
                and isinstance(obj.get("detail"), str) and obj.get("type", "").startswith("urn:dpas:error:")
                and obj["type"].endswith(":" + obj.get("code", "?"))):
            problems.append(f"json mode: not an RFC 9457 problem with status 400: {obj!r}")
        else:
            for n in needles:
                if n not in obj["detail"]:
                    problems.append(f"json mode: the detail lacks {n!r}: {obj['detail']!r}")
    except (ValueError, UnicodeDecodeError) as e:
        problems.append(f"json mode: stdout is not one JSON object ({e}): {q.stdout[:300]!r}")
    # no partial output: a refused command leaves the scratch folder as it was made (a --plot
    # written before its --data failed, a temporary file left behind)
    after = sorted(os.listdir(tmp))
    if after != before:
        problems.append(f"files left behind in the scratch folder: {sorted(set(after) - set(before))}")
    for old, link in (("old.svg", "link.csv"), ("old.csv", "link.svg")):
        if old in before and (not os.path.islink(os.path.join(tmp, link))
                              or open(os.path.join(tmp, old)).read() != "old\n"):
            problems.append(f"{old} or its link {link} was changed")
    for pr in problems:
        print(pr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
