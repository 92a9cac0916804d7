#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs, from Debian's packages, what dpas needs to build and test; a no-op when all is there.
# With --core, only what configuring the build and building the `dpas` command need (`make run`).
set -euo pipefail
core=(cmake ninja-build gcc pkg-config libjansson-dev libyaml-dev libcmocka-dev python3
      libmicrohttpd-dev zlib1g-dev libcairo2-dev)
pkgs=(cmake ninja-build gcc pkg-config libjansson-dev libyaml-dev libcmocka-dev python3
      python3-setuptools python3-wheel python3-venv python3-pip
      openmpi-bin libopenmpi-dev libcairo2-dev libxml2-utils librsvg2-bin poppler-utils valgrind clang
      libclang-rt-14-dev python3-numpy)
# dpas serve: the HTTP server's library, and a real browser for its page test
pkgs+=(libmicrohttpd-dev chromium chromium-driver python3-selenium fonts-dejavu-core)
# its gzip (zlib's header; the library is opened at run time) and the OpenAPI test's schemas
pkgs+=(zlib1g-dev python3-jsonschema)
# the kernels' anchors and the DDP hook's tests: PyTorch (Debian's)
pkgs+=(python3-torch)
# dpas.torch.bench and the training test: scikit-learn's digits (shipped in the package, no download)
pkgs+=(python3-sklearn)
# dpas.torch.bench's Fashion-MNIST: the IDX files in /usr/share/datasets/fashion-mnist
pkgs+=(dataset-fashion-mnist)
pkgs+=(iproute2 util-linux)  # ip, tc and unshare: the emulated cluster of the cluster tests
pkgs+=(clang-format)  # the layout of the C sources (scripts/check-format.sh)
pkgs+=(python3-pint)  # dpas.Quantity.to_pint, tested (tests/python/test_quantity.py), and bench/run.sh's anchor
pkgs+=(gdb)  # counts how often a command validates its scenario (tests/cli/validations.sh)
pkgs+=(python3-matplotlib)  # dpas.plot(ax=...) draws on an Axes, tested (tests/python/test_plot_axes.py)
pkgs+=(zsh fish)  # the generated zsh and fish completions, run by their shells (tests/cli/shell_check.sh)
# the page's accessibility check: axe-core from the npm registry (tests/serve/axe), with Debian's
# npm where the machine has no npm of its own
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
case "${1:-}" in
  "") ;;
  --core) pkgs=("${core[@]}") ;;
  *) echo "install-deps: unknown option '$1' (expected --core or nothing)" >&2; exit 1 ;;
esac
axe() {  # after the packages: npm is one of them
  [ "${1:-}" = "--core" ] || [ -f "$here/../tests/serve/axe/node_modules/axe-core/axe.min.js" ] ||
    (cd "$here/../tests/serve/axe" && npm ci --no-audit --no-fund --loglevel=error)
}
here=$(cd "$(dirname "$0")" && pwd)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  axe "${1:-}"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
axe "${1:-}"
