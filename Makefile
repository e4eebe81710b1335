# tilegraph: `make demo` and `make test` do all the set-up on a fresh Debian machine.
#   make demo            bootstrap, build, run the main job (tilegraph run: llama prefill + greedy decode)
#   make test            bootstrap, build, run every test   (SANITIZE=1: ASan + UBSan build)
#   make bench           build and run the benchmarks, print ratios against in-run peers
#   make fuzz            build the libFuzzer targets with clang, run each FUZZ_SECONDS (default 60)
#   make clean           remove the build trees
SANITIZE ?= 0
JOBS ?= $(shell nproc)
ifeq ($(SANITIZE),1)
BUILD_DIR ?= build-sanitize
CMAKE_FLAGS += -DTG_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
else
BUILD_DIR ?= build
endif
BIN := $(BUILD_DIR)/bin

FUZZ_SECONDS ?= 60
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_BIN := $(FUZZ_BUILD_DIR)/tests/fuzz
# An input that makes a target use more memory than this is a finding, as a crash is.
FUZZ_FLAGS ?= -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1

.PHONY: demo test bench build bootstrap clean fuzz

bootstrap:
	scripts/bootstrap

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS)

build: bootstrap $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	$(BIN)/tilegraph run

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(BIN)/tilegraph-bench ops
	$(BIN)/tilegraph-bench graph
	$(BIN)/tilegraph-bench model
	$(BIN)/tilegraph-bench jit
	$(BIN)/tilegraph-bench gemm
	$(BIN)/tilegraph-bench evg

# The corpora start from generated models and texts and grow in $(FUZZ_BUILD_DIR)/corpus from run
# to run; what a target finds is written to $(FUZZ_BUILD_DIR)/findings.
fuzz: bootstrap
	cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTG_BUILD_FUZZERS=ON -DTG_BUILD_TESTS=OFF -DTG_BUILD_BENCH=OFF
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target fuzz_gguf fuzz_tokenizers tg_fuzz_seeds
	mkdir -p $(FUZZ_BUILD_DIR)/findings
	$(FUZZ_BIN)/tg_fuzz_seeds $(FUZZ_BUILD_DIR)/corpus/gguf $(FUZZ_BUILD_DIR)/corpus/tokenizers
	$(FUZZ_BIN)/fuzz_gguf $(FUZZ_FLAGS) -artifact_prefix=$(FUZZ_BUILD_DIR)/findings/gguf- $(FUZZ_BUILD_DIR)/corpus/gguf
	$(FUZZ_BIN)/fuzz_tokenizers $(FUZZ_FLAGS) -artifact_prefix=$(FUZZ_BUILD_DIR)/findings/tokenizers- $(FUZZ_BUILD_DIR)/corpus/tokenizers

clean:
	rm -rf build build-sanitize $(FUZZ_BUILD_DIR)
