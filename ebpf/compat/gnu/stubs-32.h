/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Empty: glibc's <gnu/stubs.h> includes this for every target that is not
 * x86_64, so for -target bpf too, when a BPF program includes a header that
 * pulls in <stdint.h> (kernel/engine/bspe_wire.h). Debian installs only the
 * 64-bit stubs; BPF programs use no libc function, so no stub is needed.
 */
