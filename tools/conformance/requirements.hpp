// The plugin contract as numbered requirements. docs/writing-a-plugin.md
// explains each; the conformance suite tags its test cases with these ids
// and plexus-conformance cites them in its failures. Numbers are never
// reused; new requirements are appended.
#pragma once

#include <cstring>

namespace pxconformance {

struct Requirement {
    const char* id;
    const char* title;
};

inline constexpr Requirement requirements[] = {
    {"R1", "the entry symbol and the table: versions, name, every slot of the plugin's ABI minor"},
    {"R2", "every failing call returns a status and a message, refuses NULL and out-of-range arguments, "
           "writes no further than err->struct_size, and never throws or aborts"},
    {"R3", "contexts are independent; destroy waits for queued work and frees everything"},
    {"R4", "devices describe themselves: kind, name, consistent memory figures"},
    {"R5", "supports() answers truthfully; unsupported calls return PX_ERROR_UNSUPPORTED; "
           "the host's checks give the same typed errors on every device"},
    {"R6", "buffers: zero bytes valid, out of memory is PX_ERROR_OUT_OF_MEMORY with figures, the device "
           "stays usable and in-use memory returns to its baseline"},
    {"R7", "copies host to device, device to host and between devices keep every byte"},
    {"R8", "work on a device runs in the order queued; reading waits; freed inputs live until used"},
    {"R9", "a failure while running is reported at the next wait, naming the op, once; the device works after"},
    {"R10", "elementwise ops with broadcasting and scalars match float64 references"},
    {"R11", "reductions match float64 references"},
    {"R12", "matrix products match float64 references"},
    {"R13", "copy, cast and views keep values"},
    {"R14", "creation and random ops: exact fills, reproducible Philox streams"},
    {"R15", "neural-network ops and their gradients match references and finite differences"},
    {"R16", "all_reduce (optional, ABI 1.2): every device ends with the same exact sum; bad calls are refused"},
    {"R17", "process groups (optional, ABI 1.3): all four slots or none; a group of one joins, sums, refuses bad calls"},
    {"R18", "fused ops (optional, ABI 1.4): bias_relu_max_pool2d and its backward give the three ops' values"},
    {"R19", "an op writes every element of its outputs and no byte outside them"},
};

inline const char* requirement_title(const char* id) {
    for (const auto& r : requirements)
        if (std::strcmp(r.id, id) == 0) return r.title;
    return "";
}

}  // namespace pxconformance
