# SPDX-License-Identifier: Apache-2.0
"""The Python examples of a markdown file (README.md, docs/python.md) run as doctests: each
```python block of `>>>` lines must print what the file shows.

usage: doc_examples.py FILE...   (PYTHONPATH names python/, DPAS_LIBRARY the built libdpas.so)"""
import doctest
import sys


def main():
    failed = 0
    for path in sys.argv[1:]:
        r = doctest.testfile(path, module_relative=False, optionflags=doctest.ELLIPSIS)
        print(f"{path}: {r.attempted} examples, {r.failed} failed")
        failed += r.failed
    sys.exit(1 if failed or len(sys.argv) < 2 else 0)


if __name__ == "__main__":
    main()
