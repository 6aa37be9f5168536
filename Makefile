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
