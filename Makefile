# Kiln's developer entry points: a thin wrapper over the scripts in scripts/ (which need only
# bash, so a machine without make can run them directly).
#   make demo    install what is missing, build, run Kiln's main job (scripts/demo.sh)
#   make check   install what is missing, build, run every test (scripts/check.sh)
#   make build   configure (once) and build only (scripts/build.sh)
#   make test    build, then run every test without touching packages
#   make deps    install missing Debian packages only (scripts/install-deps.sh)
#   make clean   remove the build directory
# KILN_BUILD_DIR picks the build directory (default ./build; a relative path is taken relative to
# this directory, never to the current one). The job count is max(1, min(cores, available memory
# / KILN_MEM_PER_JOB_MB)), printed first (scripts/job-count.sh). CMAKE_ARGS go to the configure.
SHELL := /bin/bash
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
CMAKE_ARGS ?=

.NOTPARALLEL:
.PHONY: all deps build demo check test clean

all: build

deps:
	@bash $(ROOT)/scripts/install-deps.sh

build:
	@bash $(ROOT)/scripts/build.sh $(CMAKE_ARGS)

demo:
	@bash $(ROOT)/scripts/demo.sh

check:
	@bash $(ROOT)/scripts/check.sh

test: build
	@bash $(ROOT)/scripts/run-tests.sh

clean:
	rm -rf "$$(bash $(ROOT)/scripts/build-dir.sh)"
