# SPDX-License-Identifier: Apache-2.0
"""Bad output paths from Python (issue 21): dpas.write_output, the checked writer the demo's --svg
goes through, is the C library's dpas_write_output. Each case: the binding's exception class, the
field, the rule in the message, nothing written, and nothing blocked (a FIFO without a reader is
refused at once; with a reader it is refused too, and nothing reaches the reader).

Usage: python3 test_output.py (dpas on PYTHONPATH, DPAS_LIBRARY its libdpas)"""
import os
import socket
import stat
import tempfile
import unittest

import dpas


class BadOutputPaths(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, path, cls, *words, field="--svg"):
        with self.assertRaises(cls) as cm:
            dpas.write_output(path, "<svg/>", field=field)
        e = cm.exception
        self.assertEqual(e.field, field)
        for w in words:
            self.assertIn(w, str(e))
        return e

    def test_fifo_without_reader(self):
        p = os.path.join(self.d, "plot.svg")
        os.mkfifo(p)
        e = self.refused(p, dpas.FileError, "--svg: cannot write", "not a regular file")
        self.assertIsInstance(e, OSError)

    def test_fifo_with_reader(self):
        p = os.path.join(self.d, "plot.svg")
        os.mkfifo(p)
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)  # a reader, waiting for a writer
        try:
            self.refused(p, dpas.FileError, "not a regular file (a FIFO)")
            try:
                data = os.read(fd, 100)
            except BlockingIOError:
                data = b""
            self.assertEqual(data, b"")  # nothing was written into it
        finally:
            os.close(fd)

    def test_dev_null(self):
        self.refused("/dev/null", dpas.FileError, '"/dev/null"', "not a regular file (a character device)")

    def test_dev_full(self):
        self.refused("/dev/full", dpas.FileError, "not a regular file (a character device)")

    def test_link_to_a_device(self):
        p = os.path.join(self.d, "null.svg")
        os.symlink("/dev/null", p)
        self.refused(p, dpas.FileError, "not a regular file (a character device)")

    def test_directory(self):
        self.refused(self.d, dpas.FileError, "it is a directory")

    def test_socket(self):
        p = os.path.join(self.d, "sock.svg")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(p)
        try:
            self.refused(p, dpas.FileError, "not a regular file")
        finally:
            s.close()

    def test_no_such_directory(self):
        self.refused(os.path.join(self.d, "no", "x.svg"), dpas.FileError, "No such file or directory")

    def test_under_a_file(self):
        f = os.path.join(self.d, "file")
        open(f, "w").close()
        self.refused(os.path.join(f, "x.svg"), dpas.FileError, "Not a directory")

    def test_empty_path(self):
        self.refused("", dpas.InvalidValue, "the output path is empty")

    def test_nul_in_path(self):
        self.refused(os.path.join(self.d, "a\x00b.svg"), dpas.InvalidValue, "NUL")

    def test_path_of_another_type(self):
        for p in (3, None, 2.5, ["x.svg"]):
            with self.subTest(path=p):
                e = self.refused(p, dpas.ArgumentTypeError, "must be a path")
                self.assertIsInstance(e, TypeError)

    def test_data_of_another_type(self):
        with self.assertRaises(dpas.ArgumentTypeError):
            dpas.write_output(os.path.join(self.d, "x.svg"), 3)
        self.assertFalse(os.path.exists(os.path.join(self.d, "x.svg")))

    def test_field_of_another_type(self):
        with self.assertRaises(dpas.ArgumentTypeError):
            dpas.write_output(os.path.join(self.d, "x.svg"), "x", field=3)

    def test_regular_file_rewritten(self):
        # the control: a regular file is truncated and rewritten; str, bytes and PathLike paths
        import pathlib
        p = os.path.join(self.d, "plot.svg")
        with open(p, "w") as f:
            f.write("x" * 1000)
        os.chmod(p, 0o640)
        dpas.write_output(p, "<svg/>")
        dpas.write_output(os.fsencode(p), b"<svg/>")
        dpas.write_output(pathlib.Path(p), "<svg/>")
        with open(p) as f:
            self.assertEqual(f.read(), "<svg/>")
        self.assertEqual(stat.S_IMODE(os.stat(p).st_mode), 0o640)  # the file kept, not replaced


if __name__ == "__main__":
    unittest.main(verbosity=2)
