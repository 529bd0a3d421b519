// A loop compiled once per instruction set (AVX-512, AVX2, baseline x86-64)
// inside one source file, for loops that need more than the baseline's
// 16-byte vectors to run fast (Philox's 32x32->64-bit products want
// AVX-512DQ; 64-bit integer compares in reductions want AVX2 or AVX-512).
// Loop::run must be always_inline, so each copy is compiled for its set;
// each copy returns what Loop::run returns.
// The CPU plugin compiles without FMA contraction (-ffp-contract=off), so
// every copy computes the same bits.
#pragma once

#include <string>

#include "conv_direct.hpp"

namespace pxcpu {

template <class Loop>
struct IsaCopies {
    template <class... A>
    __attribute__((target("avx512f,avx512dq"))) static auto avx512(A... a) {
        return Loop::run(a...);
    }
    template <class... A>
    __attribute__((target("avx2"))) static auto avx2(A... a) {
        return Loop::run(a...);
    }
    template <class... A>
    static auto baseline(A... a) {
        return Loop::run(a...);
    }
    // The copy for the instruction set the plugin uses (direct_conv_isa():
    // the best this CPU runs, or what PLEXUS_CPU_ISA lowered it to).
    template <class... A>
    static auto for_this_cpu() -> decltype(&baseline<A...>) {
        const std::string isa = direct_conv_isa().name;
        __builtin_cpu_init();
        if (isa == "avx512" && __builtin_cpu_supports("avx512dq")) return &avx512<A...>;
        if (isa == "avx512" || isa == "avx2") return &avx2<A...>;
        return &baseline<A...>;
    }
};

}  // namespace pxcpu
