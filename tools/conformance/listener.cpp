// A Catch listener that turns the suite's sections and test cases into the
// op x dtype table and the list of checks. A section named "<op> <dtype>"
// (PX_OP_SECTION) is one cell; a test case is one check.
#define CATCH_CONFIG_EXTERNAL_INTERFACES  // the listener and reporter types
#include <catch2/catch.hpp>

#include <algorithm>
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
    if (o == Outcome::unsupported || o == Outcome::skipped) {
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

// What failed, self-described: the expression and its values, or the
// exception's message, and what the check said about it (INFO), each once;
// no source path, since an author's installed package has no sources. The
// report adds the requirement's text.
std::string describe(const Catch::AssertionStats& stats) {
    const Catch::AssertionResult& r = stats.assertionResult;
    std::ostringstream out;
    std::string said;
    // Catch's stand-in for the expression of an exception met outside any
    // assertion says nothing: the exception's message does.
    if (r.hasExpression() && r.getExpression().find("{Unknown expression after the reported line}") == std::string::npos) {
        out << r.getExpressionInMacro();
        std::string expanded = r.getExpandedExpression();
        std::replace(expanded.begin(), expanded.end(), '\n', ' ');
        if (expanded != r.getExpression()) out << " with " << expanded;
    }
    if (r.hasMessage()) said = r.getMessage();
    if (!said.empty()) out << (out.tellp() > 0 ? "; " : "") << said;
    for (const auto& info : stats.infoMessages)
        if (info.message != said) out << " [" << info.message << "]";
    return out.str();
}

// "<op> on <dtype> is not supported on ..." (or "cast to <dtype> ...", the
// output's dtype): the host's refusal of a pair the device's supports()
// turned down; the pair, if it is one.
bool refused_pair(std::string message, int& op, int& dtype) {
    if (message.rfind("px_", 0) == 0 && message.find(": ") != std::string::npos)  // the C function's name
        message.erase(0, message.find(": ") + 2);
    std::istringstream words(message);
    std::string op_name, on, dtype_name, rest;
    words >> op_name >> on >> dtype_name;
    std::getline(words, rest);
    return (on == "on" || (on == "to" && op_name == "cast")) && rest.rfind(" is not supported on ", 0) == 0 &&
           parse_cell(op_name + " " + dtype_name, op, dtype);
}

// The op an error from the host names after its C function's name
// ("px_binary: sub on cee(0): ..."), or -1.
int op_named_in(std::string message) {
    if (message.rfind("px_", 0) == 0 && message.find(": ") != std::string::npos)
        message.erase(0, message.find(": ") + 2);
    const std::string word = message.substr(0, message.find(' '));
    for (int i = 0; i < PX_OP_NUMBER_LIMIT; ++i)
        if (px_op_name(i) && word == px_op_name(i)) return i;
    return -1;
}

// The host's words for a plugin's failure without a message (host/objects.cpp).
constexpr const char* kNoMessage = "(the plugin gave no message)";

class ConformanceListener : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;

    void testCaseStarting(const Catch::TestCaseInfo& info) override {
        check_ = Check{};
        check_.name = info.name;
        check_.requirements = requirement_ids(info.tags);
        pxconf::record().skipped.clear();
        pxconf::record().uses.clear();
        pxconf::record().cause.clear();
        pxconf::record().stage.clear();
        pxconf::record().unsaid.clear();
        undeclared_.clear();
    }

    void sectionStarting(const Catch::SectionInfo& info) override {
        open_.push_back({info.name, false, false});
        int op, dtype;
        if (on_cell() && parse_cell(info.name, op, dtype)) on_cell()({op, dtype}, true, Outcome::pass);
    }

    bool assertionEnded(const Catch::AssertionStats& stats) override {
        if (stats.assertionResult.isOk()) return true;
        // The clause the check said it was checking, and a cause other checks
        // may meet too (conformance.hpp), for this failure alone.
        std::string clause = pxconf::record().clause, cause = pxconf::record().cause, said;
        pxconf::record().cause.clear();
        // A slot called directly failed without a message just before (R2):
        // one defect, however many checks meet it, counted once.
        if (!pxconf::record().unsaid.empty()) {
            clause = "R2";
            cause = "a failure with no message";
            said = pxconf::record().unsaid + ": ";
            pxconf::record().unsaid.clear();
        }
        // A signal Catch caught (its listeners never see fatalErrorEncountered):
        // it then ends the check (testCaseEnded) and the run, and re-raises.
        if (stats.assertionResult.getResultType() == Catch::ResultWas::FatalErrorCondition)
            crash_ = stats.assertionResult.getMessage();
        if (stats.assertionResult.getResultType() == Catch::ResultWas::ThrewException) {
            const int status = pxconf::record().thrown_status;
            pxconf::record().thrown_status = 0;
            int op = -1, dtype = -1;
            // The host refused a pair supports() turned down, which the check
            // used without declaring it: the suite's gap, not the plugin's.
            if (status == PX_ERROR_UNSUPPORTED && refused_pair(stats.assertionResult.getMessage(), op, dtype) &&
                !pxconf::device_has(static_cast<px_op>(op), static_cast<plexus::DType>(dtype))) {
                if (undeclared_.empty())
                    undeclared_ = std::string("the device lacks ") + px_op_name(op) + " " + px_dtype_name(dtype) +
                                  ", which this check uses";
                for (auto& s : open_) s.undeclared = true;
                return true;
            }
            const std::string message = stats.assertionResult.getMessage();
            // The host's word for a plugin that broke the ABI: a C++
            // exception escaped, or a status the ABI does not define: R2's,
            // whichever check met it.
            if (status == PX_ERROR_PLUGIN) clause = "R2";
            // A failure without its message (R2): one defect, however many
            // checks meet it, counted once.
            if (message.find(kNoMessage) != std::string::npos) {
                clause = "R2";
                cause = "a failure with no message";
            }
            // The plugin's own refusal (the host adds " [plugin name]" to
            // its words) of a call the host routed, which it does only for
            // what supports() offers: supports() said yes, execute no (R5).
            const int refused = op_named_in(message);
            if (status == PX_ERROR_UNSUPPORTED && message.find(" [plugin ") != std::string::npos && refused >= 0) {
                clause = "R5";
                cause = std::string("supports() said yes to ") + px_op_name(refused) + ", execute refused it";
                said = std::string("supports() said yes to ") + px_op_name(refused) +
                       " and execute refused it as unsupported: ";
            }
        }
        for (auto& s : open_) s.failed = true;
        if (check_.outcome == Outcome::fail) return true;
        check_.outcome = Outcome::fail;
        check_.why = said + describe(stats);
        check_.cause = cause;
        // Filed under the one requirement the failure breaks, where the check
        // can tell; otherwise under every requirement the check is tagged with.
        if (!clause.empty()) check_.requirements = {clause};
        return true;
    }

    void sectionEnded(const Catch::SectionStats& stats) override {
        if (open_.empty()) return;
        const OpenSection section = open_.back();
        open_.pop_back();
        const bool failed = section.failed || (stats.assertions.failed > 0 && !section.undeclared);
        const std::string& name = section.name;
        int op, dtype;
        if (!current() || !parse_cell(name, op, dtype)) return;
        // A section that stopped at a pair the device lacks tested nothing.
        const Outcome outcome = failed ? Outcome::fail : section.undeclared ? Outcome::skipped : Outcome::pass;
        if (outcome == Outcome::fail) check_.failed_cells.insert({op, dtype});
        current()->merge_cell({op, dtype}, outcome);
        // Not after a signal: the parent, told nothing, names this cell as the one the child died in.
        if (on_cell() && crash_.empty()) on_cell()({op, dtype}, false, outcome);
    }

    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        if (!current()) return;
        if (!crash_.empty()) {
            check_.outcome = Outcome::fail;
            check_.why = "crashed: " + crash_;
            if (!pxconf::record().stage.empty()) {  // not in the check's own code: said, and counted once
                check_.why += " in " + pxconf::record().stage;
                check_.requirements = {"R2"};
                check_.cause = check_.why;
            }
            current()->checks.push_back(check_);
            if (on_crash()) on_crash()(check_.name + ": " + crash_);
            return;
        }
        if (check_.outcome != Outcome::fail && !undeclared_.empty()) {
            check_.outcome = Outcome::skipped;
            check_.why = undeclared_;
        }
        if (check_.outcome == Outcome::pass && undeclared_.empty() && stats.totals.assertions.failed > 0)
            check_.outcome = Outcome::fail;
        if (check_.outcome != Outcome::fail && !pxconf::record().skipped.empty()) {
            check_.outcome = Outcome::skipped;
            check_.why = pxconf::record().skipped;
        }
        check_.uses = pxconf::record().uses;
        current()->checks.push_back(check_);
        for (const auto& pair : pxconf::record().unsupported) current()->merge_cell(pair, Outcome::unsupported);
        for (const auto& pair : pxconf::record().untested) current()->merge_cell(pair, Outcome::skipped);
        pxconf::record().unsupported.clear();
        pxconf::record().untested.clear();
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
    std::string undeclared_;  // a pair the check used that the device lacks
    struct OpenSection {
        std::string name;
        bool failed, undeclared;  // whether a check failed inside; whether it met a pair the device lacks
    };
    std::vector<OpenSection> open_;
};

}  // namespace

CATCH_REGISTER_LISTENER(ConformanceListener)

}  // namespace pxconformance
