# tilegraph: each target installs what it needs (scripts/bootstrap <target>), configures, and builds
# only what it runs.
#   make demo        the library and the CLI, then `tilegraph run` (llama prefill + greedy decode)
#   make test        what the tests need, then every test   (SANITIZE=1: ASan + UBSan build)
#   make bench       the benchmarks, then their suites (bench/RESULTS.md)
#   make compiler    the TX8 compiler (needs MLIR 15)
#   make fuzz        the libFuzzer targets, built with clang, each run FUZZ_SECONDS (default 60)
#   make clean       remove the build trees
# Configure options go in CMAKE_FLAGS (make test CMAKE_FLAGS=-DTG_BUILD_COMPILER=OFF). The configure
# step runs every time, which costs a second or two, so options given later take effect in a
# build directory that already exists.
SANITIZE ?= 0
JOBS ?= $(shell nproc)
ifeq ($(SANITIZE),1)
BUILD_DIR ?= build-sanitize
SANITIZE_FLAGS := -DTG_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
else
BUILD_DIR ?= build
SANITIZE_FLAGS :=
endif
BIN := $(BUILD_DIR)/bin
# What each target turns on or off comes first, so that CMAKE_FLAGS can override it.
CONFIGURE = cmake -S . -B $(BUILD_DIR) -G Ninja --no-warn-unused-cli $(SANITIZE_FLAGS)

FUZZ_SECONDS ?= 60
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_BIN := $(FUZZ_BUILD_DIR)/tests/fuzz
# An input that makes a target use more memory than this is a finding, as a crash is.
FUZZ_FLAGS ?= -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1

.PHONY: demo test bench compiler fuzz clean

# The demo needs neither MLIR nor torch: the CLI is built without the TX8 compiler (its `compile`
# subcommand says how to get it), and configuring does not look for torch.
demo:
	scripts/bootstrap demo
	$(CONFIGURE) -DTG_BUILD_COMPILER=OFF -DTG_BUILD_PYTHON=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS) --target tilegraph-cli
	$(BIN)/tilegraph run

test:
	scripts/bootstrap test
	$(CONFIGURE) -DTG_BUILD_TESTS=ON -DTG_BUILD_COMPILER=ON -DTG_BUILD_PYTHON=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS)
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench:
	scripts/bootstrap bench
	$(CONFIGURE) -DTG_BUILD_BENCH=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS) --target tilegraph-bench
	$(BIN)/tilegraph-bench ops
	$(BIN)/tilegraph-bench graph
	$(BIN)/tilegraph-bench model
	$(BIN)/tilegraph-bench jit
	$(BIN)/tilegraph-bench gemm
	$(BIN)/tilegraph-bench evg

compiler:
	scripts/bootstrap compiler
	$(CONFIGURE) -DTG_BUILD_COMPILER=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The corpora start from generated models and texts and grow in $(FUZZ_BUILD_DIR)/corpus from run
# to run; what a target finds is written to $(FUZZ_BUILD_DIR)/findings.
fuzz:
	scripts/bootstrap fuzz
	cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja --no-warn-unused-cli -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTG_BUILD_FUZZERS=ON -DTG_BUILD_TESTS=OFF -DTG_BUILD_BENCH=OFF \
	  -DTG_BUILD_COMPILER=OFF -DTG_BUILD_PYTHON=OFF $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target fuzz_gguf fuzz_tokenizers tg_fuzz_seeds
	mkdir -p $(FUZZ_BUILD_DIR)/findings
	$(FUZZ_BIN)/tg_fuzz_seeds $(FUZZ_BUILD_DIR)/corpus/gguf $(FUZZ_BUILD_DIR)/corpus/tokenizers
	$(FUZZ_BIN)/fuzz_gguf $(FUZZ_FLAGS) -artifact_prefix=$(FUZZ_BUILD_DIR)/findings/gguf- $(FUZZ_BUILD_DIR)/corpus/gguf
	$(FUZZ_BIN)/fuzz_tokenizers $(FUZZ_FLAGS) -artifact_prefix=$(FUZZ_BUILD_DIR)/findings/tokenizers- $(FUZZ_BUILD_DIR)/corpus/tokenizers

clean:
	rm -rf build build-sanitize $(FUZZ_BUILD_DIR)
