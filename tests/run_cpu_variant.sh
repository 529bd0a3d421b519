#!/usr/bin/env bash
# run_cpu_variant.sh ISA CONV TOOL ARGS...: runs TOOL ARGS with the CPU
# plugin held to one instruction set (PLEXUS_CPU_ISA; "best" leaves it free)
# and conv path (PLEXUS_CPU_CONV), so every compiled copy of its loops is
# tested on a machine that would pick only the best. Exits 77 (skipped) when
# the CPU lacks the instruction set.
set -euo pipefail
isa=$1 conv=$2 tool=$3
shift 3
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
PLEXUS_CPU_CONV=$conv exec "$tool" "$@"
