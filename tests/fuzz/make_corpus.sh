#!/bin/sh
# Writes the seed corpora of the fuzz targets (DIR/<target>/): a few small well-formed
# inputs per mode, so that each 30 s run of tests/check.sh starts from valid input instead
# of searching for it. This script is their source: tests/check.sh writes them into
# build/fuzz/seeds before every fuzz stage, so they follow a format change here.
# Usage: tests/fuzz/make_corpus.sh DIR
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1

seed() { # target name printf-format [args...]
	t=$1 n=$2
	shift 2
	mkdir -p "$dir/$t"
	# shellcheck disable=SC2059
	printf "$@" >"$dir/$t/$n"
}

# text_parsers_fuzz: first byte = parser (0 quantity, 1 rails, 2 rendezvous, 3 reserved
# ports and PMI2 messages,
# 4 shell words, 5 bsprun command line with NUL-separated words).
t=text_parsers_fuzz
seed "$t" quantity '\000125M'
seed "$t" quantity-nan '\000nan'
seed "$t" quantity-exp '\0001.5e3k'
seed "$t" rails '\001127.0.0.1,127.0.0.2'
seed "$t" rendezvous-tcp '\002tcp:[::1]:7000'
seed "$t" rendezvous-unix '\002unix:/tmp/bsp.sock'
seed "$t" resv-ports '\00312000-12003'
seed "$t" pmi2 '\003cmd=kvs-get-response;rc=0;found=TRUE;value=tcp:127.0.0.1:4;;x;'
seed "$t" words '\004ssh -p 22 "{host}" '\''a b'\'' c\\ d'
seed "$t" cmdline '\005-n\0004\000--hosts\000a,b\000--launch\000ssh -x {host}\000--map=block\000prog\000arg one'
seed "$t" cmdline-rsh '\005--np=3\000-H\000h1\000--launch\000rsh {host} -l u\000--\000./a.out'

# messaging_fuzz: FuzzedDataProvider takes the mode from the LAST byte (0 raw bytes:
# then nprocs from the byte before it, the message is the rest). Messages are
# little-endian with the header "BSPM", type, superstep u64, aux u32.
t=messaging_fuzz
hdr='BSPM'
# Counts (type 2), superstep 1: data_bytes 16, records 2, one get (id 0, slot 0, offset 4).
seed "$t" raw-counts "$hdr"'\002\001\0\0\0\0\0\0\0\0\0\0\0''\020\0\0\0\0\0\0\0''\002\0\0\0''\001\0\0\0''\0\0\0\0''\0\0\0\0''\004\0\0\0\0\0\0\0''\010\0\0\0\0\0\0\0''\002\000'
# Barrier (type 1), superstep 1, round 1, p = 2: the summary of process 0 alone (first 0,
# members 1, senders 1, all ready; its contribution: sync, no tag size, no pushes or pops;
# no push lists) and one fan-in counter (1).
seed "$t" raw-barrier "$hdr"'\001\001\0\0\0\0\0\0\0\001\0\0\0''\0\0\0\0''\001\0\0\0''\001\0\0\0''\001''\200''\377\377\377\377''\0\0\0\0''\0\0\0\0''\0\0\0\0''\001\0\0\0''\001\0\0\0''\002\000'
# Data (type 3), superstep 1, unit 0 of 1: one Put record (slot 0, offset 8) of 4 bytes.
seed "$t" raw-data "$hdr"'\003\001\0\0\0\0\0\0\0\0\0\0\0''\001\0\0\0''\001''\0\0\0\0''\010\0\0\0\0\0\0\0''\004\0\0\0''\0\0\0\0''\004\0\0\0''abcd''\002\000'

# launch_wire_fuzz: mode from the last byte (0 framing: the stream is the rest, pieces
# cut by bytes taken from the end). Frames are big-endian type, length, body.
t=launch_wire_fuzz
seed "$t" framing '\0\0\0\002\0\0\0\005hello\0\0\0\003\0\0\0\0''\007\003\000'
