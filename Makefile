# AF_BSP top-level build. It orchestrates the real build systems:
#   kernel/  kbuild against /lib/modules/<ver>/build of the Debian kernel the VM boots
#   ebpf/    clang -target bpf + bpftool gen skeleton
#   userlib/ tools/ tests/  CMake (superproject: tests/CMakeLists.txt)
# See README.md for the quickstart and Documentation/testing.rst for `make check`.

SHELL := /bin/bash
JOBS ?= 2
BUILD := $(CURDIR)/build
# Kernel version of the VM: the newest /lib/modules/<ver> that has a build tree.
KVER ?= $(shell ls -1 /lib/modules 2>/dev/null | while read v; do \
	[ -d /lib/modules/$$v/build ] && echo $$v; done | sort -V | tail -n 1)
export KVER

CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo

# Debian packages the project needs to build, test and benchmark (make deps).
DEPS := build-essential cmake pkg-config git ca-certificates \
	clang llvm lld libclang-rt-14-dev clang-format clang-tidy shellcheck \
	libgtest-dev libgmock-dev libbenchmark-dev \
	libbpf-dev bpftool libelf-dev zlib1g-dev libxdp-dev xdp-tools \
	linux-image-amd64 linux-headers-amd64 linux-source-6.1 sparse \
	flex bison libssl-dev dwarves \
	qemu-system-x86 busybox-static kmod cpio xz-utils \
	iproute2 iputils-ping procps util-linux ethtool iperf3 python3 python3-docutils bc tshark \
	openmpi-bin libopenmpi-dev libpmi2-0-dev librsvg2-bin \
	dkms man-db groff-base openssl \
	slurm-wlm munge

.PHONY: all kernel ebpf user deps install uninstall check check-style check-unit check-unit-tsan check-fuzz \
	check-install check-slurm check-vm check-vm-selftest demo vm-shell clean help \
	debug-kernel kernel-debug check-debug

all: kernel ebpf user compile_commands.json

help:
	@echo "targets: all (default) kernel ebpf user deps install uninstall check demo vm-shell clean"
	@echo "check parts: check-style check-unit check-unit-tsan check-fuzz check-install check-slurm check-vm check-vm-selftest"
	@echo "debug kernel: debug-kernel kernel-debug check-debug (Documentation/testing.rst)"

kernel:
	$(MAKE) -C kernel KVER=$(KVER)

ebpf:
	$(MAKE) -C ebpf O=$(BUILD)/ebpf

$(BUILD)/default/CMakeCache.txt:
	cmake -S tests -B $(BUILD)/default $(CMAKE_FLAGS)

user: $(BUILD)/default/CMakeCache.txt ebpf
	cmake --build $(BUILD)/default -j$(JOBS)

compile_commands.json: user
	ln -sf build/default/compile_commands.json $@

deps:
	@if [ "$$(id -u)" != 0 ]; then echo "make deps installs Debian packages: run it as root"; exit 1; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEPS)

# Install libbsp, the tools, man pages, the module's DKMS source, ... under
# $(DESTDIR)$(PREFIX); uninstall removes exactly what install wrote (its list is
# $(PREFIX)/share/bsp/install-manifest). Documentation/build.rst, "Installing".
PREFIX ?= /usr/local
export DESTDIR

install: user
	packaging/install.sh install $(BUILD)/default $(PREFIX)

uninstall:
	packaging/install.sh uninstall $(PREFIX)

# The whole suite: quality gates, unit tests under ASan/UBSan (those with threads also
# under TSan), bounded fuzzing, VM integration cases and the harness self-test.
# Ends with "N passed, N failed".
check: all
	tests/check.sh all

check-style check-unit check-unit-tsan check-fuzz check-install check-slurm check-vm check-vm-selftest: all
	tests/check.sh $(patsubst check-%,%,$@)

# The debug kernel (KASAN, lockdep, KFENCE, kmemleak...), cached under
# /var/cache/af_bsp/debug-kernel/<key>/; af_bsp.ko built for it into
# build/kernel-debug/; the VM suite and the checkers' self-test on it.
debug-kernel:
	tests/vm/debug-kernel

kernel-debug: debug-kernel
	tests/vm/debug-kernel --build-module kernel $(BUILD)/kernel-debug

check-debug: all kernel-debug
	tests/check.sh vm-debug vm-selftest-debug

demo: all
	tests/vm/run-vm --script tests/vm/demo/demo.sh

vm-shell: all
	tests/vm/run-vm --shell

clean:
	-$(MAKE) -C kernel clean
	rm -rf $(BUILD) compile_commands.json
