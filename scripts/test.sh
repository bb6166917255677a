#!/usr/bin/env bash
# Installs what is missing, builds flashdir twice (release with assertions, and
# AddressSanitizer + UndefinedBehaviorSanitizer) and runs every test in both builds; then builds
# the cache engine's tests alone under ThreadSanitizer and runs them.
set -euo pipefail
source "$(dirname "$0")/setup.sh"

ensure_packages
configure_release
configure_asan
configure_tsan

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

status=0
for dir in build build-asan; do
  echo "=== $dir: build"
  ninja -C "$FLASHDIR_ROOT/$dir"
  echo "=== $dir: test"
  meson test -C "$FLASHDIR_ROOT/$dir" --print-errorlogs --num-processes 2 || status=1
done
# Lean: only the library and the cache tests are built, and only the cache suite runs.
echo "=== build-tsan: build (cache tests only)"
ninja -C "$FLASHDIR_ROOT/build-tsan" tests/test-cache
echo "=== build-tsan: test"
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$FLASHDIR_ROOT/tests/tsan.supp" \
  meson test -C "$FLASHDIR_ROOT/build-tsan" --no-rebuild --print-errorlogs cache || status=1

[ $status -eq 0 ] && echo "=== all tests passed" || echo "=== some tests FAILED"
exit $status
