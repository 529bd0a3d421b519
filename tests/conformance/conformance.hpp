// What the conformance suite needs beyond the test helpers: which (op, dtype)
// pairs the device under test offers, and a record of what a run could not
// test, read by plexus-conformance to print its op x dtype table.
//
// Checks of one op on one dtype go in PX_OP_SECTION(op, dtype) { ... }: the
// section runs only when the device supports the op on that dtype (and the
// casts to and from float64 that make inputs and read results); otherwise the
// pair is recorded as unsupported. A check that uses other ops starts with
// PX_NEEDS(...) and is recorded as skipped when the device lacks one.
// Test cases carry the requirement they check as a tag, e.g. [R10]; the
// requirements are numbered in docs/writing-a-plugin.md.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../support.hpp"

namespace pxconf {

struct Record {
    std::set<std::pair<int, int>> unsupported;  // (op, dtype) the device lacks
    std::string skipped;                        // why the current test case did not run
};

inline Record& record() {
    static Record r;
    return r;
}

inline bool device_has(px_op op, plexus::DType d) {
    return plexus::supports(pxtest::device_under_test(), op, static_cast<px_dtype>(d));
}

// Whether `op` on `d` can be checked here; records it as unsupported if not.
inline bool runs(px_op op, plexus::DType d) {
    bool ok = device_has(op, d) &&
              (d == plexus::DType::float64 || (device_has(PX_OP_CAST, plexus::DType::float64) &&
                                               device_has(PX_OP_CAST, d)));
    if (!ok) record().unsupported.insert({int(op), int(d)});
    return ok;
}

// Whether every (op, dtype) is offered; records the test case as skipped if not.
inline bool needs(std::initializer_list<std::pair<px_op, plexus::DType>> ops) {
    std::string missing;
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
