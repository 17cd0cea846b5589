# The README's two commands. Both do all set-up: Debian packages, configure, build.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
SAMPLE := $(BUILD_DIR)/models/sample_cnn.onnx

.PHONY: all deps configure build run test format clean

all: build

deps:
	@packaging/install-deps.sh
	@packaging/install-npm.sh $(BUILD_DIR)/npm

$(BUILD_DIR)/build.ninja: | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/app/workbench/lathe-workbench $(SAMPLE)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

format:
	find engine app views tests -name '*.cpp' -o -name '*.h' | xargs clang-format-19 -i

clean:
	rm -rf $(BUILD_DIR)
