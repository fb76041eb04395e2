# The two commands of the README:
#   make run   installs what is missing, builds (Release), runs the default suite
#   make test  installs what is missing, builds, runs every test through ctest
BUILD ?= build/release
JOBS ?= $(shell nproc)
RUN_ARGS ?=

.PHONY: run test deps test-deps build build-tests deb clean

deps:
	scripts/install-deps.sh build

test-deps:
	scripts/install-deps.sh all

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j$(JOBS)

build-tests: test-deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j$(JOBS)

run: build
	$(BUILD)/iolab run $(RUN_ARGS)

test: build-tests
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

# The Debian package $(BUILD)/iolab_<version>_amd64.deb (docs/install.md);
# scripts/check-install.sh deb FILE checks it without installing it.
deb: build
	cd $(BUILD) && cpack -G DEB
	@ls $(BUILD)/iolab_*_amd64.deb

clean:
	rm -rf build
