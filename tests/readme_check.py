"""The README's CLI examples stay true: every '$ dpas ...' line in a fenced block is run from the
source tree and its output compared with the lines that follow it (stdout and stderr together,
as a terminal shows them) up to the next '$' line or the end of the block. Blocks that elide
output with '...' are checked line by line for the lines they show. '$ echo $?' checks the exit
status of the command before it. mpirun examples are left to the MPI tests.

Usage: python3 readme_check.py README DPAS"""
import re
import shlex
import subprocess
import sys


def blocks(text):
    for m in re.finditer(r"```[a-z]*\n(.*?)```", text, re.S):
        yield m.group(1).splitlines()


def main():
    readme, dpas = sys.argv[1], sys.argv[2]
    root = readme.rsplit("/", 1)[0] if "/" in readme else "."
    failures, checked = 0, 0
    for lines in blocks(open(readme, encoding="utf-8").read()):
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
                    print(f"README: exit status {last_rc}, the README says {want[0]}")
                    failures += 1
                continue
            if not cmd.startswith("dpas "):
                continue
            args = shlex.split(cmd)[1:]
            p = subprocess.run([dpas] + args, cwd=root, capture_output=True, text=True)
            last_rc = p.returncode
            got = (p.stderr + p.stdout).splitlines() if p.returncode else (p.stderr + p.stdout).splitlines()
            checked += 1
            if any(w.strip() == "..." for w in want):
                missing = [w for w in want if w.strip() != "..." and w not in got]
                if missing:
                    print(f"README: '{cmd}': lines not in the output: {missing[:3]}")
                    failures += 1
            elif got != want:
                print(f"README: '{cmd}' prints:\n" + "\n".join(got) + "\n-- the README shows:\n" + "\n".join(want))
                failures += 1
    print(f"{checked} README examples checked, {failures} differ")
    return 1 if failures or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
