#!/usr/bin/env bash
# make install / make uninstall into a staging directory, then use only what was
# installed (Documentation/testing.rst, stage "install"):
#   1. `make install DESTDIR=STAGE PREFIX=/opt/afbsp` writes only under STAGE/opt/afbsp,
#      every promised file is there, libbsp.so has its soname;
#   2. an example from the installed documentation directory is built with the installed
#      bspcc and run with the installed bsprun; built again with pkg-config (shared and
#      static libbsp) and run; with root, these runs happen in a mount namespace where
#      the source tree is hidden under an empty tmpfs, so no path into it can work;
#   3. every installed man page renders with `man --warnings -l` without a word on stderr,
#      and every function of bsp.h and bsc.h has a page;
#   4. `dkms add` + `dkms build` of the installed module source against the newest
#      /lib/modules/<ver>/build, in a private DKMS tree (nothing under /var/lib/dkms);
#   5. `make uninstall` leaves no file in the staging directory.
# Prints "install: N passed, N failed" and exits non-zero on any failure.
# Usage: tests/install/install_test.sh   (from anywhere; needs `make all` done)
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bsp-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage=$work/stage
prefix=/opt/afbsp
root=$stage$prefix
pass=0
fail=0

ok() {
	echo "ok: $*"
	pass=$((pass + 1))
}
bad() {
	echo "FAIL: $*"
	fail=$((fail + 1))
}

# ---- 1. install --------------------------------------------------------------------
if ! make -s -C "$top" install DESTDIR="$stage" PREFIX="$prefix" >"$work/install.log" 2>&1; then
	cat "$work/install.log"
	bad "make install failed"
	echo "install: $pass passed, $fail failed"
	exit 1
fi
outside=$(cd "$stage" && { find . -mindepth 1 ! -path ".${prefix}/*" ! -path . |
	grep -vxE "\.(/opt|/opt/afbsp)" || true; })
if [ -z "$outside" ]; then ok "make install wrote only under DESTDIR/PREFIX"; else bad "written outside $prefix: $outside"; fi

want=(bin/bsprun bin/bspcc bin/bspc++ bin/bspprobe bin/bsp-ss bin/bsp-fault bin/bsp-xdp bin/bspprof
	lib/libbsp.so lib/libbsp.so.1 lib/libbsp.a lib/pkgconfig/bsp.pc
	include/bsp.h include/bsc.h include/bsp.hpp include/linux/bsp.h
	lib/ip/link_bsp.so lib/wireshark/plugins/af_bsp.lua
	lib/bsp/bpf/xdp_fault.bpf.o lib/bsp/bpf/xdp_bsp.bpf.o src/af_bsp-1.0.0/dkms.conf
	src/af_bsp-1.0.0/Kbuild src/af_bsp-1.0.0/xdp.c
	src/af_bsp-1.0.0/include/uapi/linux/bsp.h
	share/man/man1/bsprun.1 share/man/man1/bspcc.1 share/man/man1/bspc++.1
	share/man/man1/bspprobe.1 share/man/man8/bsp-ss.8 share/man/man7/bsp.7
	share/doc/bsp/examples/modules-load.d/af_bsp.conf share/doc/bsp/examples/modprobe.d/af_bsp.conf
	share/doc/bsp/examples/inprod.c share/bsp/install-manifest)
missing=()
for f in "${want[@]}"; do [ -e "$root/$f" ] || missing+=("$f"); done
if [ ${#missing[@]} -eq 0 ]; then ok "all ${#want[@]} promised files installed"; else bad "not installed: ${missing[*]}"; fi
for f in bin/bsprun bin/bspcc bin/bspc++ bin/bspprobe bin/bsp-ss bin/bsp-fault bin/bsp-xdp bin/bspprof; do
	[ -x "$root/$f" ] || bad "$f is not executable"
done
soname=$(readelf -d "$root/lib/libbsp.so" 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ "$soname" = libbsp.so.1 ] && [ "$(readlink "$root/lib/libbsp.so")" = libbsp.so.1 ]; then
	ok "libbsp.so has soname libbsp.so.1"
else
	bad "libbsp soname '$soname', libbsp.so -> $(readlink "$root/lib/libbsp.so")"
fi
# The installed text files (wrappers, pkg-config file, configuration) must not name the
# source or build tree.
if leaks=$(grep -rlI -- "$top" "$root" 2>/dev/null | grep -v '\.[1-8]$\|/src/af_bsp-'); then
	bad "installed files name the source tree: $leaks"
else
	ok "no installed script or pkg-config file names $top"
fi

# ---- 2. build and run with the installed tools only ----------------------------------
mkdir -p "$work/prog"
cp "$root/share/doc/bsp/examples/inprod.c" "$work/prog/"
n=100000
expect=$(awk -v n=$n 'BEGIN { s = 0; for (i = 0; i < n; i++) s += (i % 7 + 1) * (i % 5 + 1); printf "%.0f", s }')
want_line="inner product of n=$n on 4 processes: $expect (correct)"
cat >"$work/prog/build-and-run.sh" <<EOF
#!/bin/sh
# Runs with PATH = the installed bin/ + the system's; nothing of the source tree.
set -e
cd "$work/prog"
export PATH="$root/bin:/usr/bin:/bin"
unset LD_LIBRARY_PATH PKG_CONFIG_PATH
echo "== bspcc"
bspcc -O2 inprod.c -o inprod_bspcc
bsprun -n 4 ./inprod_bspcc $n
echo "== libbsp of inprod_bspcc: \$(readlink -f \$(ldd ./inprod_bspcc | awk '/libbsp/ { print \$3 }'))"
export PKG_CONFIG_PATH="$root/lib/pkgconfig"
libdir=\$(pkg-config --variable=libdir bsp)
echo "== pkg-config (shared): \$(pkg-config --cflags --libs bsp)"
cc -O2 inprod.c \$(pkg-config --cflags --libs bsp) -Wl,-rpath,"\$libdir" -o inprod_pc
bsprun -n 4 ./inprod_pc $n
echo "== libbsp of inprod_pc: \$(readlink -f \$(ldd ./inprod_pc | awk '/libbsp/ { print \$3 }'))"
echo "== pkg-config (static): \$(pkg-config --static --libs bsp)"
cc -O2 inprod.c \$(pkg-config --cflags bsp) -L"\$libdir" -Wl,-Bstatic -lbsp -Wl,-Bdynamic \
	\$(pkg-config --static --libs-only-l bsp | sed 's/-lbsp\b//') -o inprod_static
BSP_NPROCS=4 ./inprod_static $n
echo "== libbsp of inprod_static: \$(ldd ./inprod_static | grep -c libbsp) (0: linked statically)"
EOF
chmod +x "$work/prog/build-and-run.sh"
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
	# Hide the source tree (and with it build/) for the whole build and run.
	how="in a mount namespace with $top hidden"
	run=(unshare -m --propagation private sh -c "mount -t tmpfs none '$top' && exec '$work/prog/build-and-run.sh'")
else
	how="with the source tree visible (no mount namespace here: not root, or unshare -m refused)"
	run=("$work/prog/build-and-run.sh")
fi
timeout 300 "${run[@]}" >"$work/run.log" 2>&1
rc=$?
sed 's/^/    /' "$work/run.log"
nlines=$(grep -cxF "$want_line" "$work/run.log")
if [ $rc -eq 0 ] && [ "$nlines" -eq 3 ] &&
	grep -qx "== libbsp of inprod_bspcc: $root/lib/libbsp.so.1.0.0" "$work/run.log" &&
	grep -qx "== libbsp of inprod_pc: $root/lib/libbsp.so.1.0.0" "$work/run.log" &&
	grep -q "^== libbsp of inprod_static: 0 " "$work/run.log" &&
	! grep -qF -- "$top" "$work/run.log"; then
	ok "inprod built with installed bspcc and with pkg-config (shared, static), ran $how: 3 x '$want_line'"
else
	bad "build/run with the installed tree (status $rc, $nlines correct results of 3) $how"
fi

# ---- 3. man pages --------------------------------------------------------------------
pages=0
badpages=()
while IFS= read -r page; do
	pages=$((pages + 1))
	# From the man root, as man resolves ".so man3/page.3" of an alias page.
	out=$(cd "$root/share/man" && MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	[ -z "$out" ] || badpages+=("$page: $out")
done < <(cd "$root/share/man" && find . -type f -name '*.[1-8]' | sed 's|^\./||' | sort)
if [ ${#badpages[@]} -eq 0 ] && [ $pages -gt 0 ]; then
	ok "$pages man pages render without warnings"
else
	bad "man pages with warnings: ${badpages[*]}"
fi
nopage=()
for fn in $(grep -ohE '\bbs[pc]_[a-zA-Z_]*\(' "$root/include/bsp.h" "$root/include/bsc.h" | tr -d '(' | sort -u); do
	[ -f "$root/share/man/man3/$fn.3" ] || nopage+=("$fn")
done
if [ ${#nopage[@]} -eq 0 ]; then ok "every function of bsp.h and bsc.h has a section-3 page"; else bad "no man page for: ${nopage[*]}"; fi

# ---- 4. dkms build ---------------------------------------------------------------------
kver=$(for d in /lib/modules/*/build; do [ -d "$d" ] && basename "$(dirname "$d")"; done | sort -V | tail -n 1)
if ! command -v dkms >/dev/null; then
	echo "SKIP: dkms build: dkms is not installed (make deps installs it)"
elif [ -z "$kver" ]; then
	echo "SKIP: dkms build: no /lib/modules/<ver>/build (make deps installs linux-headers-amd64)"
else
	# A private DKMS tree and signing key: nothing is written under /var/lib/dkms or
	# /usr/src, so this needs no root.
	dk=$work/dkms
	mkdir -p "$dk"
	export mok_signing_key=$dk/mok.key mok_certificate=$dk/mok.pub
	d=(dkms --dkmstree "$dk" --sourcetree "$root/src")
	if "${d[@]}" add -m af_bsp -v 1.0.0 >"$work/dkms.log" 2>&1 &&
		nice "${d[@]}" build -m af_bsp -v 1.0.0 -k "$kver" >>"$work/dkms.log" 2>&1; then
		ko=$(find "$dk/af_bsp/1.0.0/$kver" -name 'af_bsp.ko*' | head -n 1)
		case $ko in *.xz) xz -dkf "$ko" && ko=${ko%.xz} ;; esac
		vm=$(modinfo -F vermagic "$ko" 2>/dev/null | awk '{ print $1 }')
		if [ "$vm" = "$kver" ]; then
			ok "dkms build: $(basename "$ko") for $kver (vermagic $vm)"
		else
			bad "dkms build made '$ko' with vermagic '$vm', not $kver"
		fi
	else
		tail -n 30 "$work/dkms.log"
		find "$dk" -name make.log -exec tail -n 30 {} \;
		bad "dkms add/build against $kver failed"
	fi
fi

# ---- 5. uninstall ------------------------------------------------------------------------
if make -s -C "$top" uninstall DESTDIR="$stage" PREFIX="$prefix" >"$work/uninstall.log" 2>&1; then
	left=$(find "$stage" ! -type d)
	if [ -z "$left" ]; then
		ok "make uninstall removed every installed file ($(find "$stage" -type d | wc -l) empty standard directories left)"
	else
		bad "left after make uninstall: $left"
	fi
else
	cat "$work/uninstall.log"
	bad "make uninstall failed"
fi
if make -s -C "$top" uninstall DESTDIR="$stage" PREFIX="$prefix" >"$work/uninstall2.log" 2>&1 ||
	! grep -q "nothing to uninstall" "$work/uninstall2.log"; then
	bad "a second make uninstall did not refuse: $(cat "$work/uninstall2.log")"
else
	ok "a second make uninstall refuses: $(grep 'nothing to uninstall' "$work/uninstall2.log")"
fi

echo "install: $pass passed, $fail failed"
[ $fail -eq 0 ]
