// What the conformance suite needs beyond the test helpers: which (op, dtype)
// pairs the device under test offers, and a record of what a run could not
// test, read by plexus-conformance to print its op x dtype table.
//
// Checks of one op on one dtype go in PX_OP_SECTION(op, dtype) { ... }: the
// section runs only when the device supports the op on that dtype and the
// casts to and from float64 that make inputs and read results. A pair the
// device lacks is recorded as unsupported; a pair it offers but that cannot
// be checked without those casts, as untested (never as unsupported). A
// check that uses other ops starts with PX_NEEDS(...) and is recorded as
// skipped when the device lacks one. Every op a check uses besides the one
// its section checks is recorded (`uses`), so that a failure caused by a
// helper op that fails its own check is counted there, once.
// Test cases carry the requirement they check as a tag, e.g. [R10]; the
// requirements are numbered in docs/writing-a-plugin.md.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../support.hpp"

namespace pxconf {

struct Record {
    std::set<std::pair<int, int>> unsupported;  // (op, dtype) the device lacks
    std::set<std::pair<int, int>> untested;     // (op, dtype) it offers, but without the casts a check needs
    std::set<std::pair<int, int>> uses;         // helper (op, dtype) the current test case uses
    std::string skipped;                        // why the current test case did not run
    int thrown_status = 0;                      // the px_status of the last plexus::Error Catch translated
    std::function<void(std::pair<int, int>)> on_use;  // told of each new entry of `uses` at once
};

inline Record& record() {
    static Record r;
    return r;
}

inline bool device_has(px_op op, plexus::DType d) {
    return plexus::supports(pxtest::device_under_test(), op, static_cast<px_dtype>(d));
}

// Notes that the current test case uses `op` on `d` as a helper.
inline void uses(px_op op, plexus::DType d) {
    if (record().uses.insert({int(op), int(d)}).second && record().on_use) record().on_use({int(op), int(d)});
}

// Whether `op` on `d` can be checked here: the device offers it and the
// casts (to float64 to read results; from float64, where inputs are made,
// to `d`). Records the pair as unsupported or untested if not.
inline bool runs(px_op op, plexus::DType d) {
    if (!device_has(op, d)) {
        record().unsupported.insert({int(op), int(d)});
        return false;
    }
    // values() reads through a cast to float64, float64 itself included.
    if (!device_has(PX_OP_CAST, plexus::DType::float64) || !device_has(PX_OP_CAST, d)) {
        record().untested.insert({int(op), int(d)});
        return false;
    }
    if (op != PX_OP_CAST) uses(PX_OP_CAST, plexus::DType::float64), uses(PX_OP_CAST, d);
    return true;
}

// The plugin ABI minor the device under test's plugin was built with.
inline uint32_t plugin_abi_minor() {
    const std::string mine = plexus::plugin_of(pxtest::device_under_test());
    for (const px_plugin_info& p : plexus::plugins())
        if (p.loaded && mine == p.name) return p.abi_minor;
    return 0;
}

// Whether every (op, dtype) is offered; records the test case as skipped if not.
inline bool needs(std::initializer_list<std::pair<px_op, plexus::DType>> ops) {
    std::string missing;
    for (auto& [op, d] : ops) uses(op, d);
    for (auto& [op, d] : ops)
        if (!device_has(op, d)) missing += std::string(missing.empty() ? "" : ", ") + px_op_name(op) + " " + name(d);
    if (missing.empty()) return true;
    record().skipped = "the device lacks " + missing;
    return false;
}

}  // namespace pxconf

#define PX_OP_SECTION(op, dtype) \
    if (pxconf::runs((op), (dtype))) DYNAMIC_SECTION(px_op_name(op) << " " << plexus::name(dtype))
#define PX_NEEDS(...) \
    if (!pxconf::needs({__VA_ARGS__})) return
