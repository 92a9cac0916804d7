# SPDX-License-Identifier: Apache-2.0
"""The package's version: the C library's (CMakeLists.txt project()); the build backend reads it
from here and tests/python/pip_install_check.py checks that the three agree."""
__version__ = "0.1.0"
