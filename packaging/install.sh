#!/usr/bin/env bash
# make install / make uninstall (Documentation/build.rst, "Installing").
#   packaging/install.sh install BUILD_DIR PREFIX
#   packaging/install.sh uninstall PREFIX
# DESTDIR (environment) is prepended to every path written or removed, as usual.
# install runs the CMake install rules of BUILD_DIR (the one list of what is installed:
# the install() next to each target and packaging/CMakeLists.txt) and records what it
# wrote, relative to PREFIX, in PREFIX/share/bsp/install-manifest. uninstall removes
# exactly the files listed there, then the manifest, then the directories of ours
# (a path component containing "bsp") that are left empty. Nothing outside
# DESTDIR/PREFIX is written or removed; ldconfig is not run (see the documentation).
set -euo pipefail

manifest_rel=share/bsp/install-manifest

die() {
	echo "install.sh: $*" >&2
	exit 1
}

check_prefix() {
	case $1 in
	/*) ;;
	*) die "PREFIX must be an absolute path (got '$1')" ;;
	esac
}

do_install() {
	local build=$1 prefix=$2 dest cm line
	check_prefix "$prefix"
	[ -f "$build/cmake_install.cmake" ] || die "$build is not a configured build (run make all first)"
	dest=${DESTDIR:-}$prefix
	cm=$build/install_manifest.txt
	rm -f "$cm"
	# cmake honours DESTDIR from the environment and writes install_manifest.txt.
	if ! out=$(cmake --install "$build" --prefix "$prefix" 2>&1); then
		printf '%s\n' "$out" >&2
		die "cmake --install $build failed"
	fi
	[ -s "$cm" ] || die "cmake --install wrote no $cm"
	mkdir -p "$dest/${manifest_rel%/*}"
	{
		# (install_manifest.txt has no newline after its last line.)
		while IFS= read -r line || [ -n "$line" ]; do
			# cmake records the paths with DESTDIR, or without it (--prefix only).
			case $line in
			"$dest"/*) printf '%s\n' "${line#"$dest"/}" ;;
			"$prefix"/*) printf '%s\n' "${line#"$prefix"/}" ;;
			*) die "cmake installed $line, outside $dest" ;;
			esac
		done <"$cm"
		echo "$manifest_rel"
	} | sort -u >"$dest/$manifest_rel.tmp"
	mv "$dest/$manifest_rel.tmp" "$dest/$manifest_rel"
	echo "installed $(wc -l <"$dest/$manifest_rel") files under $dest (list: $dest/$manifest_rel)"
}

do_uninstall() {
	local prefix=$1 dest f d n=0
	check_prefix "$prefix"
	dest=${DESTDIR:-}$prefix
	[ -f "$dest/$manifest_rel" ] ||
		die "nothing to uninstall: $dest/$manifest_rel does not exist (was make install run with this PREFIX and DESTDIR?)"
	# Validate the whole list before removing anything.
	while IFS= read -r f; do
		case /$f/ in
		//* | */../* | */./*) die "refusing the manifest entry '$f' (not a plain relative path)" ;;
		esac
	done <"$dest/$manifest_rel"
	local -a dirs=()
	while IFS= read -r f; do
		if [ -e "$dest/$f" ] || [ -L "$dest/$f" ]; then
			rm -f -- "$dest/$f"
			n=$((n + 1))
		fi
		d=${f%/*}
		while [ "$d" != "$f" ] && [ -n "$d" ]; do
			case /$d/ in
			*/*bsp*/*) dirs+=("$d") ;;
			esac
			[ "${d%/*}" = "$d" ] && break
			d=${d%/*}
		done
	done <"$dest/$manifest_rel"
	# Deepest first; only directories that are ours and now empty.
	if [ ${#dirs[@]} -gt 0 ]; then
		while IFS= read -r d; do
			rmdir -- "$dest/$d" 2>/dev/null || true
		done < <(printf '%s\n' "${dirs[@]}" | sort -u | awk '{ print length($0) "\t" $0 }' |
			sort -rn | cut -f2-)
	fi
	echo "removed $n files from $dest"
}

case ${1:-} in
install)
	[ $# -eq 3 ] || die "usage: install.sh install BUILD_DIR PREFIX"
	do_install "$2" "$3"
	;;
uninstall)
	[ $# -eq 2 ] || die "usage: install.sh uninstall PREFIX"
	do_uninstall "$2"
	;;
*) die "usage: install.sh install BUILD_DIR PREFIX | uninstall PREFIX" ;;
esac
