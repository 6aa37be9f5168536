# The two commands of the README: `make demo` and `make test`. Both install
# missing Debian packages first (scripts/install-deps), then build with CMake.
BUILD ?= build
JOBS ?= $(shell nproc)
MAKEFLAGS += --no-print-directory

.PHONY: all deps build demo test clean

all: build

deps:
	@scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# A real model (GLM-4.5-class MoE with MLA-free GQA, from Megatron-LM flags)
# on a BSHD batch, then a DeepSeek-V3-class model on a packed batch.
demo: build
	@scripts/demo $(BUILD)/trainflops

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)

# --- Runtime validation ----------------------------------------------
# `make validate`: installs python3-torch when missing, builds, and checks
# executed mode against small PyTorch models run forward and backward
# (validation/, README "How we know the numbers are right"), one line per case.
# `make test` runs the same suite as a ctest entry, so it needs python3-torch too.
.PHONY: validate validation-deps
validate: validation-deps build
	@/usr/bin/python3 -m validation --cli $(BUILD)/trainflops

test: validation-deps

validation-deps:
	@scripts/install-deps python3-torch
# --- end of runtime validation -------------------------------------------------

# --- Speed and robustness -------------------------------------------
# `make test` also runs the library's unit tests under AddressSanitizer and
# UndefinedBehaviorSanitizer (g++, build-asan/). `make bench` runs the
# benchmarks (Release, build-release/) and prints the README's Performance
# figures; `make fuzz` runs every libFuzzer target of fuzz/ for FUZZ_SECONDS
# each (clang, build-fuzz/).
SANITIZE_BUILD ?= build-asan
SANITIZE_FLAGS = -O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
BENCH_BUILD ?= build-release
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_FLAGS = -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
.PHONY: test-sanitizers bench fuzz

test: test-sanitizers

test-sanitizers: deps
	@cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=Sanitize -DTRAINFLOPS_PYTHON=OFF \
	  "-DCMAKE_CXX_FLAGS=$(SANITIZE_FLAGS)" > /dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS) --target trainflops_tests
	@echo "unit tests under AddressSanitizer and UndefinedBehaviorSanitizer:"
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(SANITIZE_BUILD)/trainflops_tests --gtest_brief=1

bench: deps
	@scripts/install-deps libbenchmark-dev
	@cmake -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release > /dev/null
	@cmake --build $(BENCH_BUILD) -j $(JOBS) --target trainflops trainflops_bench
	@$(BENCH_BUILD)/trainflops_bench $(BENCH_ARGS)
	@if cmake --build $(BENCH_BUILD) -j $(JOBS) --target trainflops_python trainflops_python_package > /dev/null; then \
	  PYTHONPATH=$(BENCH_BUILD)/python /usr/bin/python3 bench/python_bench.py; \
	else echo "the Python module did not build: no Python figures"; fi

fuzz: deps
	@scripts/install-deps clang libclang-rt-14-dev
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Fuzz -DTRAINFLOPS_FUZZ=ON \
	  -DTRAINFLOPS_PYTHON=OFF "-DCMAKE_CXX_FLAGS=$(FUZZ_FLAGS)" > /dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers
	@fuzz/run $(FUZZ_BUILD) $(FUZZ_SECONDS)
# --- end of speed and robustness ----------------------------------------------
