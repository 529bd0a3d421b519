#include "plugin_loader.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include <atomic>

#include <boost/dll/runtime_symbol_info.hpp>

#include "bounded_call.hpp"
#include "device_kinds.hpp"
#include "elf_check.hpp"
#include "plexus/op_rows.h"

namespace px {
namespace fs = std::filesystem;

namespace {

constexpr size_t table_header_size = offsetof(px_plugin_api, version) + sizeof(const char*);
constexpr size_t table_1_0_size = offsetof(px_plugin_api, synchronize) + sizeof(void*);
constexpr int32_t max_devices_per_plugin = 4096;  // plugin.h, device_count

// How far the table of a plugin built for `minor` reaches: the end of the
// last slot that minor defines (a newer minor reaches past ours).
constexpr size_t end_of(size_t offset_of_slot) { return offset_of_slot + sizeof(void*); }
size_t table_size_of_minor(uint32_t minor) {
    if (minor >= 8) return sizeof(px_plugin_api);
    if (minor >= 5) return end_of(offsetof(px_plugin_api, buffer_wrap));
    if (minor >= 3) return end_of(offsetof(px_plugin_api, group_leave));
    if (minor >= 2) return end_of(offsetof(px_plugin_api, all_reduce));
    return table_1_0_size;
}

struct Candidate {
    std::string path;
    std::string problem;  // set when the path itself is unusable
};

void add_entry(const std::string& entry, const char* origin, std::vector<Candidate>& out) {
    if (entry.empty()) return;
    std::error_code ec;
    fs::path p(entry);
    if (fs::is_directory(p, ec)) {
        std::vector<std::string> files;
        for (const auto& f : fs::directory_iterator(p, ec)) {  // not only regular files: the rest are listed as skipped
            if (f.path().extension() == ".so" && !f.is_directory(ec)) files.push_back(f.path().string());
        }
        std::sort(files.begin(), files.end());
        for (auto& f : files) out.push_back({f, ""});
    } else if (fs::exists(p, ec)) {
        out.push_back({entry, ""});
    } else {
        out.push_back({entry, cat("no such file or folder (from ", origin, ")")});
    }
}

std::vector<Candidate> candidates(const px_runtime_options* options) {
    std::vector<Candidate> out;
    bool only_given = false;
    if (options) {
        if (options->struct_size < offsetof(px_runtime_options, only_given_paths) + sizeof(int32_t))
            fail(PX_ERROR_INVALID_ARGUMENT, "options->struct_size ", options->struct_size,
                 " is smaller than px_runtime_options");
        if (options->num_plugin_paths < 0 || (options->num_plugin_paths > 0 && !options->plugin_paths))
            fail(PX_ERROR_INVALID_ARGUMENT, "options: ", options->num_plugin_paths,
                 " plugin paths but plugin_paths is ", options->plugin_paths ? "set" : "NULL");
        for (int i = 0; i < options->num_plugin_paths; ++i) {
            if (!options->plugin_paths[i]) fail(PX_ERROR_INVALID_ARGUMENT, "options->plugin_paths[", i, "] is NULL");
            add_entry(options->plugin_paths[i], "the runtime options", out);
        }
        only_given = options->only_given_paths != 0;
    }
    if (only_given) return out;
    if (const char* env = std::getenv("PLEXUS_PLUGIN_PATH")) {
        std::string list = env;
        size_t start = 0;
        while (start <= list.size()) {
            size_t end = list.find(':', start);
            if (end == std::string::npos) end = list.size();
            add_entry(list.substr(start, end - start), "PLEXUS_PLUGIN_PATH", out);
            start = end + 1;
        }
    }
    std::string folder = default_plugin_folder();
    std::error_code ec;
    if (fs::is_directory(folder, ec)) add_entry(folder, "the default folder", out);
    else out.push_back({folder, "the default plugin folder does not exist"});
    return out;
}

// Memory running out while a plugin loads fails the runtime's creation: a
// runtime made without the plugin would quietly send work elsewhere (try_gpu()
// falling back to the CPU) for what is a passing shortage.
[[noreturn]] void fail_out_of_memory(const std::string& file, const char* slot, const char* words) {
    fail(PX_ERROR_OUT_OF_MEMORY, "the plugin ", file, " ran out of memory in ", slot, ": ", words);
}

const char* missing_slot(const px_plugin_api& t) {
#define PX_REQUIRE(slot) if (!t.slot) return #slot;
    PX_REQUIRE(create) PX_REQUIRE(destroy) PX_REQUIRE(device_count) PX_REQUIRE(device_info)
    PX_REQUIRE(supports) PX_REQUIRE(buffer_alloc) PX_REQUIRE(buffer_free) PX_REQUIRE(copy_from_host)
    PX_REQUIRE(copy_to_host) PX_REQUIRE(copy_device) PX_REQUIRE(execute) PX_REQUIRE(synchronize)
#undef PX_REQUIRE
    return nullptr;
}

// An optional set of slots the table fills in part, which the host would
// otherwise ignore without a word ("all four or none", plugin.h says).
std::string partial_slot_set(const px_plugin_api& t) {
    const auto set = [](std::initializer_list<bool> slots) { return std::count(slots.begin(), slots.end(), true); };
    const auto groups = set({t.group_make_id != nullptr, t.group_join != nullptr, t.group_all_reduce != nullptr,
                             t.group_leave != nullptr});
    if (groups != 0 && groups != 4)
        return cat("it sets ", groups, " of the 4 group_* slots (ABI 1.3), which are all set or none");
    const auto traces = set({t.trace_enable != nullptr, t.execute_traced != nullptr, t.trace_take != nullptr});
    if (traces != 0 && traces != 3)
        return cat("it sets ", traces, " of the 3 trace slots (ABI 1.8: trace_enable, execute_traced, trace_take), "
                   "which are all set or none");
    return {};
}

// The plugin call a load is in, for the message of one that never returns.
using Stage = std::atomic<const char*>;

// The dynamic loader's own words in Boost.DLL's message, "...load() failed
// (dlerror system message: WORDS): " and an errno text that is no reason.
std::string loader_words(const std::string& what) {
    const std::string mark = "dlerror system message: ";
    const size_t from = what.find(mark), to = what.rfind("):");
    if (from == std::string::npos || to == std::string::npos || to < from + mark.size()) return what;
    return what.substr(from + mark.size(), to - from - mark.size());
}

// Opens one file (its constructors run here: the caller's thread, since
// a hang in them holds the loader's lock, which no time-out gets back);
// on failure fills rec.message and returns nullptr.
std::shared_ptr<PluginInstance> open_library(const std::string& path, PluginRecord& rec) {
    rec.message = check_plugin_file(path);
    if (!rec.message.empty()) return nullptr;
    auto plugin = std::make_shared<PluginInstance>();
    plugin->file = path;
    try {
        plugin->library.load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::bad_alloc&) {
        throw;  // out of memory is the caller's error, not a reason to skip the plugin
    } catch (const std::exception& e) {
        rec.message = cat("the loader could not open it: ", loader_words(e.what()));
        return nullptr;
    }
    if (!plugin->library.has(PX_PLUGIN_ENTRY_SYMBOL)) {
        rec.message = "not a Plexus plugin: it does not export " PX_PLUGIN_ENTRY_SYMBOL;
        return nullptr;
    }
    return plugin;
}

// Asks an opened plugin for its table, checks it and creates a context; on
// failure fills rec.message and returns nullptr.
std::shared_ptr<PluginInstance> start_plugin(std::shared_ptr<PluginInstance> plugin, PluginRecord& rec, Stage& stage) {
    auto get_api = plugin->library.get<const px_plugin_api*()>(PX_PLUGIN_ENTRY_SYMBOL);
    const px_plugin_api* theirs = nullptr;
    stage = PX_PLUGIN_ENTRY_SYMBOL "()";
    try {
        theirs = get_api();
    } catch (...) {
        rec.message = PX_PLUGIN_ENTRY_SYMBOL " threw a C++ exception, which the ABI forbids";
        return nullptr;
    }
    if (!theirs) {
        rec.message = PX_PLUGIN_ENTRY_SYMBOL " returned NULL";
        return nullptr;
    }
    if (theirs->struct_size < table_header_size) {
        rec.message = cat("its function table is ", theirs->struct_size, " bytes, too small to hold the ABI header (",
                          table_header_size, " bytes)");
        return nullptr;
    }
    rec.abi_major = theirs->abi_major;
    rec.abi_minor = theirs->abi_minor;
    if (theirs->name) rec.name = theirs->name;
    if (theirs->version) rec.version = theirs->version;
    std::string versions = cat("plugin ABI ", theirs->abi_major, ".", theirs->abi_minor, ", runtime ABI ",
                               PX_PLUGIN_ABI_MAJOR, ".", PX_PLUGIN_ABI_MINOR);
    if (theirs->abi_major != PX_PLUGIN_ABI_MAJOR) {
        rec.message = cat("incompatible ABI major version (", versions, "; the majors must be equal)");
        return nullptr;
    }
    if (theirs->struct_size < table_1_0_size) {
        rec.message = cat("its function table is ", theirs->struct_size, " bytes, smaller than the ", table_1_0_size,
                          " bytes ABI 1.0 requires (", versions, ")");
        return nullptr;
    }
    if (!theirs->name || !theirs->name[0] || !theirs->version) {
        rec.message = "its table has no name or no version string";
        return nullptr;
    }
    // Our copy of the table: slots past the plugin's size, or newer than its
    // minor (what lies beyond a 1.0 table that claims more bytes is not
    // slots), stay NULL.
    plugin->table = std::make_unique<px_plugin_api>();
    std::memset(plugin->table.get(), 0, sizeof(px_plugin_api));
    std::memcpy(plugin->table.get(), theirs,
                std::min<size_t>(theirs->struct_size, table_size_of_minor(theirs->abi_minor)));
    plugin->name = rec.name;
    plugin->version = rec.version;
    if (const char* slot = missing_slot(*plugin->table)) {
        rec.message = cat("required slot '", slot, "' is NULL (", versions, ")");
        return nullptr;
    }
    rec.message = partial_slot_set(*plugin->table);
    if (!rec.message.empty()) return nullptr;
    px_plugin_error err{sizeof(px_plugin_error), {0}};
    px_plugin_context* ctx = nullptr;
    px_status created = PX_ERROR_PLUGIN;
    stage = "create()";
    try {
        created = plugin->table->create(&ctx, &err);
    } catch (...) {
        std::snprintf(err.message, sizeof err.message, "a C++ exception escaped it, which the ABI forbids");
    }
    if (created != PX_OK) {
        err.message[PX_MESSAGE_MAX - 1] = '\0';
        const char* words = err.message[0] ? err.message : "(no message)";
        if (created == PX_ERROR_OUT_OF_MEMORY) fail_out_of_memory(plugin->file, "create()", words);
        rec.message = cat("its create() failed: ", words);
        return nullptr;
    }
    if (!ctx) {  // every later call would get NULL for its context
        rec.message = "its create() returned PX_OK without a context (*out is NULL)";
        return nullptr;
    }
    plugin->context = ctx;
    plugin->api = plugin->table.get();
    return plugin;
}

// Asks a loaded plugin for its devices and what each supports; false (with
// rec.message) when it answers badly. Indexes and labels are given later.
bool probe_devices(const std::shared_ptr<PluginInstance>& plugin, PluginRecord& rec,
                   std::vector<std::shared_ptr<DeviceImpl>>& found, Stage& stage) {
    px_plugin_error err{sizeof(px_plugin_error), {0}};
    int32_t count = 0;
    stage = "device_count()";
    const px_status counted = plugin->api->device_count(plugin->context, &count, &err);
    err.message[PX_MESSAGE_MAX - 1] = '\0';
    if (counted != PX_OK) {
        if (counted == PX_ERROR_OUT_OF_MEMORY) fail_out_of_memory(plugin->file, "device_count()", err.message);
        rec.message = cat("device_count failed: ", err.message);
        return false;
    }
    // The host spends memory and a call per device (its info and every
    // (op, dtype) it supports) before any is used, so an absurd count is
    // refused rather than believed.
    if (count < 0 || count > max_devices_per_plugin) {
        rec.message = cat("device_count reported ", count, " devices, outside 0..", max_devices_per_plugin);
        return false;
    }
    if (count == 0) rec.message = err.message[0] ? err.message : "no devices";
    for (int32_t i = 0; i < count; ++i) {
        px_device_info info{};
        info.struct_size = sizeof info;
        stage = "device_info()";
        const px_status described = plugin->api->device_info(plugin->context, i, &info, &err);
        if (described != PX_OK || !px_device_kind_name(info.kind)) {
            err.message[PX_MESSAGE_MAX - 1] = '\0';
            if (described == PX_ERROR_OUT_OF_MEMORY) fail_out_of_memory(plugin->file, "device_info()", err.message);
            rec.message = described != PX_OK ? cat("device ", i, " has no valid info: ", err.message[0] ? err.message : "(no message)")
                                             : cat("device ", i, " has no valid info: kind ", info.kind, " is not a device kind");
            return false;
        }
        auto dev = std::make_shared<DeviceImpl>();
        dev->plugin = plugin;
        dev->local = i;
        dev->memory_total = info.memory_total;
        dev->id = px_device{info.kind, 0};
        stage = "supports()";
        // A plugin is asked about no op or dtype newer than its ABI minor (one
        // built before gelu or float16 knows nothing of them, whatever its
        // supports() says of a number it has no name for).
        for (int op = 0; op < PX_OP_NUMBER_LIMIT; ++op) {
            const px_op_row* row = px_op_row_of(op);
            if (!row || row->abi_minor > int32_t(plugin->table->abi_minor)) continue;
            for (int dt = 1; dt < DeviceImpl::kDtypeSlots; ++dt)
                if (px_dtype_name(dt) && px_dtype_abi_minor(dt) <= int32_t(plugin->table->abi_minor) &&
                    plugin->api->supports(plugin->context, i, op, dt))
                    dev->supported.set(size_t(op) * DeviceImpl::kDtypeSlots + size_t(dt));
        }
        found.push_back(dev);
    }
    return true;
}

// One opened file started and its devices probed, on a thread of its own:
// what the caller takes once it has finished.
struct Load {
    PluginRecord rec;
    std::shared_ptr<PluginInstance> plugin;
    std::vector<std::shared_ptr<DeviceImpl>> found;
    Stage stage{PX_PLUGIN_ENTRY_SYMBOL "()"};
};

void start_and_probe(Load& l) {
    l.plugin = start_plugin(std::move(l.plugin), l.rec, l.stage);
    if (!l.plugin) return;
    bool ok = false;
    try {
        ok = probe_devices(l.plugin, l.rec, l.found, l.stage);
    } catch (const Failure&) {
        throw;  // out of memory (fail_out_of_memory)
    } catch (const std::bad_alloc&) {
        throw;
    } catch (...) {
        l.rec.message = "a C++ exception escaped device_count, device_info or supports, which the ABI forbids";
    }
    if (!ok) l.plugin.reset();
}

// How long one plugin may take to load: the options' plugin_timeout_s, else
// PLEXUS_PLUGIN_TIMEOUT, else 60 s. 0 (from a negative plugin_timeout_s or
// PLEXUS_PLUGIN_TIMEOUT=none): no time-out, the load runs on the caller's
// thread (for a debugger, or a plugin that needs that thread).
struct LoadTimeout {
    double seconds;
    const char* source;  // for the message of a plugin that runs past it
};
LoadTimeout load_timeout(const px_runtime_options* options) {
    if (options && options->struct_size >= offsetof(px_runtime_options, plugin_timeout_s) + sizeof(double)) {
        const double t = options->plugin_timeout_s;
        if (t != t || t > 1e9)
            fail(PX_ERROR_INVALID_ARGUMENT, "options->plugin_timeout_s ", t, " is not a number of seconds up to 1e9 "
                 "(0: the default; below 0: none)");
        if (t < 0) return {0, "options->plugin_timeout_s"};
        if (t > 0) return {t, "options->plugin_timeout_s"};
    }
    if (const char* env = std::getenv("PLEXUS_PLUGIN_TIMEOUT")) {
        if (std::strcmp(env, "none") == 0) return {0, "PLEXUS_PLUGIN_TIMEOUT"};
        char* end = nullptr;
        const double t = std::strtod(env, &end);
        if (end == env || *end || !(t > 0) || t > 1e9)
            fail(PX_ERROR_INVALID_ARGUMENT, "PLEXUS_PLUGIN_TIMEOUT='", env, "' is not a number of seconds above 0 "
                 "(up to 1e9) or none");
        return {t, "PLEXUS_PLUGIN_TIMEOUT"};
    }
    return {60, "the default; PLEXUS_PLUGIN_TIMEOUT or options->plugin_timeout_s change it"};
}

}  // namespace

std::string default_plugin_folder() {
    fs::path lib = boost::dll::this_line_location();
    return (lib.parent_path() / "plexus" / "plugins").string();
}

void load_plugins(Runtime& rt, const px_runtime_options* options) {
    const LoadTimeout limit = load_timeout(options);
    const double timeout = limit.seconds;
    std::set<std::string> seen_files;
    for (const auto& c : candidates(options)) {
        PluginRecord rec;
        rec.file = c.path;
        if (!c.problem.empty()) {
            rec.message = c.problem;
            rt.records.push_back(rec);
            continue;
        }
        std::error_code ec;
        std::string canonical = fs::weakly_canonical(c.path, ec).string();
        if (!seen_files.insert(ec ? c.path : canonical).second) continue;  // same file twice: once is enough
        // A plugin that never returns from a call is skipped, not waited for.
        auto l = std::make_shared<Load>();
        l->rec = rec;
        const std::string path = c.path;
        l->plugin = open_library(path, l->rec);
        if (!l->plugin) {
            // Not opened: nothing of the plugin's to call.
        } else if (timeout == 0) {
            start_and_probe(*l);
        } else if (!finish_within(timeout, [l] { start_and_probe(*l); })) {
            rec.message = cat("did not finish loading within ", timeout, " s: its ", l->stage.load(),
                              " has not returned (", limit.source, ")");
            rt.records.push_back(rec);
            continue;
        }
        rec = l->rec;
        std::shared_ptr<PluginInstance> plugin = l->plugin;
        if (plugin) {
            for (const auto& other : rt.plugins) {
                if (other->name == plugin->name) {
                    rec.message = cat("a plugin named '", plugin->name, "' is already loaded from ", other->file);
                    plugin.reset();
                    break;
                }
            }
        }
        if (plugin) {
            std::string unnamed_why;
            const bool accelerators = std::any_of(l->found.begin(), l->found.end(), [](const auto& d) {
                return d->id.kind == PX_DEVICE_ACCELERATOR;
            });
            const int32_t own_kind = accelerators ? named_kind(plugin->name, unnamed_why) : 0;
            for (auto& dev : l->found) {
                auto& list = rt.devices[dev->id.kind];
                dev->id.index = static_cast<int32_t>(list.size());
                list.push_back(dev);
                if (dev->id.kind == PX_DEVICE_ACCELERATOR) dev->accel_index = dev->id.index;
                if (dev->id.kind == PX_DEVICE_ACCELERATOR && own_kind) {  // naive(0), and accel(i) as well
                    auto& own = rt.named[own_kind];
                    dev->id = px_device{own_kind, static_cast<int32_t>(own.size())};
                    own.push_back(dev);
                }
                else if (dev->id.kind == PX_DEVICE_ACCELERATOR && rec.message.empty())
                    rec.message = cat("its devices are accel(i) only: ", unnamed_why);
                dev->label = cat(kind_label(dev->id.kind), "(", dev->id.index, ")");
            }
            rec.loaded = true;
            rec.num_devices = static_cast<int32_t>(l->found.size());
            rt.plugins.push_back(plugin);
        }
        l.reset();
        rt.records.push_back(rec);
    }
}

}  // namespace px
