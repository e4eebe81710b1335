# tilegraph: `make demo` and `make test` do all the set-up on a fresh Debian machine.
#   make demo            bootstrap, build, run the main job (tilegraph run: llama prefill + greedy decode)
#   make test            bootstrap, build, run every test   (SANITIZE=1: ASan + UBSan build)
#   make bench           build and run the benchmarks, print ratios against in-run peers
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

.PHONY: demo test bench build bootstrap clean

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

clean:
	rm -rf build build-sanitize
