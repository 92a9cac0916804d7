# SPDX-License-Identifier: Apache-2.0
"""Bad output paths from Python (issue 21): dpas.write_output, the checked writer the demo's --svg
goes through, is the C library's dpas_write_output. Each case: the binding's exception class, the
field, the rule in the message, nothing written, and nothing blocked (a FIFO without a reader is
refused at once; with a reader it is refused too, and nothing reaches the reader).

Usage: python3 test_output.py (dpas on PYTHONPATH, DPAS_LIBRARY its libdpas)"""
import os
import resource
import signal
import socket
import stat
import subprocess
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
        # the control: a regular file is replaced with the new content; str, bytes and PathLike
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
        self.assertEqual(stat.S_IMODE(os.stat(p).st_mode), 0o640)  # the old file's mode kept


def _limit_file_size(limit):
    """In a child before exec: files may grow to limit bytes; a write past it fails (EFBIG)
    instead of killing the process (SIGXFSZ ignored): a full disk, part way through."""
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    return pre


class ReplacedWhole(unittest.TestCase):
    """issue 29, class 5: an output is written to a temporary file in the same folder and renamed
    over the old one, so a write cut short leaves the old file byte for byte as it was, and no
    temporary file stays behind."""

    OLD = b"<svg>the old plot, which must survive</svg>\n" * 3

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.p = os.path.join(self.d, "plot.svg")
        with open(self.p, "wb") as f:
            f.write(self.OLD)

    def tearDown(self):
        self.tmp.cleanup()

    def assert_old_file_intact(self):
        with open(self.p, "rb") as f:
            self.assertEqual(f.read(), self.OLD)
        self.assertEqual(os.listdir(self.d), ["plot.svg"])  # no temporary file left

    def test_cut_short_write_from_python(self):
        # 64 KiB into a file-size limit of 1 KiB: the write stops part way with EFBIG. The limit is
        # set in a child so this process's own files are not limited.
        code = ("import dpas, sys\n"
                "try:\n"
                "    dpas.write_output(sys.argv[1], b'<svg>' + b'x' * 65536, field='--svg')\n"
                "except dpas.FileError as e:\n"
                "    print(e); sys.exit(3)\n")
        r = subprocess.run(["/usr/bin/python3", "-c", code, self.p], capture_output=True, text=True,
                           preexec_fn=_limit_file_size(1024))
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn('--svg: cannot write', r.stdout)
        self.assertIn("File too large", r.stdout)
        self.assert_old_file_intact()

    def test_cut_short_plot_from_the_cli(self):
        # dpas sweep --plot over an existing plot, the SVG larger than the file-size limit
        for ext in ("svg", "png"):
            with self.subTest(ext=ext):
                p = os.path.join(self.d, "plot." + ext)
                if ext == "png":
                    os.rename(self.p, p)
                r = subprocess.run([os.environ["DPAS_CLI"], "sweep", "ReferenceJobAttackSurface",
                                    "--dp", "2..64", "--plot", p], capture_output=True, text=True,
                                   preexec_fn=_limit_file_size(2048))
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn("--plot: cannot write", r.stderr)
                self.assertIn("File too large", r.stderr)
                if ext == "png":
                    os.rename(p, self.p)
                self.assert_old_file_intact()

    def test_plot_and_data_replaced_together(self):
        # sweep --plot and --data are one transaction: a --data that cannot be written (a FIFO, a
        # folder that does not exist) leaves the old plot byte for byte, and a --plot that cannot
        # be written leaves the old data (was: the plot replaced, then the command failed)
        fifo = os.path.join(self.d, "fifo.csv")
        os.mkfifo(fifo)
        data = os.path.join(self.d, "data.csv")
        old_data = b"x,y\nthe old data,1\n"
        with open(data, "wb") as f:
            f.write(old_data)
        for bad in (fifo, os.path.join(self.d, "no", "such.csv")):
            with self.subTest(data=bad):
                r = subprocess.run([os.environ["DPAS_CLI"], "sweep", "ReferenceJobAttackSurface",
                                    "--dp", "2..64", "--plot", self.p, "--data", bad],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn("--data: cannot write", r.stderr)
                self.assertEqual(r.stdout, "")
                with open(self.p, "rb") as f:
                    self.assertEqual(f.read(), self.OLD)
        os.unlink(fifo)
        # the plot refused (a directory): the data is not replaced either
        os.mkdir(os.path.join(self.d, "dir.svg"))
        r = subprocess.run([os.environ["DPAS_CLI"], "sweep", "ReferenceJobAttackSurface", "--dp",
                            "2..64", "--plot", os.path.join(self.d, "dir.svg"), "--data", data],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("--plot: cannot write", r.stderr)
        with open(data, "rb") as f:
            self.assertEqual(f.read(), old_data)
        # the data cut short by a file-size limit: the plot (written first, smaller) is not
        # replaced either
        big = ["--dp", "2..1024*2", "--rule", "median,krum,mean", "--plot", self.p, "--data", data]
        r = subprocess.run([os.environ["DPAS_CLI"], "sweep", "ReferenceJobAttackSurface"] + big,
                           capture_output=True, text=True, preexec_fn=_limit_file_size(1 << 20))
        self.assertEqual(r.returncode, 0, r.stderr)  # the control: both fit under 1 MiB
        self.assertNotEqual(open(self.p, "rb").read(), self.OLD)
        self.assertEqual(sorted(os.listdir(self.d)), ["data.csv", "dir.svg", "plot.svg"])

    def test_the_same_write_unlimited_replaces_it(self):
        # the control for the two above: without the limit the same plot replaces the old file
        r = subprocess.run([os.environ["DPAS_CLI"], "sweep", "ReferenceJobAttackSurface", "--dp",
                            "2..64", "--plot", self.p], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.p, "rb") as f:
            self.assertIn(b"<svg", f.read())
        self.assertGreater(os.path.getsize(self.p), 2048)
        self.assertEqual(os.listdir(self.d), ["plot.svg"])

    def test_a_link_is_followed_and_kept(self):
        link = os.path.join(self.d, "link.svg")
        os.symlink("plot.svg", link)
        dpas.write_output(link, "<svg/>")
        self.assertTrue(os.path.islink(link))
        with open(self.p) as f:
            self.assertEqual(f.read(), "<svg/>")
        self.assertEqual(sorted(os.listdir(self.d)), ["link.svg", "plot.svg"])

    def test_a_new_file_takes_the_umask(self):
        old = os.umask(0o027)
        try:
            p = os.path.join(self.d, "new.svg")
            dpas.write_output(p, "<svg/>")
        finally:
            os.umask(old)
        self.assertEqual(stat.S_IMODE(os.stat(p).st_mode), 0o640)


if __name__ == "__main__":
    unittest.main(verbosity=2)
