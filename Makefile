# The README's two commands. Both do all set-up: Debian packages, configure, build.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
SAMPLE := $(BUILD_DIR)/models/sample_cnn.onnx

.PHONY: all deps configure build run test package format format-check clean fuzz test-asan \
        bench-wasm

all: build

deps:
	@packaging/install-deps.sh
	@packaging/install-npm.sh $(BUILD_DIR)/npm

$(BUILD_DIR)/build.ninja: | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_EXTRA)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/app/workbench/lathe-workbench $(SAMPLE)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# An installable .deb (cpack -G DEB) in $(BUILD_DIR): lathe, lathe-workbench, the C runtime's
# header, library and sources, a desktop entry, an icon and the .onnx MIME type.
package: build
	cd $(BUILD_DIR) && cpack -G DEB

format:
	find engine app views tests -name '*.cpp' -o -name '*.h' | xargs clang-format-19 -i

# Fails (and names the files) when a source file is not clang-formatted; CI runs it.
format-check: deps
	find engine app views tests -name '*.cpp' -o -name '*.h' | xargs clang-format-19 --dry-run -Werror

clean:
	rm -rf $(BUILD_DIR)

# Lathe's wasm32 export against onnxruntime-web's wasm backend, both in Node on one thread
# (tests/bench/compare_wasm.py). onnxruntime-web is installed here, into $(BUILD_DIR)/npm-bench,
# not by `make deps`: `make test` never downloads it. MobileNetV2 is generated as `make test`
# does (tests/cli/CMakeLists.txt) when it is not in $(BUILD_DIR)/models/big/ yet.
BENCH_ROUNDS ?= 3
BENCH_REPEAT ?= 20
bench-wasm: build
	@packaging/install-npm-bench.sh $(BUILD_DIR)/npm-bench
	@test -f $(BUILD_DIR)/models/big/mobilenetv2.onnx || \
	  /usr/bin/python3 tests/models/gen_models.py --out $(BUILD_DIR)/models/big --models mobilenetv2
	/usr/bin/python3 tests/bench/compare_wasm.py $(BUILD_DIR)/app/cli/lathe \
	  $(BUILD_DIR)/npm-bench/node_modules $(SAMPLE) $(BUILD_DIR)/models/big/mobilenetv2.onnx \
	  --rounds $(BENCH_ROUNDS) --repeat $(BENCH_REPEAT)

# libFuzzer targets built with clang-19 (ASan + UBSan), each run for FUZZ_SECONDS; see
# tests/fuzz/ and tools/run_fuzzers.sh. Not part of `make test` (which replays the corpus).
# Warnings are not errors there: clang-19 flags libstdc++ 12 headers as deprecated in C++20.
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
FUZZ_TARGETS := onnx_import tflite_import torchscript_output ir_parser schedule_text schedule_json npy bundle input_shapes
fuzz: deps
	@packaging/install-deps.sh packaging/debian-packages-fuzz.txt
	CC=clang-19 CXX=clang++-19 cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DLATHE_FUZZ=ON -DLATHE_BUILD_GUI=OFF -DLATHE_WERROR=OFF \
	  -DLATHE_TORCHSCRIPT=OFF
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target lathe lathe_models lathe_old_form_models lathe_tflite_models \
	  $(addprefix fuzz_,$(FUZZ_TARGETS))
	FUZZ_JOBS=$(FUZZ_JOBS) tools/run_fuzzers.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

# The unit, CLI and GUI tests with AddressSanitizer and UndefinedBehaviorSanitizer (GCC).
# GCC 12's ASan allocator is not fork-safe, so the ONNX library steps run in-process there
# (engine/frontend/onnx/CMakeLists.txt); clang-19's runtime crashes inside JIT-compiled
# kernels, so it is not used for this.
# Leaks inside Graphviz and fontconfig are suppressed (tools/lsan_suppressions.txt).
# libtorch is not built with the sanitizers: both builds leave the TorchScript importer out.
test-asan:
	LSAN_OPTIONS=suppressions=$(CURDIR)/tools/lsan_suppressions.txt \
	  $(MAKE) test BUILD_DIR=build-asan BUILD_TYPE=RelWithDebInfo CMAKE_EXTRA="-DLATHE_SANITIZE=ON -DLATHE_TORCHSCRIPT=OFF"
