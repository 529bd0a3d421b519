// A loop compiled once per instruction set (AVX-512, AVX2, baseline x86-64)
// inside one source file, for loops that vectorize only with wide integer
// multiplies (Philox: the 32x32->64-bit products need AVX-512DQ to be fast).
// Loop::run must be always_inline, so each copy is compiled for its set.
// The CPU plugin compiles without FMA contraction (-ffp-contract=off), so
// every copy computes the same bits.
#pragma once

#include <string>

#include "conv_direct.hpp"

namespace pxcpu {

template <class Loop>
struct IsaCopies {
    template <class... A>
    __attribute__((target("avx512f,avx512dq"))) static void avx512(A... a) {
        Loop::run(a...);
    }
    template <class... A>
    __attribute__((target("avx2"))) static void avx2(A... a) {
        Loop::run(a...);
    }
    template <class... A>
    static void baseline(A... a) {
        Loop::run(a...);
    }
    // The copy for the instruction set the plugin uses (direct_conv_isa():
    // the best this CPU runs, or what PLEXUS_CPU_ISA lowered it to).
    template <class... A>
    static auto for_this_cpu() -> void (*)(A...) {
        const std::string isa = direct_conv_isa().name;
        __builtin_cpu_init();
        if (isa == "avx512" && __builtin_cpu_supports("avx512dq")) return &avx512<A...>;
        if (isa == "avx512" || isa == "avx2") return &avx2<A...>;
        return &baseline<A...>;
    }
};

}  // namespace pxcpu
