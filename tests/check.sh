#!/usr/bin/env bash
# Runs the test suite in stages and ends with one summary line "N passed, N failed".
#   tests/check.sh all | style | unit | unit-tsan | fuzz | install | slurm | vm | vm-selftest ...
#   tests/check.sh vm-debug vm-selftest-debug   (make check-debug; not in all)
# Every stage runs even when an earlier one failed; the exit status is non-zero if
# anything failed. See Documentation/testing.rst.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
build=$top/build
jobs=${JOBS:-2}
fuzz_seconds=${FUZZ_SECONDS:-30}
ksrc_tar=/usr/src/linux-source-6.1.tar.xz

total_pass=0
total_fail=0
summary=()
# What failed, in a few lines each, printed just before the summary: a CI system that
# keeps only the tail of the output still shows why the run failed.
digest=()

record() { # stage passed failed
	total_pass=$((total_pass + $2))
	total_fail=$((total_fail + $3))
	summary+=("$(printf '%-12s %4d passed, %4d failed  (%d s)' "$1" "$2" "$3" $((SECONDS - stage_start)))")
}

# digest_add TITLE TEXT: keep the last 25 lines of TEXT for the failure digest.
digest_add() {
	digest+=("--- $1" "$(printf '%s\n' "$2" | tail -n 25)")
}

banner() { printf '\n======== %s ========\n' "$*"; }

checkpatch_tool() {
	local dir=$build/checkpatch
	if [ ! -x "$dir/scripts/checkpatch.pl" ]; then
		[ -f "$ksrc_tar" ] || { echo "missing $ksrc_tar (make deps installs linux-source-6.1)" >&2; return 1; }
		mkdir -p "$dir"
		tar -xJf "$ksrc_tar" -C "$dir" --strip-components=1 \
			linux-source-6.1/scripts/checkpatch.pl \
			linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch || return 1
	fi
	echo "$dir/scripts/checkpatch.pl"
}

kernel_doc_tool() {
	local dir=$build/kernel-doc
	if [ ! -f "$dir/scripts/kernel-doc" ]; then
		[ -f "$ksrc_tar" ] || { echo "missing $ksrc_tar (make deps installs linux-source-6.1)" >&2; return 1; }
		mkdir -p "$dir"
		tar -xJf "$ksrc_tar" -C "$dir" --strip-components=1 \
			linux-source-6.1/scripts/kernel-doc || return 1
	fi
	echo "$dir/scripts/kernel-doc"
}

stage_style() {
	local pass=0 fail=0 cp out f files

	banner "style: checkpatch.pl --strict (linux-source-6.1) on kernel/ and tests/vm/freeze/"
	if cp=$(checkpatch_tool); then
		# Paths relative to kernel/, as in the kernel tree: checkpatch applies
		# its UAPI rules to include/uapi/ (no BIT() there, for instance).
		mapfile -t files < <(cd kernel && git ls-files '*.c' '*.h')
		local bad=0
		for f in "${files[@]}"; do
			if ! out=$(cd kernel && "$cp" --strict --no-tree --quiet --show-types -f "$f" 2>&1); then
				echo "$out"
				bad=1
			fi
		done
		# The VM cases' helper module is kernel code too.
		local helpers
		mapfile -t helpers < <(git ls-files 'tests/vm/freeze/*.c')
		for f in "${helpers[@]}"; do
			if ! out=$("$cp" --strict --no-tree --quiet --show-types -f "$f" 2>&1); then
				echo "$out"
				bad=1
			fi
		done
		files+=("${helpers[@]}")
		if [ $bad = 0 ]; then echo "checkpatch: ${#files[@]} files clean"; pass=$((pass + 1)); else fail=$((fail + 1)); fi
	else
		fail=$((fail + 1))
	fi

	banner "style: sparse (make C=2) and W=1 on kernel/"
	out=$(make -s -C kernel clean >/dev/null 2>&1; make -C kernel C=2 W=1 2>&1)
	local rc=$?
	local warn
	warn=$(grep -E 'warning:|error:' <<<"$out" | grep -v 'Skipping BTF generation')
	if [ $rc -eq 0 ] && [ -z "$warn" ]; then
		echo "sparse and W=1: clean"; pass=$((pass + 1))
	else
		echo "$out" | tail -n 40; fail=$((fail + 1))
	fi

	banner "style: kernel-doc -none (linux-source-6.1) on kernel/"
	local kd
	if kd=$(kernel_doc_tool); then
		mapfile -t files < <(cd kernel && git ls-files '*.c' '*.h')
		# kernel-doc exits 0 on warnings: any output is a finding.
		if out=$(cd kernel && perl "$kd" -none "${files[@]}" 2>&1) && [ -z "$out" ]; then
			echo "kernel-doc: ${#files[@]} files clean"; pass=$((pass + 1))
		else
			echo "$out"; fail=$((fail + 1))
		fi
	else
		fail=$((fail + 1))
	fi

	banner "style: shellcheck on the shell scripts (settings: .shellcheckrc)"
	# Every tracked *.sh and every tracked file starting with a sh/bash #! line;
	# *.in are templates configure_file fills in (tools/bspcc/bspcc.in).
	mapfile -t files < <(git ls-files | while read -r f; do
		case $f in
		*.in) ;;
		*.sh) echo "$f" ;;
		*) [ -f "$f" ] && head -n 1 "$f" | grep -qE '^#!.*[/ ](ba)?sh( |$)' && echo "$f" ;;
		esac
	done)
	if printf '%s\0' "${files[@]}" | xargs -0 -n 8 -P "$jobs" shellcheck; then
		echo "shellcheck: ${#files[@]} files clean"; pass=$((pass + 1))
	else
		fail=$((fail + 1))
	fi

	banner "style: clang-tidy (userlib/.clang-tidy: braces around every body) on userlib/"
	# The translation units of userlib/ in the compile database of build/default
	# (make all); run-clang-tidy exits non-zero when any of them has a finding.
	# -Wno-unknown-warning-option: the database holds GCC's flags (-Wno-restrict).
	if [ ! -f "$build/default/compile_commands.json" ]; then
		echo "no $build/default/compile_commands.json: run make all first"; fail=$((fail + 1))
	elif run-clang-tidy -j "$jobs" -p "$build/default" -quiet \
		-extra-arg=-Wno-unknown-warning-option "$top/userlib/(src|probe|examples)/" \
		>"$build/clang-tidy.log" 2>&1; then
		echo "clang-tidy: userlib clean"; pass=$((pass + 1))
	else
		grep -E -A3 'warning:|error:' "$build/clang-tidy.log" | head -n 60
		echo "(full log: $build/clang-tidy.log)"; fail=$((fail + 1))
	fi

	banner "style: reStructuredText of Documentation/ (docutils)"
	if python3 tests/style/rst_lint.py Documentation/*.rst; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
	fi

	banner "style: clang-format --dry-run --Werror on C++"
	mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cc' 'userlib/include/*.h')
	if [ ${#files[@]} -eq 0 ] || clang-format --dry-run --Werror "${files[@]}"; then
		echo "clang-format: ${#files[@]} files clean"; pass=$((pass + 1))
	else
		fail=$((fail + 1))
	fi
	record style $pass $fail
}

# ctest_counts OUTPUT -> "passed failed"
ctest_counts() {
	local line tot failed
	line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' <<<"$1" | tail -n 1)
	if [ -z "$line" ]; then echo "0 1"; return; fi
	failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
	tot=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
	echo "$((tot - failed)) $failed"
}

stage_unit() {
	banner "unit: GoogleTest suites under ASan + UBSan"
	local out counts
	if ! cmake -S tests -B "$build/asan" -DCMAKE_BUILD_TYPE=Debug \
		-DBSP_SANITIZE=address,undefined >/dev/null ||
		! cmake --build "$build/asan" -j"$jobs"; then
		record unit 0 1
		return
	fi
	out=$(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --test-dir "$build/asan" --output-on-failure -j"$jobs" --timeout 300 2>&1)
	printf '%s\n' "$out" >"$build/asan/ctest.log"
	# Everything but the lines of passing tests: failing tests show their output.
	printf '%s\n' "$out" | grep -vE '^ *Start +[0-9]+:|^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed'
	echo "(full log: $build/asan/ctest.log)"
	counts=$(ctest_counts "$out")
	[ "${counts#* }" = 0 ] || digest_add "unit" "$(grep -A 30 'tests failed out of' <<<"$out")"
	record unit "${counts% *}" "${counts#* }"
}

# The tests labelled "threads" (ctest -L threads) in a ThreadSanitizer build: only the
# target threads_tests is built (tests/launch/CMakeLists.txt). Any report fails the test:
# halt_on_error makes the process exit non-zero, and the tests check exit statuses and
# standard error exactly.
stage_unit_tsan() {
	banner "unit-tsan: tests labelled 'threads' under ThreadSanitizer"
	local out counts
	if ! cmake -S tests -B "$build/tsan" -DCMAKE_BUILD_TYPE=Debug -DBSP_SANITIZE=thread >/dev/null ||
		! cmake --build "$build/tsan" -j"$jobs" --target threads_tests; then
		record unit-tsan 0 1
		return
	fi
	out=$(TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
		ctest --test-dir "$build/tsan" -L threads --output-on-failure -j"$jobs" --timeout 300 2>&1)
	printf '%s\n' "$out" >"$build/tsan/ctest.log"
	printf '%s\n' "$out" | grep -vE '^ *Start +[0-9]+:|^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed'
	echo "(full log: $build/tsan/ctest.log)"
	counts=$(ctest_counts "$out")
	[ "${counts#* }" = 0 ] || digest_add "unit-tsan" "$(grep -A 30 'tests failed out of' <<<"$out")"
	record unit-tsan "${counts% *}" "${counts#* }"
}

# fuzz_reap PID:NAME: wait for one fuzzer of stage_fuzz and keep its exit status.
fuzz_reap() {
	local rc=0
	wait "${1%%:*}" || rc=$?
	status[${1#*:}]=$rc
}

stage_fuzz() {
	banner "fuzz: libFuzzer targets, ${fuzz_seconds}s each"
	local pass=0 fail=0 f name
	if ! CC=clang CXX=clang++ cmake -S tests -B "$build/fuzz" -DBSP_FUZZ=ON \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null ||
		! cmake --build "$build/fuzz" -j"$jobs"; then
		record fuzz 0 1
		return
	fi
	# Seed inputs, written from their source (tests/fuzz/make_corpus.sh).
	rm -rf "$build/fuzz/seeds"
	if ! sh tests/fuzz/make_corpus.sh "$build/fuzz/seeds"; then
		record fuzz 0 1
		return
	fi
	# Every executable of tests/fuzz is a libFuzzer target. Each runs single-threaded for
	# the full fuzz_seconds; $jobs of them run side by side, results reported in order.
	mapfile -t fuzzers < <(find "$build/fuzz/fuzz" -maxdepth 1 -type f -executable | sort)
	local -A status=()
	local running=()
	for f in "${fuzzers[@]}"; do
		name=$(basename "$f")
		mkdir -p "$build/fuzz/corpus/$name"
		local seeds=()
		[ -d "$build/fuzz/seeds/$name" ] && seeds=("$build/fuzz/seeds/$name")
		"$f" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
			-print_final_stats=1 "$build/fuzz/corpus/$name" "${seeds[@]}" \
			>"$build/fuzz/$name.log" 2>&1 &
		running+=("$!:$name")
		if [ ${#running[@]} -ge "$jobs" ]; then
			fuzz_reap "${running[0]}"
			running=("${running[@]:1}")
		fi
	done
	for r in "${running[@]}"; do fuzz_reap "$r"; done
	for f in "${fuzzers[@]}"; do
		name=$(basename "$f")
		if [ "${status[$name]}" = 0 ]; then
			echo "$name: clean ($(grep -E '^stat::number_of_executed_units' "$build/fuzz/$name.log" | awk '{print $2}') runs)"
			pass=$((pass + 1))
		else
			tail -n 60 "$build/fuzz/$name.log"
			echo "$name: FAILED (exit status ${status[$name]})"
			digest_add "fuzz $name" "$(tail -n 25 "$build/fuzz/$name.log")"
			fail=$((fail + 1))
		fi
	done
	[ ${#fuzzers[@]} -gt 0 ] || echo "no fuzz targets built"
	record fuzz $pass $fail
}

stage_vm() { # [run-vm options...]
	local name=vm
	[ "${1:-}" = --kernel ] && name=vm-$2
	banner "$name: QEMU integration cases (tests/vm/run-vm $*)"
	local out line p f rc
	mkdir -p "$build"
	tests/vm/run-vm --keep-going "$@" 2>&1 | tee "$build/$name-check.log"
	rc=${PIPESTATUS[0]}
	out=$(cat "$build/$name-check.log")
	line=$(grep -E '^([A-Za-z-]+: *)?[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)
	p=0
	f=1
	if [ -n "$line" ]; then
		p=$(sed -E 's/^[^0-9]*([0-9]+) passed.*/\1/' <<<"$line")
		f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	fi
	# A run that failed as a whole (kernel splat, boot failure, overall timeout)
	# counts as a failure even if every case passed.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	# Each failed case's own last lines (its log in the run directory).
	local cname named=0
	while read -r cname; do
		digest_add "$name $cname" "$(cat "$build/vm/last/$cname.log" 2>/dev/null)"
		named=1
	done < <(sed -nE 's/^FAIL ([A-Za-z0-9_.-]+) \(.*/\1/p' <<<"$out")
	if [ "$rc" -ne 0 ] && [ "$named" = 0 ]; then
		digest_add "$name run" "$(sed -n '/^==== summary/,$p' <<<"$out")"
	fi
	record "$name" "$p" "$f"
}

# script_counts NAME SCRIPT: runs a test script that ends with "NAME: N passed, N failed".
script_counts() {
	local name=$1 line p=0 f=1
	shift
	local rc
	"$@" 2>&1 | tee "$build/$name-check.log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed" "$build/$name-check.log" | tail -n 1)
	if [ -n "$line" ]; then
		p=$(sed -E 's/^[^0-9]*([0-9]+) passed.*/\1/' <<<"$line")
		f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	fi
	# A script that failed as a whole counts as a failure even if it counted none.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	[ "$f" = 0 ] || digest_add "$name" "$(grep -E '^FAIL' "$build/$name-check.log")"
	record "$name" "$p" "$f"
}

# make install / uninstall into a staging prefix, the installed tree used alone, man
# pages, dkms build (about a minute: the dkms build of the module is most of it).
stage_install() {
	banner "install: make install into a staging prefix, used without the source tree"
	mkdir -p "$build"
	script_counts install tests/install/install_test.sh
}

# A real Slurm (munged, slurmctld, slurmd of one node) running BSPlib jobs (about 25 s).
stage_slurm() {
	banner "slurm: srun -n 4 and sbatch + bsprun under Debian's Slurm"
	mkdir -p "$build"
	script_counts slurm tests/install/slurm_test.sh
}

stage_vm_selftest() {
	banner "vm-selftest: the harness must report a kernel splat as failure"
	if tests/vm/selftest.sh; then record vm-selftest 1 0; else record vm-selftest 0 1; fi
}

# The debug kernel (make check-debug; not part of "all": see
# Documentation/testing.rst, "Debug kernel").
stage_vm_selftest_debug() {
	banner "vm-selftest-debug: KASAN, KFENCE, kmemleak, lockdep... reports fail a case"
	if tests/vm/selftest.sh --kernel debug; then
		record vm-selftest-debug 1 0
	else
		record vm-selftest-debug 0 1
	fi
}

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(all)
if [ "${stages[0]}" = all ]; then stages=(style unit unit-tsan fuzz install slurm vm vm-selftest); fi
for s in "${stages[@]}"; do
	stage_start=$SECONDS
	case $s in
	style | unit | fuzz | install | slurm | vm) "stage_$s" ;;
	unit-tsan) stage_unit_tsan ;;
	vm-selftest) stage_vm_selftest ;;
	vm-debug) stage_vm --kernel debug ;;
	vm-selftest-debug) stage_vm_selftest_debug ;;
	*) echo "unknown stage: $s" >&2; exit 2 ;;
	esac
done

if [ ${#digest[@]} -gt 0 ]; then
	banner "failures (last lines of each; the full logs are above and under build/)"
	printf '%s\n' "${digest[@]}"
fi
banner summary
printf '%s\n' "${summary[@]}"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
