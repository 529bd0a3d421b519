// The plugin kit: optional, header-only C++17 help for writing a Plexus
// plugin (docs/writing-a-plugin.md). The ABI stays plain C (plugin.h); a
// plugin written in C ignores this file. What it holds is the boundary code
// every C++ plugin needs once: the guard that turns every exception into a
// status and a message, error and device-info writing that stop where the
// caller's struct_size ends, and the table of kernels a plugin offers, rows
// of the op table (op_table.h) that answer supports() and find the kernel
// execute() runs; and what fork() needs (a forked child keeps none of the
// plugin's threads).
#pragma once

#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "plexus/op_check.h"
#include "plexus/plugin.h"

namespace plexus::kit {

// The most inputs and outputs an op of the table has: a plugin's op struct
// holds this many operands (its own static_assert says so). The kit's
// helpers know two outputs by name (out, out2).
#define PX_KIT_INPUTS_MOST_(op, number, name, family, in_least, in_most, ...) in_most,
#define PX_KIT_OUTPUTS_MOST_(op, number, name, family, in_least, in_most, out_least, out_most, ...) out_most,
inline constexpr int32_t kMostOpInputs = std::max({PX_OP_TABLE(PX_KIT_INPUTS_MOST_)});
inline constexpr int32_t kMostOpOutputs = std::max({PX_OP_TABLE(PX_KIT_OUTPUTS_MOST_)});
#undef PX_KIT_INPUTS_MOST_
#undef PX_KIT_OUTPUTS_MOST_
static_assert(kMostOpOutputs <= 2, "an op with a third output needs the kit's task helpers extended");

// Thrown inside a guarded entry point to return `status` with `message`.
class Refusal : public std::exception {
public:
    Refusal(px_status status, std::string message) : status_(status), message_(std::move(message)) {}
    px_status status() const noexcept { return status_; }
    const char* what() const noexcept override { return message_.c_str(); }

private:
    px_status status_;
    std::string message_;
};

// Writes `message` into `err` when the caller's struct holds a whole
// px_plugin_error (an older or NULL one is left alone), cut to fit; returns
// `status`. Takes a view, so reporting "out of host memory" needs no memory.
inline px_status report(px_plugin_error* err, px_status status, std::string_view message) noexcept {
    if (err && err->struct_size >= sizeof(px_plugin_error))
        std::snprintf(err->message, sizeof err->message, "%.*s", static_cast<int>(message.size()), message.data());
    return status;
}

namespace detail {
// The exception being handled, as a status: the plugin's own translation
// first (it rethrows what it does not know), then the kit's.
template <class Translate>
px_status current_exception_status(px_plugin_error* err, Translate& translate) noexcept {
    try {
        try {
            throw;
        } catch (...) {
            return translate(err);
        }
    } catch (const Refusal& r) {
        return report(err, r.status(), r.what());
    } catch (const std::bad_alloc&) {
        return report(err, PX_ERROR_OUT_OF_MEMORY, "out of host memory");
    } catch (const std::system_error& e) {
        // A thread the system would not start: resources, like memory, ran out.
        if (e.code() == std::errc::resource_unavailable_try_again)
            return report(err, PX_ERROR_OUT_OF_MEMORY, std::string("no thread could be started: ") + e.what());
        return report(err, PX_ERROR_INTERNAL, e.what());
    } catch (const std::exception& e) {
        return report(err, PX_ERROR_INTERNAL, e.what());
    } catch (...) {
        return report(err, PX_ERROR_INTERNAL, "unknown exception");
    }
}
}  // namespace detail

// A translation that knows no exception of its own: the kit's alone.
struct NoTranslation {
    [[noreturn]] px_status operator()(px_plugin_error*) const { throw; }
};

// Runs `body` (which returns a px_status) so that nothing crosses the
// boundary as an exception: a Refusal gives its status and message,
// std::bad_alloc and a thread that could not start PX_ERROR_OUT_OF_MEMORY,
// anything else PX_ERROR_INTERNAL with its text. `translate(err)`, called
// inside a catch, may map the plugin's own exceptions first by rethrowing
// (`try { throw; } catch (const MyError& e) {...}`); what it lets escape
// goes to the kit's rules.
template <class F, class Translate = NoTranslation>
px_status guard(px_plugin_error* err, F&& body, Translate translate = {}) noexcept {
    try {
        return body();
    } catch (...) {
        return detail::current_exception_status(err, translate);
    }
}

// Copies `mine` into the caller's `info` as far as the caller's struct_size
// reaches (an older, smaller struct gets its fields, a newer one keeps the
// rest), leaving info->struct_size as the caller set it.
inline px_status copy_device_info(const px_device_info& mine, px_device_info* info, px_plugin_error* err) noexcept {
    if (!info) return report(err, PX_ERROR_INVALID_ARGUMENT, "device_info: info is NULL");
    const uint32_t theirs = info->struct_size;
    if (theirs < sizeof(uint32_t)) return report(err, PX_ERROR_INVALID_ARGUMENT, "device_info: info->struct_size is too small");
    std::memcpy(info, &mine, theirs < sizeof mine ? theirs : sizeof mine);
    info->struct_size = theirs;
    return PX_OK;
}

// fork(): a child has only the thread that called fork(). A plugin's own
// threads (a device's worker, its queue) stayed in the parent, and so did
// any lock one of them held: waiting for them in the child waits for ever.
// A plugin notes fork_generation() when it makes its context; in a process
// where it has changed, the context's devices refuse work (refuse_in_child)
// and its buffers and context are left to go with the process, never
// waited for. Devices a context made in the child work as anywhere.
namespace detail {
inline std::atomic<uint64_t>& forks_seen() noexcept {
    static std::atomic<uint64_t> forks{0};
    return forks;
}
}  // namespace detail
// 0 in the process that first asked, one more in each child forked since
// (the handler counting them is registered at the first call).
inline uint64_t fork_generation() noexcept {
    static const int watching = pthread_atfork(nullptr, nullptr, [] { detail::forks_seen().fetch_add(1); });
    (void)watching;
    return detail::forks_seen().load(std::memory_order_relaxed);
}
// The refusal of a device made before the fork, in the child.
inline px_status refuse_in_child(px_plugin_error* err, const char* plugin) noexcept {
    char why[PX_MESSAGE_MAX];
    std::snprintf(why, sizeof why,
                  "%s plugin: this process is a forked child of the one that made these devices; their worker "
                  "threads stayed in the parent, so the child cannot compute on them. Make a new runtime in the "
                  "child, or start worker processes with fork+exec (posix_spawn, Python multiprocessing's 'spawn')",
                  plugin);
    return report(err, PX_ERROR_DEVICE, why);
}

// The answer to a call for a device a plugin does not have.
inline px_status no_device(px_plugin_error* err, const char* plugin, int32_t index) {
    return report(err, PX_ERROR_NO_DEVICE, std::string(plugin) + " plugin: no device " + std::to_string(index));
}

// One kernel a plugin offers: the op (a row of the op table), the function
// that runs it, and the dtypes this plugin offers it on, of those the row
// accepts: by default ABI 1.0's (PX_DTYPES_ALL), so that a kernel written
// before float16 and bfloat16 does not claim them; a kernel that runs them
// lists them (PX_DTYPES_ALL | PX_DTYPES_HALF, PX_DTYPES_FLOAT |
// PX_DTYPES_HALF, ...). A plugin may narrow a row's dtypes, never widen them.
template <class Runner>
struct Kernel {
    int32_t op;
    Runner run;
    uint32_t dtypes = PX_DTYPES_ALL;
};

// The kernels of a plugin, gathered from lists its kernel files keep (so
// each op is named once in a plugin, beside its kernel), indexed by op.
template <class Runner>
class KernelTable {
public:
    template <class... Lists>
    explicit KernelTable(const Lists&... lists) {
        (add(lists), ...);
    }

    // Whether the plugin runs `op` on inputs of `dtype` (the output's for
    // creation ops): the row accepts the dtype and a kernel offers it.
    bool offers(int32_t op, int32_t dtype) const {
        return px_op_accepts(op, dtype) && entries_[size_t(op)].run && (entries_[size_t(op)].dtypes & PX_DTYPE_BIT(dtype));
    }
    // The kernel of `op`; only for an op offers() accepted.
    const Runner& runner(int32_t op) const { return entries_[size_t(op)].run; }
    // The first op listed that the table lacks or that was listed twice (a
    // plugin's bug, which each plugin's test of its kernels catches); 0 if none.
    int32_t bad_op() const { return bad_op_; }
    // Whether a list had such an op (bad_op() alone cannot say so for op 0).
    bool lists_wrong() const { return lists_wrong_; }
    // For create(): a list that names an op twice or an op the table lacks is
    // the plugin's own bug, so the plugin refuses to start rather than run
    // the wrong kernel. PX_OK when the lists are right.
    px_status refuse_wrong_lists(px_plugin_error* err, std::string_view plugin) const {
        if (!lists_wrong_) return PX_OK;
        return report(err, PX_ERROR_INTERNAL, std::string(plugin) + " plugin: op " + std::to_string(bad_op_) +
                                                  " is listed twice or is not a row of the op table");
    }

private:
    template <class List>
    void add(const List& list) {
        for (const Kernel<Runner>& k : list) {
            if (!px_op_row_of(k.op) || entries_[size_t(k.op)].run) {
                if (!lists_wrong_) bad_op_ = k.op;
                lists_wrong_ = true;
                continue;
            }
            entries_[size_t(k.op)] = k;
        }
    }
    std::array<Kernel<Runner>, PX_OP_NUMBER_LIMIT> entries_{};
    int32_t bad_op_ = 0;
    bool lists_wrong_ = false;
};

// float16 and bfloat16 through a plugin's float32 kernel, for ops whose
// arithmetic is float32 anyway (convolutions, pooling, softmax, dropout, the
// optimizer step): each 16-bit float input is widened, exactly, to a
// contiguous float32 copy; the kernel runs on the copies; each 16-bit float
// output is rounded once, to nearest even, from the float32 result. An output
// that is one of the inputs (sgd_update's parameter and momentum) gets that
// input's copy, so an op in place stays in place.
//
// `Task` is the plugin's op struct (op, in[num_inputs], out, out2 when
// num_outputs is 2, has_attrs; operands with dtype, data, ndim, shape,
// strides). `allocate(bytes)` gives float32 storage that stays valid until
// the work queued with it has run (the CPU plugin runs it before this
// returns; the CUDA plugin releases its scratch in stream order); `run_cast(task)` runs a cast (the plugin's cast kernel, ordered
// before what is queued after it; the task is a copy of t, so what else t
// carries, such as its device's scratch budget, comes along); `run(task)` is
// the float32 kernel. The plugin's kernel table offers the op on the 16-bit
// floats.
inline bool is_half_dtype(int32_t dtype) { return dtype == PX_FLOAT16 || dtype == PX_BFLOAT16; }

template <class Task, class Allocate, class RunCast, class Run>
void run_in_float32(const Task& t, Allocate&& allocate, RunCast&& run_cast, Run&& run) {
    auto cast = [&](const auto& from, const auto& to) {
        Task c = t;
        c.op = PX_OP_CAST;
        c.num_inputs = 1;
        c.num_outputs = 1;
        c.has_attrs = false;
        c.in[0] = from;
        c.out = to;
        run_cast(c);
    };
    Task wide = t;
    auto float32_copy = [&](auto operand) {  // float32, contiguous, storage of its own
        int64_t n = 1;
        for (int i = operand.ndim - 1; i >= 0; --i) {
            operand.strides[i] = n;
            n *= operand.shape[i];
        }
        operand.dtype = PX_FLOAT32;
        operand.data = static_cast<char*>(allocate(uint64_t(n) * sizeof(float)));
        return operand;
    };
    for (int i = 0; i < t.num_inputs; ++i)
        if (is_half_dtype(t.in[i].dtype)) {
            wide.in[i] = float32_copy(t.in[i]);
            cast(t.in[i], wide.in[i]);
        }
    auto output = [&](const auto& out) {
        for (int i = 0; i < t.num_inputs; ++i)
            if (is_half_dtype(t.in[i].dtype) && t.in[i].data == out.data) return wide.in[i];
        return float32_copy(out);
    };
    const bool second = t.num_outputs > 1 && is_half_dtype(t.out2.dtype);
    if (is_half_dtype(t.out.dtype)) wide.out = output(t.out);
    if (second) wide.out2 = output(t.out2);
    run(wide);
    if (is_half_dtype(t.out.dtype)) cast(wide.out, t.out);
    if (second) cast(wide.out2, t.out2);
}

// Whether any operand of `t` is a 16-bit float: run_in_float32's case.
template <class Task>
bool has_half_operand(const Task& t) {
    for (int i = 0; i < t.num_inputs; ++i)
        if (is_half_dtype(t.in[i].dtype)) return true;
    return is_half_dtype(t.out.dtype) || (t.num_outputs > 1 && is_half_dtype(t.out2.dtype));
}

}  // namespace plexus::kit
