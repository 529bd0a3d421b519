// Chooses which compiled copy of the direct convolution loops runs.
#include "conv_direct.hpp"

#include <atomic>

namespace pxcpu {

const DirectConvIsa& direct_conv_isa_isa_baseline();
const DirectConvIsa& direct_conv_isa_isa_avx2();
const DirectConvIsa& direct_conv_isa_isa_avx512();

namespace {

struct Candidate {
    const char* name;
    const DirectConvIsa& (*get)();
    bool (*runs_here)();
};

bool has_avx512() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}
bool has_avx2() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
bool always() { return true; }

// Best first.
const Candidate candidates[] = {
    {"avx512", direct_conv_isa_isa_avx512, has_avx512},
    {"avx2", direct_conv_isa_isa_avx2, has_avx2},
    {"baseline", direct_conv_isa_isa_baseline, always},
};

std::atomic<const DirectConvIsa*> chosen{nullptr};

const DirectConvIsa& best() {
    for (const Candidate& c : candidates)
        if (c.runs_here()) return c.get();
    return direct_conv_isa_isa_baseline();
}

}  // namespace

const DirectConvIsa& direct_conv_isa() {
    const DirectConvIsa* isa = chosen.load(std::memory_order_acquire);
    if (!isa) {
        isa = &best();
        chosen.store(isa, std::memory_order_release);
    }
    return *isa;
}

template <>
const DirectConvOps<float>& direct_conv_ops<float>() {
    return direct_conv_isa().f32;
}
template <>
const DirectConvOps<double>& direct_conv_ops<double>() {
    return direct_conv_isa().f64;
}
template <>
int direct_conv_lanes<float>() {
    return direct_conv_isa().lanes_f32;
}
template <>
int direct_conv_lanes<double>() {
    return direct_conv_isa().lanes_f64;
}

bool select_direct_conv_isa(const std::string& name, std::string& why) {
    if (name.empty()) {
        chosen.store(&best(), std::memory_order_release);
        return true;
    }
    for (const Candidate& c : candidates) {
        if (name != c.name) continue;
        if (!c.runs_here()) {
            why = "PLEXUS_CPU_ISA='" + name + "': this CPU does not run " + name + " instructions";
            return false;
        }
        chosen.store(&c.get(), std::memory_order_release);
        return true;
    }
    why = "PLEXUS_CPU_ISA='" + name + "' is not one of avx512, avx2, baseline";
    return false;
}

}  // namespace pxcpu
