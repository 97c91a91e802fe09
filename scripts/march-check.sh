#!/usr/bin/env bash
# march-check.sh: compiles (never runs) the Fashion-MNIST example and the step benchmark for
# x86-64-v3 (AVX2, FMA) and for x86-64-v4 (AVX-512), with CI's warnings as errors, so a CI host
# of either kind catches what the other kind of host would fail on (GCC 12 warns differently
# once AVX-512 code is inlined; see include/hookfuse/detail/eigen.hpp). The binaries are not
# run: an x86-64-v4 binary does not run on an AVX2 host.
#
# Build trees: $MARCH_BUILD_DIR/<level> (default build-march/x86-64-v3, build-march/x86-64-v4);
# re-runs are incremental. -j2 by default ($MARCH_JOBS). Needs libbenchmark-dev (install-deps):
# without it there is no bench_step target and the build fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${MARCH_BUILD_DIR:-$root/build-march}
jobs=${MARCH_JOBS:-2}
start=$SECONDS

levels=(x86-64-v3 x86-64-v4)
for level in "${levels[@]}"; do
  printf '\n== march-check: configure -march=%s (%ds)\n' "$level" $((SECONDS - start))
  cmake -S "$root" -B "$build/$level" -DCMAKE_BUILD_TYPE=Release \
        "-DCMAKE_CXX_FLAGS=-march=$level" -DHOOKFUSE_NATIVE_ARCH=OFF -DHOOKFUSE_WERROR=ON \
        -DHOOKFUSE_BUILD_TESTS=OFF -DHOOKFUSE_BUILD_EXAMPLES=ON -DHOOKFUSE_BUILD_BENCHMARKS=ON
done
# The two levels build at the same time, $jobs / 2 jobs each: one level's two objects take
# unequal times (about 43 and 25 s of CPU), so one level after the other at -j2 left a core idle
# for part of each (153 s for both in the CI run of 1 December).
level_jobs=$((jobs > 1 ? jobs / 2 : 1))
printf '\n== march-check: build both levels, %d job(s) each (%ds)\n' "$level_jobs" $((SECONDS - start))
pids=()
for level in "${levels[@]}"; do
  cmake --build "$build/$level" -j"$level_jobs" --target fashion_mnist bench_step \
    >"$build/$level.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!levels[@]}"; do
  if wait "${pids[$i]}"; then
    printf '\n== march-check: -march=%s built\n' "${levels[$i]}"
  else
    printf '\n== march-check: -march=%s FAILED; its build log:\n' "${levels[$i]}"
    cat "$build/${levels[$i]}.log"
    failed=1
  fi
done
if [ "$failed" != 0 ]; then exit 1; fi
printf '\n== march-check: fashion_mnist and bench_step compile for x86-64-v3 and x86-64-v4 (%ds)\n' \
       $((SECONDS - start))
