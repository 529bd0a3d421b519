// plexus-conformance: runs the conformance suite against the devices of any
// plugin (or of every loaded plugin), prints an op x dtype table (pass, FAIL,
// unsupported) and the checks that failed with the requirement they break,
// and exits non-zero on any failure. The same suite backs `ctest -L
// conformance`. Options it does not know go to Catch (test names, tags).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "../device_arg.hpp"
#include "isolate.hpp"
#include "perf.hpp"
#include "plexus/plexus.hpp"
#include "report.hpp"
#include "results.hpp"

namespace {

using namespace plexus;
using pxconformance::DeviceResults;

const char* kUsage =
    "usage: plexus-conformance [--plugin FILE]... [--device ID]... [--json FILE|-] [--perf]\n"
    "                          [--timeout S] [--budget S] [--in-process] [Catch options and test names]\n"
    "  --plugin FILE  load this plugin file first and test its devices (a file, not a folder)\n"
    "  --device ID    test this device (cpu:0, gpu:1, a plugin's own kind: naive:0; also cpu(0), accel:0)\n"
    "                 default: every device of the --plugin files, else of every loaded plugin\n"
    "  --json FILE    write the results as JSON to FILE, or to stdout with '-'\n"
    "  --perf         time representative calls of every supported op\n"
    "  --timeout S    each check runs in a child process; one that crashes, exits or runs\n"
    "                 longer than S seconds (default 60) fails, and the run goes on\n"
    "  --budget S     the whole run's time (default 540): when hangs have spent it, the\n"
    "                 checks left get 1 s each, so a report always comes\n"
    "  --in-process   run the checks in this process (for a debugger); a crash ends the\n"
    "                 run, and --json then holds what was found before, with \"crashed\"\n"
    "  --skip-absent  a --device that does not exist, or a --plugin with no devices (its\n"
    "                 reason is shown), is skipped (exit 4 when nothing is left), not an error\n"
    "  --list-ops     print every op of the op table (name, number, dtypes, result dtype,\n"
    "                 ABI minor, optional) and exit; docs/semantics.md has a section for each\n"
    "Exit status: 0 when everything run passed, 1 on a failure, 2 on bad arguments, a\n"
    "plugin that did not load or no devices to test, 4 when --skip-absent skipped every device.\n";

// ctest's SKIP_RETURN_CODE for the devices of a machine that lacks them.
constexpr int kSkipped = 4;

// Writes the JSON to `path` ('-': stdout); false when it could not.
bool write_json(const std::string& path, const std::string& json) {
    if (path == "-") return std::fputs(json.c_str(), stdout) >= 0 && std::fflush(stdout) == 0;
    std::ofstream f(path);
    f << json;
    f.close();
    return bool(f);
}

// A positive number of seconds, or nothing.
std::optional<double> seconds(const std::string& s) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end || !(v > 0)) return std::nullopt;
    return v;
}

int usage_error(const std::string& message) {
    std::fprintf(stderr, "plexus-conformance: %s\n%s", message.c_str(), kUsage);
    return 2;
}

// A failure that is not about the command's form: the reason alone.
int error(const std::string& message) {
    std::fprintf(stderr, "plexus-conformance: %s\n", message.c_str());
    return 2;
}

// Why the JSON could not be written at `path` (empty when it can), asked
// before the suite runs rather than found after it.
std::string json_target_problem(const std::string& path) {
    if (path.empty() || path == "-") return {};
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return "--json " + path + ": is a folder";
    std::filesystem::path folder = std::filesystem::path(path).parent_path();
    if (folder.empty()) folder = ".";
    if (!std::filesystem::is_directory(folder, ec)) return "--json " + path + ": no such folder " + folder.string();
    if (::access(folder.c_str(), W_OK) != 0 || (std::filesystem::exists(path, ec) && ::access(path.c_str(), W_OK) != 0))
        return "--json " + path + ": not writable";
    return {};
}

// Why the plugin whose name is `name` gives no device: "the plugin cee
// (file) loaded with no devices: <its reason>" (device_count's message,
// which plexus-smi shows too), or that it did not load and why; empty when
// no such plugin was found or it has devices.
std::string why_no_devices(const std::string& name) {
    for (const px_plugin_info& p : plugins()) {
        if (name != p.name) continue;
        const std::string said = p.message && *p.message ? p.message : "it gave no reason";
        if (!p.loaded) return std::string("the plugin ") + p.name + " (" + p.file + ") did not load: " + said;
        if (p.num_devices == 0) return std::string("the plugin ") + p.name + " (" + p.file + ") loaded with no devices: " + said;
    }
    return {};
}

// Whether two paths name one file (a link and its target, ./a.so and a.so).
bool same_file(const std::string& a, const std::string& b) {
    std::error_code ec;
    return a == b || std::filesystem::equivalent(a, b, ec);
}

// Every device, in kind order, whose plugin is in `plugins` (all when empty).
std::vector<Device> devices_of(const std::vector<std::string>& plugins) {
    std::vector<Device> out;
    for (const Device& d : all_devices()) {
        bool wanted = plugins.empty();
        for (const auto& p : plugins) wanted |= plugin_of(d) == p;
        if (wanted) out.push_back(d);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) try {
    std::vector<std::string> plugin_files, device_ids;
    std::string json_path, isolated_device, isolated_check;
    int isolated_fd = -1;  // a child of run_isolated: where to report
    bool perf = false, skip_absent = false, in_process = false;
    pxconformance::Clock clock;
    std::vector<char*> catch_args = {argv[0]};
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--plugin" || a == "--device" || a == "--json" || a == "--timeout" || a == "--budget" ||
            a == "--isolated-fd" || a == "--isolated-device" || a == "--isolated-check") {
            if (i + 1 >= argc) return usage_error(a + " needs a value");
            std::string v = argv[++i];
            if (a == "--plugin") plugin_files.push_back(v);
            else if (a == "--isolated-fd") {
                char* end = nullptr;
                const long fd = std::strtol(v.c_str(), &end, 10);
                if (end == v.c_str() || *end || fd < 3 || fd > 1 << 20)
                    return usage_error("--isolated-fd (the parent's pipe) is not a file descriptor: '" + v + "'");
                isolated_fd = int(fd);
            }
            else if (a == "--isolated-device") isolated_device = v;
            else if (a == "--isolated-check") isolated_check = v;
            else if (a == "--device") device_ids.push_back(v);
            else if (a == "--json") json_path = v;
            else if (auto s = seconds(v)) (a == "--timeout" ? clock.timeout_s : clock.budget_s) = *s;
            else return usage_error(a + " needs a number of seconds above 0, not '" + v + "'");
        } else if (a == "--in-process") {
            in_process = true;
        } else if (a == "--perf") {
            perf = true;
        } else if (a == "--skip-absent") {
            skip_absent = true;
        } else if (a == "--list-ops") {
            pxconformance::print_op_table();
            return 0;
        } else if (a == "--help" || a == "-h") {
            std::printf("%s\nCatch options:\n", kUsage);
            catch_args.push_back(argv[i]);
        } else {
            catch_args.push_back(argv[i]);
        }
    }

    if (const std::string why = json_target_problem(json_path); !why.empty()) return error(why);

    // The plugin files go first on the search path, before the runtime exists.
    for (const auto& f : plugin_files) {
        std::error_code ec;
        if (!std::filesystem::exists(f, ec)) return error("--plugin " + f + ": no such file");
        // One plugin file each: a folder's plugins are not this plugin's
        // (PLEXUS_PLUGIN_PATH takes folders, for every plugin in them).
        if (std::filesystem::is_directory(f, ec))
            return error("--plugin " + f + ": is a folder; name the plugin's file (lib<name>.so) in it");
    }
    if (!plugin_files.empty()) {
        std::string path;
        for (const auto& f : plugin_files) path += (path.empty() ? "" : ":") + f;
        if (const char* old = std::getenv("PLEXUS_PLUGIN_PATH")) path += std::string(":") + old;
        setenv("PLEXUS_PLUGIN_PATH", path.c_str(), 1);
    }
    std::vector<std::string> plugin_names, no_devices;  // no_devices: why each such --plugin has none
    for (size_t i = 0; i < plugin_files.size(); ++i) {
        const std::string& f = plugin_files[i];
        // Given twice under two paths (a link): the runtime loads the file once.
        const auto earlier = std::find_if(plugin_files.begin(), plugin_files.begin() + long(i),
                                          [&](const std::string& e) { return same_file(e, f); });
        if (earlier != plugin_files.begin() + long(i)) {
            if (isolated_fd < 0)  // said once, not again by each check's child
                std::fprintf(stderr, "plexus-conformance: --plugin %s: the same file as %s, tested once\n", f.c_str(),
                         earlier->c_str());
            continue;
        }
        bool found = false;
        for (const auto& info : plugins()) {
            if (!same_file(f, info.file)) continue;
            found = true;
            if (!info.loaded) return error("the plugin " + f + " did not load: " + info.message);
            plugin_names.push_back(info.name);
            if (info.num_devices == 0 && device_ids.empty()) no_devices.push_back(why_no_devices(info.name));
            break;
        }
        if (!found)  // PLEXUS_PLUGIN_PATH is ':'-separated: such a path is two
            return error("the plugin " + f + " is not among the files the runtime tried" +
                         (f.find(':') != std::string::npos ? " (a ':' in its path splits it in PLEXUS_PLUGIN_PATH)" : ""));
    }
    // A plugin that loaded with no devices (a CI machine without the board):
    // its own reason, and with --skip-absent the test is skipped, not failed.
    for (const auto& why : no_devices) {
        if (!skip_absent) return error(why + " (--skip-absent skips it)");
        std::printf("plexus-conformance: skipped: %s\n", why.c_str());
    }
    std::vector<Device> devices;
    for (const auto& id : device_ids) {
        Device d{};
        std::string why;
        px_status status = PX_OK;
        if (auto parsed = pxtools::parse_device_arg(id, &why, &status)) {
            d = *parsed;
        } else {
            // "cee:0" of a plugin cee that loaded with no devices (or did not
            // load) names no kind: say so, with the plugin's reason.
            const std::string kind = id.substr(0, id.find_first_of(":("));
            if (status == PX_ERROR_NO_DEVICE && !why_no_devices(kind).empty())
                why = "'" + id + "': " + why_no_devices(kind);
            if (skip_absent && status == PX_ERROR_NO_DEVICE) {  // accel:0 or mydev:0 with no such device
                std::printf("plexus-conformance: skipped: %s\n", why.c_str());
                continue;
            }
            if (status == PX_ERROR_NO_DEVICE && !why_no_devices(kind).empty()) return error("--device " + why);
            return usage_error("--device: " + why);
        }
        try {
            d = resolve(d);  // by its own name (naive(0) for accel:0); NoDeviceError, naming the reason, when absent
        } catch (const PluginError& e) {
            if (!skip_absent || e.status() != PX_ERROR_NO_DEVICE) throw;
            std::printf("plexus-conformance: skipped: %s\n", e.what());
            continue;
        }
        if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
    }
    if (devices.empty() && !device_ids.empty()) return kSkipped;  // every named device was absent
    if (devices.empty()) devices = devices_of(plugin_names);
    if (devices.empty() && !plugin_names.empty()) return kSkipped;  // each said why above
    if (devices.empty()) {  // no plugin of the runtime has a device: each one's reason
        std::string why = "no devices to test";
        for (const px_plugin_info& p : plugins())
            why += std::string("\n  ") + (p.name && *p.name ? p.name : "?") + " (" + p.file + "): " +
                   (p.message && *p.message ? p.message : p.loaded ? "loaded, no devices" : "not loaded");
        if (!skip_absent) return error(why);
        std::printf("plexus-conformance: skipped: %s\n", why.c_str());
        return kSkipped;
    }

    Catch::Session session;
    // Catch has said what it could not parse; the status is ours (bad arguments).
    if (session.applyCommandLine(int(catch_args.size()), catch_args.data()) != 0) return 2;
    if (session.configData().showHelp) return 0;
    if (json_path == "-") session.configData().outputFilename = "/dev/null";  // stdout is the JSON's
    // In the child: the session, narrowed to one check.
    const auto run_spec = [&session](const std::string& spec) {
        Catch::ConfigData data = session.configData();
        data.testsOrTags = {spec};
        session.useConfigData(data);
        session.run();
    };
    if (isolated_fd >= 0) {
        const auto d = pxtools::parse_device_arg(isolated_device);
        if (!d || isolated_check.empty()) return usage_error("--isolated-fd needs --isolated-device and --isolated-check");
        setenv("PLEXUS_TEST_DEVICE", d->str().c_str(), 1);
        pxconformance::run_one_check(run_spec, *d, isolated_check, isolated_fd);
    }

    // Listing, or filters that match nothing: Catch says so, in this process.
    const Catch::ConfigData& cd = session.configData();
    const std::vector<pxconformance::Check> checks = pxconformance::selected_checks(session.config());
    // Listing, and filters selected_checks cannot see through (-# file tags,
    // which Catch adds inside run()), run in this process.
    const bool listing = cd.listTests || cd.listTestNamesOnly || cd.listTags || cd.listReporters;
    if (listing || checks.empty()) in_process = true;
    clock.checks_left = int(checks.size() * devices.size());

    std::vector<DeviceResults> results;
    int rc = 0;
    for (Device d : devices) {
        setenv("PLEXUS_TEST_DEVICE", d.str().c_str(), 1);
        DeviceResults r;
        r.device = d.str();
        r.plugin = plugin_of(d);
        for (const auto& info : plugins())
            if (info.loaded && r.plugin == info.name) r.file = info.file;
        if (!in_process) {
            pxconformance::run_isolated(std::vector<std::string>(argv, argv + argc), d, checks, clock,
                                        json_path != "-", r);
            pxconformance::attribute_failures(r);
            pxconformance::complete_table(r, d);
            if (perf) r.perf = pxconformance::measure_ops(d);
            results.push_back(std::move(r));
            continue;
        }
        pxconformance::current() = &r;
        // A crash ends the process inside session.run(): write what we have.
        pxconformance::on_crash() = [&](const std::string& why) {
            std::vector<DeviceResults> so_far = results;
            so_far.push_back(r);
            const std::string crashed = r.device + " " + why;
            const bool written = !json_path.empty() && write_json(json_path, pxconformance::to_json(so_far, crashed));
            std::fprintf(stderr, "plexus-conformance: crashed in %s%s\n", crashed.c_str(),
                         written ? "; the JSON holds the results found before" : "");
        };
        rc = std::max(rc, session.run());
        pxconformance::on_crash() = nullptr;
        pxconformance::current() = nullptr;
        pxconformance::attribute_failures(r);
        pxconformance::complete_table(r, d);
        if (perf) r.perf = pxconformance::measure_ops(d);
        results.push_back(std::move(r));
    }
    bool ran = false;
    for (const auto& r : results) ran |= !r.checks.empty();
    // A filter that matches nothing (a misspelt tag) must not pass a CI job.
    if (!ran) return listing ? rc : error("no check matches the filters given (--list-tests lists them)");
    if (!in_process && json_path != "-") {
        pxconformance::CatchTotals sum;
        for (const auto& r : results) {
            sum.assertions_passed += r.totals.assertions_passed;
            sum.assertions_failed += r.totals.assertions_failed;
            sum.cases_passed += r.totals.cases_passed;
            sum.cases_failed += r.totals.cases_failed;
        }
        pxconformance::print_catch_summary(sum);
    }
    int failures = 0;
    for (const auto& r : results) {
        failures += r.failures();
        if (json_path != "-") pxconformance::print_text(r);
    }
    if (!json_path.empty()) {
        if (!write_json(json_path, pxconformance::to_json(results))) return error("cannot write " + json_path);
    }
    return failures > 0 || rc != 0 ? 1 : 0;
} catch (const std::exception& e) {  // plexus errors, and a fork or pipe the system refused
    std::fprintf(stderr, "plexus-conformance: %s\n", e.what());
    return 2;
}
