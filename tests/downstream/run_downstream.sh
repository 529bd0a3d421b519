#!/usr/bin/env bash
# What a downstream user does, from this build: install Plexus, move the
# installed tree (it must be relocatable), then build against it only
#   1. tests/downstream (CMake package: Plexus::nn, Plexus::plexus) and run it,
#   2. the same C program through pkg-config,
#   3. examples/threads-plugin (plexus_add_plugin), which like every installed
#      plugin exports px_plugin_get_api alone, and pass plexus-conformance
#      on its devices, found through PLEXUS_PLUGIN_PATH, and agree with the
#      CPU plugin on the op-call fuzz inputs (plexus-op-call-agree),
#   4. examples/plugin-template as an author copies it: its ctest runs the
#      installed plexus-conformance through plexus_add_conformance_test and
#      passes, fails on a copy whose mul adds, and the suite runs on its
#      AddressSanitizer build as docs/writing-a-plugin.md says.
# usage: run_downstream.sh <plexus build dir> <source dir> <scratch dir>
set -euo pipefail
build=$1 source=$2 scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/installed" >/dev/null
mv "$scratch/installed" "$scratch/moved"
prefix=$scratch/moved
unset PLEXUS_PLUGIN_PATH

echo "== downstream project through find_package(Plexus)"
cmake -S "$source/tests/downstream" -B "$scratch/app" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_RPATH="$prefix/lib" >/dev/null
cmake --build "$scratch/app" >/dev/null
(cd "$scratch/app" && ./walkthrough && ./c_api)

echo "== the C program through pkg-config"
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs plexus)
# shellcheck disable=SC2086
cc -std=c99 -Wall -Werror "$source/tests/downstream/c_api.c" -o "$scratch/c_api_pc" $flags -Wl,-rpath,"$prefix/lib"
"$scratch/c_api_pc"

echo "== a plugin built outside the tree, through plexus_add_plugin"
cmake -S "$source/examples/threads-plugin" -B "$scratch/plugin" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$scratch/plugin" >/dev/null
# Release plugins export px_plugin_get_api alone: the example, and every
# plugin the package installed (issue 38).
plugins="$scratch/plugin/libplexus-threads.so"
for p in "$prefix"/lib*/plexus/plugins/*.so; do plugins="$plugins;$p"; done
cmake -DNM="${NM:-nm}" -DPLUGINS="$plugins" -P "$source/tests/cmake/check_plugin_exports.cmake"
PLEXUS_PLUGIN_PATH="$scratch/plugin" "$prefix/bin/plexus-smi"
# A malformed setting makes its create() fail with the reason; the host skips it.
PLEXUS_THREADS_DEVICES=zero PLEXUS_PLUGIN_PATH="$scratch/plugin" "$prefix/bin/plexus-smi" |
  grep -q "PLEXUS_THREADS_DEVICES must be a number in 1..16"
PLEXUS_THREADS_MEMORY_MB=0 PLEXUS_PLUGIN_PATH="$scratch/plugin" "$prefix/bin/plexus-smi" |
  grep -q "PLEXUS_THREADS_MEMORY_MB must be a number in 1..65536"
"$prefix/bin/plexus-conformance" --plugin "$scratch/plugin/libplexus-threads.so" --json "$scratch/threads.json" | tail -5
grep -q '"failures":0' "$scratch/threads.json"
# And the CPU plugin's answers on every op-call fuzz input (tests/fuzz), with
# this build's plexus-op-call-agree: calls the plugin lacks are skipped.
"$build/bin/plexus-op-call-agree" "$(find "$prefix" -name libplexus-cpu.so | head -1)" \
  "$scratch/plugin/libplexus-threads.so" "$source/tests/fuzz/corpus/op-call" "$source/tests/fuzz/corpus/op-call-grown" \
  "$source/tests/fuzz/regressions/op-call" "$source/tests/fuzz/regressions/op-call-diff"
echo "== the plugin template: plexus_add_plugin, plexus_add_conformance_test, ctest"
template=$scratch/template
cp -r "$source/examples/plugin-template" "$template-src"
cmake -S "$template-src" -B "$template" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build "$template" >/dev/null
grep -q -- "-ffp-contract=off" "$template/compile_commands.json"     # plexus_add_plugin's flags
grep -q "\"$prefix/bin/plexus-conformance\" \"--plugin\"" "$template/CTestTestfile.cmake"  # the installed tool
(cd "$template" && ctest --output-on-failure --no-tests=error) | tail -3
grep -q '"failures":0' "$template/plexus-mydev.conformance.json"
# The test fails with the suite: a copy of the template whose mul adds.
cp -r "$template-src" "$template-broken-src"
sed -i 's/binary<std::multiplies<float>>/binary<std::plus<float>>/' "$template-broken-src/plugin.cpp"
if grep -q "std::multiplies" "$template-broken-src/plugin.cpp"; then
  echo "the template's mul kernel is not where this test changes it"; exit 1
fi
cmake -S "$template-broken-src" -B "$template-broken" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$template-broken" >/dev/null
if (cd "$template-broken" && ctest --output-on-failure) > "$template-broken.log" 2>&1; then
  cat "$template-broken.log"; echo "ctest passed a template whose mul adds"; exit 1
fi
grep -E "^ +mul +FAIL" "$template-broken.log"
grep -q "FAIL R10" "$template-broken.log"
# Under AddressSanitizer, out of tree: the plugin built with it, the
# installed tool run with the sanitizer's runtime preloaded.
libasan=$("${CXX:-c++}" -print-file-name=libasan.so)
if [ -f "$libasan" ]; then
  cmake -S "$template-src" -B "$template-asan" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" >/dev/null
  cmake --build "$template-asan" >/dev/null
  LD_PRELOAD=$libasan ASAN_OPTIONS=abort_on_error=1 \
    "$prefix/bin/plexus-conformance" --plugin "$template-asan/libplexus-mydev.so" | tail -1
  LD_PRELOAD=$libasan ASAN_OPTIONS=abort_on_error=1 \
    "$prefix/bin/plexus-conformance" --in-process --plugin "$template-asan/libplexus-mydev.so" | tail -1
else
  echo "no libasan.so beside ${CXX:-c++}: the AddressSanitizer run is left out"
fi
echo "downstream: all good"
