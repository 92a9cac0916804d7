# SPDX-License-Identifier: Apache-2.0
"""What the demonstration and the benchmark share on their command lines: a bad option is one
line on stderr and exit status 1 (argparse's own errors too), and output paths are checked like
input paths."""
import argparse
import os
import stat


class UsageError(Exception):
    """A bad option: one line on stderr, exit 1."""


class Parser(argparse.ArgumentParser):
    """argparse, but a bad option is a UsageError (one line, exit 1), not exit 2."""

    def error(self, message):
        raise UsageError(message)


def check_output_path(option: str, path: str, directory: bool = False) -> None:
    """A regular file (or, with directory, a directory) or a new one in an existing directory;
    never a FIFO, a device or a socket (writing there could block or go nowhere)."""
    if os.path.lexists(path):
        st = os.stat(path) if os.path.exists(path) else None
        if st is None:
            raise UsageError(f"{option}: {path} is a dangling link")
        ok = stat.S_ISDIR(st.st_mode) if directory else stat.S_ISREG(st.st_mode)
        if not ok:
            kind = "directory" if directory else "regular file"
            raise UsageError(f"{option}: {path} is not a {kind}")
    elif directory:
        raise UsageError(f"{option}: the directory {path} does not exist")
    else:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise UsageError(f"{option}: the directory of {path} does not exist")
