# SPDX-License-Identifier: Apache-2.0
"""The Python package as a user installs it (issue 15): in a fresh virtual environment made with
--system-site-packages (Debian's setuptools and wheel, and later its numpy and torch), `pip
install --no-index --no-build-isolation` of a copy of python/ (offline; the copy keeps pip's
build files out of the source tree), then `import dpas` from outside the source tree:

1. with DPAS_LIBRARY naming the build's libdpas.so, the seed's reference scenario evaluates
   (accelerators 1024 and gather_traffic_ratio 64, both from the seed); the package is the
   installed one, with py.typed; numpy and torch are not imported by the core; the installed
   version is the C library's (a consistency test);
2. with the library installed by `cmake --install` into a temporary prefix, and only that
   prefix's lib folder on LD_LIBRARY_PATH, the pip-installed package finds it (no DPAS_LIBRARY);
3. the package cmake --install puts beside the library finds the library through the record
   cmake writes (no DPAS_LIBRARY, no LD_LIBRARY_PATH);
4. in a plain virtual environment (no --system-site-packages, so no setuptools or wheel from
   Debian), plain `pip install --no-index` (pip's isolated build: the package's own backend,
   standard library only) with Debian's python3 and with any other python3 first on PATH (a
   pyenv-style interpreter), the package imports and has __version__, and the Python tour
   (docs/python.md's examples, which README.md points to, as doctests: tests/python/
   doc_examples.py) runs there from outside the source tree;
   an editable install (`pip install -e`) imports the source tree's package.
Every check: help(dpas.cost) lists its parameters (their names and types, from the key table).

usage: pip_install_check.py PYTHON_SRC LIBDPAS BUILD_DIR CMAKE VERSION"""
import os
import shutil
import subprocess
import sys
import tempfile

CHECK = r"""
import importlib.metadata, os, sys
import dpas
want_dir, version, want_lib = sys.argv[1], sys.argv[2], sys.argv[3]
problems = []
where = os.path.dirname(os.path.abspath(dpas.__file__))
if not where.startswith(want_dir):
    problems.append(f"dpas imported from {where}, not from {want_dir}")
s = dpas.Scenarios.ReferenceJobAttackSurface
if round(float(s.accelerators), 4) != 1024.0:          # the seed's example
    problems.append(f"accelerators {s.accelerators}, the seed says 1024")
if s.gather_traffic_ratio != 64.0:                       # N / 2 at dp_degree 128
    problems.append(f"gather_traffic_ratio {s.gather_traffic_ratio}, want 64.0")
if not os.path.exists(os.path.join(where, "py.typed")):
    problems.append("py.typed is not installed")
for heavy in ("numpy", "torch"):
    if heavy in sys.modules:
        problems.append(f"import dpas imported {heavy}")
import inspect, pydoc
params = inspect.signature(dpas.cost).parameters
text = pydoc.render_doc(dpas.cost, renderer=pydoc.plaintext)
for p in ("dp_degree", "rule", "schedule", "calibration", "gradient_bytes_per_param"):
    if p not in params or p + ":" not in text:
        problems.append(f"help(dpas.cost) does not list {p}")
if dpas.__version__ != version:
    problems.append(f"dpas.__version__ {dpas.__version__}, project version {version}")
if dpas.version() != version:
    problems.append(f"library version {dpas.version()}, project version {version}")
if want_dir.endswith("site-packages") and importlib.metadata.version("dpas") != version:
    problems.append(f"package version {importlib.metadata.version('dpas')}, project version {version}")
# the optional parts, where the interpreter has Debian's numpy and torch (a venv made with
# --system-site-packages sees them): the kernels on an array, and the DDP hook's module
try:
    import numpy
except ImportError:
    numpy = None
if numpy is not None:
    g = numpy.array([[1, 0], [2, 0], [3, 0], [1e6, 0], [2.5, 0]], dtype=numpy.float32)
    if dpas.aggregate("median", g, f=1).tolist() != [2.5, 0.0]:     # the middle of 1 2 2.5 3 1e6
        problems.append("dpas.aggregate gives a wrong median")
    try:
        import torch  # noqa: F401
    except ImportError:
        torch = None
    if torch is not None:
        import dpas.torch
        if not callable(dpas.torch.robust_hook):
            problems.append("dpas.torch has no robust_hook")
with open("/proc/self/maps") as f:
    libs = {line.split()[-1] for line in f if "libdpas" in line}
if want_lib and not any(p.startswith(want_lib) for p in libs):
    problems.append(f"loaded {sorted(libs)}, want one under {want_lib}")
print("\n".join(problems) if problems else "ok")
sys.exit(1 if problems else 0)
"""


def run(cmd, env, cwd, what):
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"FAIL {what}: {' '.join(cmd)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout.strip()


def main():
    src, libdpas, build = (os.path.abspath(p) for p in sys.argv[1:4])
    cmake, version = sys.argv[4:6]
    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "DPAS_LIBRARY", "DPAS_LIBRARY_DIR", "LD_LIBRARY_PATH")}
    base["PIP_NO_CACHE_DIR"] = "1"
    base["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    tmp = tempfile.mkdtemp(prefix="dpas-pip-")
    try:
        pkg = os.path.join(tmp, "python")
        shutil.copytree(src, pkg, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info",
                                                                 "_config.py"))
        venv = os.path.join(tmp, "venv")
        run([sys.executable, "-m", "venv", "--system-site-packages", venv], base, tmp, "venv")
        py = os.path.join(venv, "bin", "python")
        run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation", pkg], base, tmp,
            "pip install")
        site = run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], base,
                   tmp, "site").strip()
        work = os.path.join(tmp, "elsewhere")  # not the source tree, not the copy
        os.mkdir(work)

        env = dict(base, DPAS_LIBRARY=os.path.abspath(libdpas))
        print("1.", run([py, "-c", CHECK, site, version, ""], env, work, "import with DPAS_LIBRARY"))

        prefix = os.path.join(tmp, "prefix")
        run([cmake, "--install", build, "--prefix", prefix], base, tmp, "cmake --install")
        libdir = os.path.dirname(next(os.path.join(d, f) for d, _, fs in os.walk(prefix)
                                      for f in fs if f.startswith("libdpas.so")))
        env = dict(base, LD_LIBRARY_PATH=libdir)
        print("2.", run([py, "-c", CHECK, site, version, libdir], env, work,
                        "pip package, library from cmake --install"))

        pydir = next(d for d, ds, _ in os.walk(prefix)
                     if "dpas" in ds and os.path.exists(os.path.join(d, "dpas", "__init__.py")))
        env = dict(base, PYTHONPATH=pydir)
        print("3.", run([sys.executable, "-c", CHECK, pydir, version, libdir], env, work,
                        "cmake-installed package"))
        pythons = ["/usr/bin/python3"]
        other = shutil.which("python3")
        if other and os.path.realpath(other) != os.path.realpath(pythons[0]):
            pythons.append(other)
        for i, interp in enumerate(pythons):
            plain = os.path.join(tmp, f"plain{i}")
            run([interp, "-m", "venv", plain], base, tmp, f"plain venv of {interp}")
            ppy = os.path.join(plain, "bin", "python")
            run([ppy, "-m", "pip", "install", "--no-index", pkg], base, tmp,
                f"pip install in a plain venv of {interp}")
            psite = run([ppy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        base, tmp, "site").strip()
            env = dict(base, DPAS_LIBRARY=os.path.abspath(libdpas))
            print(f"4. ({interp})", run([ppy, "-c", CHECK, psite, version, ""], env, work,
                                        f"import in a plain venv of {interp}"))
            docs = os.path.join(os.path.dirname(src), "docs", "python.md")
            print(f"4. ({interp}) the tour:",
                  run([ppy, os.path.join(os.path.dirname(os.path.abspath(__file__)), "doc_examples.py"),
                       docs], env, work, f"docs/python.md in a plain venv of {interp}").strip())
        edit = os.path.join(tmp, "editable")
        run(["/usr/bin/python3", "-m", "venv", edit], base, tmp, "venv for -e")
        epy = os.path.join(edit, "bin", "python")
        run([epy, "-m", "pip", "install", "--no-index", "-e", pkg], base, tmp, "pip install -e")
        env = dict(base, DPAS_LIBRARY=os.path.abspath(libdpas))
        print("4. (editable)", run([epy, "-c", CHECK, pkg, version, ""], env, work,
                                   "import of an editable install"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
