# SPDX-License-Identifier: Apache-2.0
"""The Python package's own PEP 517 build backend: standard library only, so that `pip install
./python` works offline in any virtual environment (pip's isolated build environment has nothing
to download: pyproject.toml requires nothing). It builds a pure-Python wheel of the dpas package
from pyproject.toml's [project] table, and an sdist of this folder; editable installs point a
.pth file at this folder. The wheel format is PEP 427 (and the binary distribution format
specification of packaging.python.org); the metadata is Core Metadata 2.1."""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
# Files of the package: what the wheel carries (no caches, no build-time config of a source tree).
SKIP_DIRS = {"__pycache__"}
SKIP_FILES = {"_config.py"}


def _project():
    path = os.path.join(HERE, "pyproject.toml")
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib
        except ImportError as e:
            raise RuntimeError("building dpas needs Python >= 3.11 (tomllib) or the tomli "
                               "package, to read " + path) from e
    with open(path, "rb") as f:
        proj = tomllib.load(f).get("project")
    if not proj or "name" not in proj:
        raise RuntimeError(path + ": [project] needs a name")
    if "version" not in proj:  # dynamic: the package's own __version__
        vpath = os.path.join(HERE, "dpas", "_version.py")
        with open(vpath, encoding="utf-8") as f:
            m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
        if not m:
            raise RuntimeError(vpath + ' has no line __version__ = "..."')
        proj["version"] = m.group(1)
    return proj


def _metadata(proj):
    lines = ["Metadata-Version: 2.1", "Name: " + proj["name"], "Version: " + proj["version"]]
    if proj.get("description"):
        lines.append("Summary: " + proj["description"])
    if proj.get("requires-python"):
        lines.append("Requires-Python: " + proj["requires-python"])
    lic = proj.get("license")
    if isinstance(lic, dict) and lic.get("text"):
        lines.append("License: " + lic["text"])
    lines += ["Classifier: " + c for c in proj.get("classifiers", [])]
    lines += ["Requires-Dist: " + d for d in proj.get("dependencies", [])]
    for extra, deps in sorted(proj.get("optional-dependencies", {}).items()):
        lines.append("Provides-Extra: " + extra)
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    return "\n".join(lines) + "\n"


def _package_files():
    root = os.path.join(HERE, "dpas")
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        for f in sorted(files):
            if f in SKIP_FILES or f.endswith((".pyc", ".pyo")):
                continue
            full = os.path.join(d, f)
            yield full, os.path.relpath(full, HERE).replace(os.sep, "/")


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _dist_info(proj):
    return f"{proj['name']}-{proj['version']}.dist-info"


def _write_wheel(wheel_directory, entries):
    """entries: (archive name, bytes). Adds the dist-info files and RECORD; returns the name."""
    proj = _project()
    name = f"{proj['name']}-{proj['version']}-py3-none-any.whl"
    info = _dist_info(proj)
    entries = list(entries) + [
        (info + "/METADATA", _metadata(proj).encode()),
        (info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: dpas_build\nRoot-Is-Purelib: true\n"
                          b"Tag: py3-none-any\n"),
        (info + "/top_level.txt", b"dpas\n"),
    ]
    lic = os.path.join(os.path.dirname(HERE), "LICENSE")
    if os.path.exists(lic):
        with open(lic, "rb") as f:
            entries.append((info + "/LICENSE", f.read()))
    record = [_record_line(n, d) for n, d in entries] + [info + "/RECORD,,"]
    entries.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))
    path = os.path.join(wheel_directory, name)
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in entries:
            zi = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, d)
    os.replace(tmp, path)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    proj = _project()
    info = os.path.join(metadata_directory, _dist_info(proj))
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(_metadata(proj))
    return _dist_info(proj)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    entries = []
    for full, arc in _package_files():
        with open(full, "rb") as f:
            entries.append((arc, f.read()))
    return _write_wheel(wheel_directory, entries)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [("dpas_editable.pth", (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    proj = _project()
    base = f"{proj['name']}-{proj['version']}"
    path = os.path.join(sdist_directory, base + ".tar.gz")
    files = [(os.path.join(HERE, "pyproject.toml"), "pyproject.toml"),
             (os.path.abspath(__file__), "_build/" + os.path.basename(__file__))]
    files += list(_package_files())
    pkg_info = _metadata(proj).encode()
    with tarfile.open(path + ".part", "w:gz", format=tarfile.PAX_FORMAT) as t:
        for full, arc in files:
            t.add(full, arcname=base + "/" + arc, recursive=False)
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size = len(pkg_info)
        t.addfile(ti, io.BytesIO(pkg_info))
    os.replace(path + ".part", path)
    return base + ".tar.gz"
