# SPDX-License-Identifier: Apache-2.0
# A thin wrapper over CMake presets. `make run` and `make test` install what is missing first.
.PHONY: all deps build build-asan run test test-normal test-asan bench bench-scaling bench-cluster install clean fuzz format

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default

build-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan

# The first answer: only what the `dpas` command needs is installed and built (make test builds
# everything else in the same build folder).
run:
	@bash scripts/install-deps.sh --core
	@cmake --preset default >/dev/null
	@cmake --build --preset default --target dpas_cli
	./build/dpas show ReferenceJobAttackSurface
	@echo
	@echo "Next: ./build/dpas --help, the tour in README.md, the manual in docs/; make test runs every test."

test: test-normal test-asan

test-normal: build
	cd build && ctest -j2 --output-on-failure --no-tests=error

test-asan: build-asan
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest -j2 --output-on-failure --no-tests=error

bench: build bench-scaling
	bash bench/run.sh
	bash bench/kernels.sh
	bash bench/torch.sh

# How well calibrations transfer to scales they did not measure (docs/calibration.md)
bench-scaling: build
	./build/bench/bench_scaling tests/data/nccl-scaling

# Predicted against measured step time on an emulated cluster (root; docs/measuring.md)
bench-cluster: build
	bash bench/cluster.sh

fuzz: deps
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz
	FUZZ_SECONDS=$${FUZZ_SECONDS:-60} bash scripts/fuzz.sh

format:
	bash scripts/check-format.sh --fix

install: build
	cmake --install build

clean:
	rm -rf build build-asan build-fuzz
