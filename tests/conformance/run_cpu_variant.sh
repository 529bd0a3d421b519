#!/usr/bin/env bash
# run_cpu_variant.sh ISA CONV TOOL: the conformance suite's nn tests on cpu(0)
# with the CPU plugin held to one instruction set (PLEXUS_CPU_ISA) and conv
# path (PLEXUS_CPU_CONV), so every compiled copy of the loops is tested on a
# machine that would pick only the best. Exits 77 (skipped) without the ISA.
set -euo pipefail
isa=$1 conv=$2 tool=$3
case $isa in
  avx512) flag=avx512f ;;
  avx2) flag=avx2 ;;
  *) flag= ;;
esac
if [ -n "$flag" ] && ! grep -qw "$flag" /proc/cpuinfo; then
  echo "skipped: this CPU has no $flag instructions"
  exit 77
fi
if [ "$isa" = best ]; then unset PLEXUS_CPU_ISA; else export PLEXUS_CPU_ISA=$isa; fi
PLEXUS_CPU_CONV=$conv exec "$tool" --device cpu:0 "[nn]"
