// plexus-conformance's output: the op x dtype table and the checks, as text
// or JSON.
#include "report.hpp"

#include <cstdio>
#include <map>
#include <set>

#include "../json_writer.hpp"
#include "plexus/op_rows.h"
#include "plexus/types.h"
#include "requirements.hpp"

namespace pxconformance {

const char* outcome_name(Outcome o) {
    switch (o) {
    case Outcome::pass: return "pass";
    case Outcome::fail: return "FAIL";
    case Outcome::unsupported: return "unsupported";
    default: return "skipped";
    }
}

int DeviceResults::failures() const {
    int n = 0;
    for (const auto& c : checks) n += c.outcome == Outcome::fail;
    return n;
}

void complete_table(DeviceResults& r, plexus::Device d) {
    for (int32_t op = 0; op < PX_OP_NUMBER_LIMIT; ++op) {
        if (!px_op_row_of(op)) continue;
        for (int32_t dtype = 1; dtype < 16; ++dtype) {
            if (!px_op_accepts(op, dtype)) continue;
            const bool offered = plexus::supports(d, static_cast<px_op>(op), static_cast<px_dtype>(dtype));
            auto [it, added] = r.cells.emplace(std::pair{op, dtype}, offered ? Outcome::skipped : Outcome::unsupported);
            if (!added && it->second == Outcome::unsupported && offered) it->second = Outcome::skipped;
        }
    }
}

void attribute_failures(DeviceResults& r) {
    // Where each cell failed: the failed checks that own it.
    std::map<std::pair<int, int>, std::vector<const Check*>> owners;
    for (const auto& c : r.checks)
        if (c.outcome == Outcome::fail)
            for (const auto& cell : c.failed_cells) owners[cell].push_back(&c);
    // A root failed on its own: none of the helpers it used fails elsewhere.
    const auto blamed = [&](const Check& c) {
        std::vector<std::pair<std::pair<int, int>, const Check*>> out;
        for (const auto& cell : c.uses) {
            if (c.failed_cells.count(cell)) continue;
            auto it = owners.find(cell);
            if (it != owners.end())
                for (const Check* o : it->second)
                    if (o != &c) out.emplace_back(cell, o);
        }
        return out;
    };
    std::set<const Check*> roots;
    for (const auto& c : r.checks)
        if (c.outcome == Outcome::fail && blamed(c).empty()) roots.insert(&c);
    std::vector<std::pair<Check*, std::string>> moved;
    for (auto& c : r.checks) {
        if (c.outcome != Outcome::fail || roots.count(&c)) continue;
        for (const auto& [cell, owner] : blamed(c)) {
            if (!roots.count(owner)) continue;
            moved.emplace_back(&c, std::string("not counted: it uses ") + px_op_name(cell.first) + " " +
                                       px_dtype_name(cell.second) + ", which fails its own check '" + owner->name +
                                       "' (counted there). Its first failure here: " + c.why);
            break;
        }
    }
    for (auto& [c, why] : moved) {
        c->outcome = Outcome::skipped;
        c->why = why;
    }
    // One cause, one failure: the first check that met it. The cells only
    // the others failed did not fail for themselves: untested, not FAIL.
    std::map<std::string, const Check*> first;
    std::set<std::pair<int, int>> uncounted;
    for (auto& c : r.checks) {
        if (c.outcome != Outcome::fail || c.cause.empty()) continue;
        auto [it, added] = first.emplace(c.cause, &c);
        if (added) continue;
        c.outcome = Outcome::skipped;
        c.why = "not counted: " + c.cause + ", as in '" + it->second->name + "' (counted there). Here: " + c.why;
        uncounted.insert(c.failed_cells.begin(), c.failed_cells.end());
    }
    for (const auto& c : r.checks)
        if (c.outcome == Outcome::fail)
            for (const auto& cell : c.failed_cells) uncounted.erase(cell);
    for (const auto& cell : uncounted) r.cells[cell] = Outcome::skipped;
}

void print_op_table() {
    static const char* const results[] = {"", "same", "uint8", "int64", "sum", "mean", "chosen"};
    for (int32_t op = 0; op < PX_OP_NUMBER_LIMIT; ++op) {
        const px_op_row* row = px_op_row_of(op);
        if (!row) continue;
        char dtypes[96];
        px_op_accepted_dtypes(op, dtypes, sizeof dtypes);
        const int result = row->result >= 1 && row->result <= 6 ? row->result : 0;
        std::printf("%s %d [%s] result=%s minor=%d%s\n", row->name, op, dtypes, results[result], row->abi_minor,
                    (row->flags & PX_OP_FLAG_OPTIONAL) ? " optional" : "");
    }
}

namespace {

// The table's columns: every row of the dtype table (types.h).
#define PLEXUS_DTYPE_COLUMN_(dtype, ...) dtype,
const int kDtypes[] = {PX_DTYPE_TABLE(PLEXUS_DTYPE_COLUMN_)};
#undef PLEXUS_DTYPE_COLUMN_

std::string requirement_list(const Check& c) {
    std::string s;
    for (const auto& r : c.requirements) s += (s.empty() ? "" : ", ") + r;
    return s.empty() ? "-" : s;
}

}  // namespace

void print_text(const DeviceResults& r) {
    std::printf("\n== %s  (plugin %s, %s)\n\n", r.device.c_str(), r.plugin.c_str(), r.file.c_str());
    std::printf("  %-32s", "OP");
    for (int d : kDtypes) std::printf(" %-11s", px_dtype_name(d));
    std::printf("\n");
    int counts[4] = {0, 0, 0, 0};
    for (int op = 0; op < PX_OP_NUMBER_LIMIT; ++op) {
        bool any = false;
        for (int d : kDtypes) any |= r.cells.count({op, d}) > 0;
        if (!any) continue;
        std::printf("  %-32s", px_op_name(op));
        for (int d : kDtypes) {
            auto it = r.cells.find({op, d});
            if (it == r.cells.end()) {
                std::printf(" %-11s", "-");
                continue;
            }
            ++counts[int(it->second)];
            std::printf(" %-11s", it->second == Outcome::unsupported ? "unsup"
                                  : it->second == Outcome::skipped  ? "untested"
                                                                    : outcome_name(it->second));
        }
        std::printf("\n");
    }
    int checks[4] = {0, 0, 0, 0};
    for (const auto& c : r.checks) {
        ++checks[int(c.outcome)];
        if (c.outcome == Outcome::pass) continue;
        std::printf("\n  %s %s: %s\n", outcome_name(c.outcome), requirement_list(c).c_str(), c.name.c_str());
        for (const auto& id : c.requirements) std::printf("      %s: %s\n", id.c_str(), requirement_title(id.c_str()));
        std::printf("      %s\n", c.why.c_str());
    }
    if (!r.perf.empty()) {
        std::printf("\n  %-24s %-8s %-22s %12s %12s\n", "PERF OP", "DTYPE", "SHAPE", "MEDIAN us", "RATE");
        for (const auto& p : r.perf)
            std::printf("  %-24s %-8s %-22s %12.1f %8.2f %s\n", p.op.c_str(), p.dtype.c_str(), p.shape.c_str(),
                        p.microseconds, p.rate, p.unit.c_str());
    }
    std::printf("\n  %s: op x dtype %d pass, %d fail, %d unsupported, %d untested; checks %d pass, %d fail, %d skipped\n",
                r.device.c_str(), counts[0], counts[1], counts[2], counts[3], checks[0], checks[1], checks[3]);
}

std::string to_json(const std::vector<DeviceResults>& all, const std::string& crashed) {
    pxtools::Json j;
    j.begin_object().key("devices").begin_array();
    int failures = 0;
    for (const auto& r : all) {
        failures += r.failures();
        j.begin_object().field("device", r.device).field("plugin", r.plugin).field("file", r.file);
        j.key("ops").begin_array();
        for (const auto& [key, outcome] : r.cells)
            j.begin_object()
                .field("op", px_op_name(key.first))
                .field("dtype", px_dtype_name(key.second))
                .field("result", outcome == Outcome::fail       ? "fail"
                                 : outcome == Outcome::skipped ? "untested"
                                                               : outcome_name(outcome))
                .end_object();
        j.end_array().key("checks").begin_array();
        for (const auto& c : r.checks) {
            j.begin_object().field("name", c.name).key("requirements").begin_array();
            for (const auto& id : c.requirements) j.value(id);
            j.end_array()
                .field("result", c.outcome == Outcome::fail ? "fail" : outcome_name(c.outcome))
                .field("detail", c.why)
                .end_object();
        }
        j.end_array().key("perf").begin_array();
        for (const auto& p : r.perf)
            j.begin_object()
                .field("op", p.op)
                .field("dtype", p.dtype)
                .field("shape", p.shape)
                .field("median_us", p.microseconds)
                .field("rate", p.rate)
                .field("unit", p.unit)
                .end_object();
        j.end_array().end_object();
    }
    j.end_array().field("failures", failures);
    if (!crashed.empty()) j.field("crashed", crashed);
    j.end_object();
    return j.str() + "\n";
}

}  // namespace pxconformance
