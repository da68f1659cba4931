# Kiln's developer entry points; a thin wrapper over CMake + Ninja.
#   make demo    install what is missing, build, run Kiln's main job on a built-in example
#   make check   install what is missing, build, run every test (CTest, then pytest)
#   make build   configure and build only
# KILN_BUILD_DIR picks the build directory (default ./build; a relative path is taken relative to
# this directory). The job count is min(cores, available memory / KILN_MEM_PER_JOB_MB), printed.
SHELL := /bin/bash
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD_DIR := $(abspath $(if $(KILN_BUILD_DIR),$(if $(filter /%,$(KILN_BUILD_DIR)),$(KILN_BUILD_DIR),$(ROOT)/$(KILN_BUILD_DIR)),$(ROOT)/build))
export KILN_BUILD_DIR := $(BUILD_DIR)
CMAKE_ARGS ?=

.PHONY: all deps configure build demo check test clean

all: build

deps:
	@bash $(ROOT)/scripts/install-deps.sh

configure:
	@bash $(ROOT)/scripts/configure.sh "$(BUILD_DIR)" $(CMAKE_ARGS)

build: configure
	@jobs=$$(bash $(ROOT)/scripts/job-count.sh); \
	 echo "kiln: building in $(BUILD_DIR) with $$jobs parallel jobs"; \
	 cmake --build "$(BUILD_DIR)" -j "$$jobs"

demo: deps build
	@bash $(ROOT)/scripts/demo.sh "$(BUILD_DIR)"

test: build
	@bash $(ROOT)/scripts/run-tests.sh "$(BUILD_DIR)"

check: deps test

clean:
	rm -rf "$(BUILD_DIR)"
