# The two commands of the README: `make demo` and `make test`. Both install
# missing Debian packages first (scripts/install-deps), then build with CMake.
#
#   make demo       builds the command-line tool and the Python module
#                   (build/python), then runs scripts/demo
#   make test       builds everything (the web page too), runs every ctest
#                   entry (unit, reference vectors, command line, install,
#                   Python, PyTorch validation, the commands the docs show, the
#                   page in Chromium), then the unit tests and the command
#                   line on hostile input under AddressSanitizer and
#                   UndefinedBehaviorSanitizer (build-asan/), and the
#                   threads tests under ThreadSanitizer (build-tsan/); its build treats
#                   compiler warnings as errors
#   make web        the web page: the library in WebAssembly (Debian's
#                   emscripten, build/web-wasm/) and its static page (build/web/)
#   make validate   the PyTorch runtime check alone, one line per case
#   make bench      benchmarks in a Release build (build-release/), then the
#                   Python figures; MEGATRON_LM=/path/to/Megatron-LM times
#                   Megatron-LM's own function beside the drop-in
#   make fuzz       every libFuzzer target of fuzz/ for FUZZ_SECONDS each
#                   (clang, build-fuzz/)
BUILD ?= build
JOBS ?= $(shell nproc)
MAKEFLAGS += --no-print-directory
SANITIZE_BUILD ?= build-asan
SANITIZE_FLAGS = -O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TSAN_BUILD ?= build-tsan
TSAN_FLAGS = -O1 -g1 -fsanitize=thread
# ccache, where the machine has it, for the sanitizer builds (each builds the
# library and its unit tests once more).
CCACHE = $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# ON in `make test`: a warning fails the build.
WERROR ?= OFF
BENCH_BUILD ?= build-release
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_FLAGS = -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
WEB_BUILD ?= $(BUILD)/web-wasm
WEB_PAGE ?= $(BUILD)/web
# Debian's emscripten runs its JavaScript tools with the machine's node, which
# finds Debian's node modules (acorn) only here.
WEB_ENV = NODE_PATH=/usr/share/nodejs

.PHONY: all deps configure build demo test test-sanitizers test-tsan web validate bench fuzz clean

all: build

deps:
	@scripts/install-deps

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINFLOPS_WERROR=$(WERROR) > /dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: configure
	@cmake --build $(BUILD) -j $(JOBS) --target trainflops trainflops_python trainflops_python_package
	@scripts/demo $(BUILD)/trainflops

test: WERROR = ON
test: build test-sanitizers test-tsan web
	@scripts/install-deps chromium
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-sanitizers: deps
	@cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=Sanitize -DTRAINFLOPS_PYTHON=OFF $(CCACHE) \
	  "-DCMAKE_CXX_FLAGS=$(SANITIZE_FLAGS)" > /dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS) --target trainflops_tests trainflops_cli_tests
	@echo "unit tests under AddressSanitizer and UndefinedBehaviorSanitizer:"
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(SANITIZE_BUILD)/trainflops_tests --gtest_brief=1
	@echo "the command line and batch on hostile input, under the same sanitizers:"
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(SANITIZE_BUILD)/trainflops_cli_tests --gtest_brief=1 \
	  --gtest_filter='HostileInputTest.*:CliTest.HostileInputsAreErrorsNotCrashes:CliTest.BatchKeepsGoingAfterABadRecord'

# The tests that share counters, sweepers and SeqStats among threads
# (ThreadsTest.*, src/accounting/threads_test.cc) under ThreadSanitizer: any
# data race they meet fails the run. The library starts no thread itself, so
# the single-threaded tests could meet none.
test-tsan: deps
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Sanitize -DTRAINFLOPS_PYTHON=OFF $(CCACHE) \
	  "-DCMAKE_CXX_FLAGS=$(TSAN_FLAGS)" > /dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target trainflops_thread_tests
	@echo "the threads tests under ThreadSanitizer:"
	@TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $(TSAN_BUILD)/trainflops_thread_tests --gtest_brief=1

web: deps
	@scripts/install-deps emscripten
	@command -v npm > /dev/null || scripts/install-deps nodejs npm
	@$(WEB_ENV) emcmake cmake -S web -B $(WEB_BUILD) -DTRAINFLOPS_PAGE_DIR=$(abspath $(WEB_PAGE)) > /dev/null
	@$(WEB_ENV) cmake --build $(WEB_BUILD) -j $(JOBS)
	@echo "the page: $(WEB_PAGE)/index.html (or: python3 -m http.server -d $(WEB_PAGE), then http://localhost:8000)"

validate: build
	@/usr/bin/python3 -m validation --cli $(BUILD)/trainflops

bench: deps
	@scripts/install-deps libbenchmark-dev time
	@cmake -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release > /dev/null
	@cmake --build $(BENCH_BUILD) -j $(JOBS) --target trainflops trainflops_bench
	@$(BENCH_BUILD)/trainflops_bench $(BENCH_ARGS)
	@if cmake --build $(BENCH_BUILD) -j $(JOBS) --target trainflops_python trainflops_python_package > /dev/null; then \
	  PYTHONPATH=$(BENCH_BUILD)/python TRAINFLOPS_CLI=$(BENCH_BUILD)/trainflops /usr/bin/python3 bench/python_bench.py; \
	else echo "the Python module did not build: no Python figures"; fi

fuzz: deps
	@scripts/install-deps clang libclang-rt-14-dev
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Fuzz -DTRAINFLOPS_FUZZ=ON \
	  -DTRAINFLOPS_PYTHON=OFF "-DCMAKE_CXX_FLAGS=$(FUZZ_FLAGS)" > /dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers
	@fuzz/run $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD) $(TSAN_BUILD) $(BENCH_BUILD) $(FUZZ_BUILD)
