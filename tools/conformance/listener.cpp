// A Catch listener that turns the suite's sections and test cases into the
// op x dtype table and the list of checks. A section named "<op> <dtype>"
// (PX_OP_SECTION) is one cell; a test case is one check.
#define CATCH_CONFIG_EXTERNAL_INTERFACES  // the listener and reporter types
#include <catch2/catch.hpp>

#include <sstream>

#include "conformance.hpp"
#include "results.hpp"

namespace pxconformance {

DeviceResults*& current() {
    static DeviceResults* r = nullptr;
    return r;
}

std::function<void(const std::string&)>& on_crash() {
    static std::function<void(const std::string&)> f;
    return f;
}

std::function<void(std::pair<int, int>, bool, Outcome)>& on_cell() {
    static std::function<void(std::pair<int, int>, bool, Outcome)> f;
    return f;
}

std::vector<std::string> requirement_ids(const std::vector<std::string>& tags) {
    std::vector<std::string> ids;
    for (const auto& tag : tags)
        if (tag.size() > 1 && tag[0] == 'R' && std::isdigit(static_cast<unsigned char>(tag[1]))) ids.push_back(tag);
    return ids;
}

void DeviceResults::merge_cell(std::pair<int, int> cell, Outcome o) {
    if (o == Outcome::unsupported) {
        cells.emplace(cell, o);
        return;
    }
    Outcome& c = cells[cell];
    if (o == Outcome::fail) c = Outcome::fail;
    else if (c != Outcome::fail) c = Outcome::pass;
}

namespace {

// (op, dtype) named by the first two words of a section name, if they are.
bool parse_cell(const std::string& section, int& op, int& dtype) {
    std::istringstream words(section);
    std::string op_name, dtype_name;
    words >> op_name >> dtype_name;
    op = dtype = -1;
    for (int i = 0; i < PX_OP_NUMBER_LIMIT && op < 0; ++i)
        if (px_op_name(i) && op_name == px_op_name(i)) op = i;
    for (int i = 0; i < 16 && dtype < 0; ++i)
        if (px_dtype_name(i) && dtype_name == px_dtype_name(i)) dtype = i;
    return op >= 0 && dtype >= 0;
}

std::string describe(const Catch::AssertionStats& stats) {
    const Catch::AssertionResult& r = stats.assertionResult;
    std::ostringstream out;
    out << r.getSourceInfo().file << ":" << r.getSourceInfo().line << ": ";
    if (r.hasExpression()) out << r.getExpressionInMacro() << " with " << r.getExpandedExpression();
    if (r.hasMessage()) out << (r.hasExpression() ? "; " : "") << r.getMessage();
    for (const auto& info : stats.infoMessages) out << " [" << info.message << "]";
    return out.str();
}

class ConformanceListener : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;

    void testCaseStarting(const Catch::TestCaseInfo& info) override {
        check_ = Check{};
        check_.name = info.name;
        check_.requirements = requirement_ids(info.tags);
        pxconf::record().skipped.clear();
    }

    void sectionStarting(const Catch::SectionInfo& info) override {
        open_.push_back({info.name, false});
        int op, dtype;
        if (on_cell() && parse_cell(info.name, op, dtype)) on_cell()({op, dtype}, true, Outcome::pass);
    }

    bool assertionEnded(const Catch::AssertionStats& stats) override {
        if (stats.assertionResult.isOk()) return true;
        // A signal Catch caught (its listeners never see fatalErrorEncountered):
        // it then ends the check (testCaseEnded) and the run, and re-raises.
        if (stats.assertionResult.getResultType() == Catch::ResultWas::FatalErrorCondition)
            crash_ = stats.assertionResult.getMessage();
        for (auto& s : open_) s.second = true;
        if (check_.outcome != Outcome::fail) {
            check_.outcome = Outcome::fail;
            check_.why = describe(stats);
        }
        return true;
    }

    void sectionEnded(const Catch::SectionStats& stats) override {
        if (open_.empty()) return;
        bool failed = open_.back().second || stats.assertions.failed > 0;
        std::string name = open_.back().first;
        open_.pop_back();
        int op, dtype;
        if (!current() || !parse_cell(name, op, dtype)) return;
        const Outcome outcome = failed ? Outcome::fail : Outcome::pass;
        current()->merge_cell({op, dtype}, outcome);
        // Not after a signal: the parent, told nothing, names this cell as the one the child died in.
        if (on_cell() && crash_.empty()) on_cell()({op, dtype}, false, outcome);
    }

    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        if (!current()) return;
        if (!crash_.empty()) {
            check_.outcome = Outcome::fail;
            check_.why = "crashed: " + crash_;
            current()->checks.push_back(check_);
            if (on_crash()) on_crash()(check_.name + ": " + crash_);
            return;
        }
        if (check_.outcome != Outcome::fail && stats.totals.assertions.failed > 0) check_.outcome = Outcome::fail;
        if (check_.outcome != Outcome::fail && !pxconf::record().skipped.empty()) {
            check_.outcome = Outcome::skipped;
            check_.why = pxconf::record().skipped;
        }
        current()->checks.push_back(check_);
        for (const auto& pair : pxconf::record().unsupported) current()->merge_cell(pair, Outcome::unsupported);
        pxconf::record().unsupported.clear();
    }

    void testRunEnded(const Catch::TestRunStats& stats) override {
        TestEventListenerBase::testRunEnded(stats);
        if (!current()) return;
        CatchTotals& t = current()->totals;
        t.assertions_passed += long(stats.totals.assertions.passed);
        t.assertions_failed += long(stats.totals.assertions.failed);
        t.cases_passed += int(stats.totals.testCases.passed);
        t.cases_failed += int(stats.totals.testCases.failed);
    }

private:
    Check check_;
    std::string crash_;  // the signal that ended the running check
    std::vector<std::pair<std::string, bool>> open_;  // open sections, and whether one failed inside
};

}  // namespace

CATCH_REGISTER_LISTENER(ConformanceListener)

}  // namespace pxconformance
