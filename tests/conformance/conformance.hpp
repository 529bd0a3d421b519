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
// requirements are numbered in docs/writing-a-plugin.md. A case tagged with
// several says which one an assertion checks (Clause), and a failure many
// cases meet the same way (a destroy() that throws) carries its cause
// (PX_FAIL_UNDER), so that plexus-conformance files it once, under one.
#pragma once

#include <cctype>
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
    // The requirement the assertions now running check, in a check tagged
    // with several (Clause): its failure is filed under that one alone.
    std::string clause;
    // A failure other checks meet the same way (a destroy() that throws, a
    // supports() that says yes to what execute refuses), set with the
    // failing assertion: plexus-conformance counts it in the first check.
    std::string cause;
    // Where the check is when it is not in its own code ("destroy()"), so
    // that a crash or a hang there is named; told to on_stage at once.
    std::string stage;
    std::function<void(const std::string&)> on_stage;
    // The last slot a check called directly (opened_plugin.hpp) that failed
    // without a message (R2), until the next such call.
    std::string unsaid;
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

// Whether `text` names the op `op` (its table name) as a word of its own,
// as R9.1 asks: not as part of a longer word or name, as "div" is of
// "integer division by zero" and "softmax_cross_entropy" of
// "softmax_cross_entropy_backward". Op names are of letters, digits and
// '_', so those are what a name may not touch.
inline bool names_op(const std::string& text, const std::string& op) {
    const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (size_t at = text.find(op); at != std::string::npos; at = text.find(op, at + 1)) {
        const size_t end = at + op.size();
        if ((at == 0 || !word_char(text[at - 1])) && (end == text.size() || !word_char(text[end]))) return true;
    }
    return false;
}

// The plugin ABI minor the device under test's plugin was built with.
inline uint32_t plugin_abi_minor() {
    const std::string mine = plexus::plugin_of(pxtest::device_under_test());
    for (const px_plugin_info& p : plexus::plugins())
        if (p.loaded && mine == p.name) return p.abi_minor;
    return 0;
}

// Files the failures of the assertions in its scope under requirement `id`
// alone: a check tagged with several names the one that failed.
class Clause {
public:
    explicit Clause(const char* id) : saved_(record().clause) { record().clause = id; }
    ~Clause() { record().clause = saved_; }
    Clause(const Clause&) = delete;
    Clause& operator=(const Clause&) = delete;

private:
    std::string saved_;
};

// Marks the code in its scope as `where` ("destroy()") for a crash or a
// time-out there.
class Stage {
public:
    explicit Stage(const char* where) : saved_(record().stage) { set(where); }
    ~Stage() { set(saved_); }
    Stage(const Stage&) = delete;
    Stage& operator=(const Stage&) = delete;

private:
    static void set(const std::string& where) {
        record().stage = where;
        if (record().on_stage) record().on_stage(where);
    }
    std::string saved_;
};

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
// R9.1: the message `text` names the op `op` (names_op).
#define PX_REQUIRE_NAMES_OP(text, op)                                         \
    do {                                                                    \
        const std::string px_text_ = (text);                                \
        INFO("message: " << px_text_ << " [R9.1: it must name the op " << (op) \
                         << " by its table name, as a word of its own]");    \
        REQUIRE(pxconf::names_op(px_text_, op));                            \
    } while (0)
// Fails the check (FAIL, or CHECK_FAIL: going on, as a destructor must)
// under requirement `id` alone, with `cause`: the checks that meet the same
// cause after the first are not counted again.
#define PX_FAIL_UNDER_(macro, id, cause_text, message)   \
    do {                                               \
        const pxconf::Clause px_clause_(id);           \
        pxconf::record().cause = (cause_text);         \
        macro(message);                                \
    } while (0)
#define PX_FAIL_UNDER(id, cause_text, message) PX_FAIL_UNDER_(FAIL, id, cause_text, message)
#define PX_FAIL_CHECK_UNDER(id, cause_text, message) PX_FAIL_UNDER_(FAIL_CHECK, id, cause_text, message)
