// A plugin with one flaw at a time, for plexus-conformance's tests of its own
// verdicts (tool_tests.cmake) and plexus-smi's teardown: each flaw must be
// filed once, under the requirement it breaks, in words that name it.
// Without $FLAWED it conforms: one accelerator device "flawed(0)" of host
// memory, ops run at once in execute(): copy on every dtype, cast on ABI
// 1.0's five, add and mul on float32, and add and div on int32, whose
// division by zero fails "on the device": the element is 0 and the failure
// is reported at the next wait (synchronize, copy_to_host) as
// "div: integer division by zero", once (R9). $FLAWED picks the flaw:
//   div_unnamed      that message without the op's name: "integer division by zero"
//   sticky           the failure is reported at every later wait, not once
//   silent_sync      synchronize fails with PX_ERROR_DEVICE and no message
//   supports_lie     supports() offers sub on float32; execute refuses it as unsupported
//   throw_execute    execute lets a C++ exception escape on add
//   free_over_total  device_info says more memory is free than there is
//   throw_destroy    destroy() lets a C++ exception escape
//   crash_destroy    destroy() raises SIGSEGV
//   hang_destroy     destroy() never returns
//   no_devices       no devices, with the reason in device_count's message
// and, not a flaw, $FLAWED_KIND=cpu or gpu makes its device of that kind
// (the numbering of such devices beside the CPU plugin's, in the guide).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <plexus/op_check.h>
#include <plexus/plugin_kit.hpp>

namespace kit = plexus::kit;

struct px_plugin_buffer {
    char* data;
    uint64_t bytes;
};
struct px_plugin_context {
    std::mutex lock;  // the host may call from several threads
    uint64_t in_use = 0, peak = 0;
    std::string failure;  // kept for the next wait (R9); empty: none
};

namespace {

constexpr uint64_t kMemory = uint64_t(1) << 28;

bool flawed(const char* how) {
    const char* e = std::getenv("FLAWED");
    return e && std::strcmp(e, how) == 0;
}

px_status fail(px_plugin_error* err, px_status status, const std::string& message) {
    return kit::report(err, status, "flawed plugin: " + message);
}

template <class T>
T* at(const px_tensor_desc& t) {
    return reinterpret_cast<T*>(t.buffer->data + t.offset);
}

// Calls f(o) for every element of `out`'s shape, o[k] being that element's
// offset (in elements) in operand k; broadcast axes have stride 0.
template <size_t K, class F>
void each(const px_tensor_desc& out, const px_tensor_desc* const (&t)[K], F&& f) {
    int64_t n = 1, index[PX_MAX_DIMS] = {}, o[K] = {};
    for (int d = 0; d < out.ndim; ++d) n *= out.shape[d];
    for (int64_t i = 0; i < n; ++i) {
        f(o);
        for (int d = out.ndim - 1; d >= 0; --d) {
            for (size_t k = 0; k < K; ++k) o[k] += t[k]->strides[d];
            if (++index[d] < out.shape[d]) break;
            for (size_t k = 0; k < K; ++k) o[k] -= t[k]->strides[d] * out.shape[d];
            index[d] = 0;
        }
    }
}

// Float to integer saturates and sends NaN to 0 (R13); the rest converts as C++ does.
template <class To, class From>
To convert(From x) {
    if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
        if (std::isnan(x)) return 0;
        if (x <= From(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
        if (x >= From(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    }
    return static_cast<To>(x);
}

// int32 arithmetic as the contract has it: wrapping (R10), division
// truncating, and a division by zero giving 0 and a failure for the wait.
struct Int32Op {
    int op;
    bool* by_zero;
    int32_t operator()(int32_t a, int32_t b) const {
        const auto ua = static_cast<uint32_t>(a), ub = static_cast<uint32_t>(b);
        if (op == PX_OP_ADD) return static_cast<int32_t>(ua + ub);
        if (op == PX_OP_MUL) return static_cast<int32_t>(ua * ub);
        if (b == 0) return *by_zero = true, 0;
        return a == std::numeric_limits<int32_t>::min() && b == -1 ? a : a / b;
    }
};

// y = a op b, T the dtype's C type: two inputs broadcast to y, or one and
// a scalar (converted to T as a cast would).
template <class T, class Op>
void binary(const px_op_call& c, Op op) {
    const px_tensor_desc &a = c.inputs[0], &y = c.outputs[0];
    if (c.num_inputs == 2) {
        const px_tensor_desc& b = c.inputs[1];
        each(y, {&a, &b, &y}, [&](const int64_t* o) { at<T>(y)[o[2]] = op(at<T>(a)[o[0]], at<T>(b)[o[1]]); });
        return;
    }
    const auto& attrs = *static_cast<const px_binary_attrs*>(c.attrs);
    const T s = convert<T>(attrs.scalar);
    each(y, {&a, &y}, [&](const int64_t* o) {
        const T x = at<T>(a)[o[0]];
        at<T>(y)[o[1]] = attrs.scalar_operand == 1 ? op(s, x) : op(x, s);
    });
}

// Runs `c`; a failure found while running is returned in words for the wait.
std::string run_binary(const px_op_call& c) {
    if (c.outputs[0].dtype == PX_FLOAT32) {
        if (c.op == PX_OP_ADD) binary<float>(c, std::plus<float>());
        else binary<float>(c, std::multiplies<float>());
        return "";
    }
    bool by_zero = false;
    binary<int32_t>(c, Int32Op{c.op, &by_zero});
    if (!by_zero) return "";
    return flawed("div_unnamed") ? "integer division by zero" : "div: integer division by zero";
}

std::string copy(const px_op_call& c) {
    const px_tensor_desc &x = c.inputs[0], &y = c.outputs[0];
    const size_t size = px_dtype_size(x.dtype);
    each(y, {&x, &y}, [&](const int64_t* o) { std::memmove(at<char>(y) + o[1] * size, at<char>(x) + o[0] * size, size); });
    return "";
}

template <class F>
void with_type(int32_t dtype, F&& f) {
    switch (dtype) {
    case PX_FLOAT32: f(float{}); break;
    case PX_FLOAT64: f(double{}); break;
    case PX_INT32: f(int32_t{}); break;
    case PX_INT64: f(int64_t{}); break;
    case PX_UINT8: f(uint8_t{}); break;
    default: throw kit::Refusal(PX_ERROR_UNSUPPORTED, std::string("cast: no kernel for ") + px_dtype_name(dtype));
    }
}

std::string cast(const px_op_call& c) {
    const px_tensor_desc &x = c.inputs[0], &y = c.outputs[0];
    with_type(x.dtype, [&](auto from) {
        with_type(y.dtype, [&](auto to) {
            using To = decltype(to);
            each(y, {&x, &y}, [&](const int64_t* o) { at<To>(y)[o[1]] = convert<To>(at<decltype(from)>(x)[o[0]]); });
        });
    });
    return "";
}

using Runner = std::string (*)(const px_op_call&);
const kit::KernelTable<Runner>& kernels() {
    static const kit::Kernel<Runner> list[] = {
        {PX_OP_COPY, copy, PX_DTYPES_ALL | PX_DTYPES_HALF},
        {PX_OP_CAST, cast},
        {PX_OP_ADD, run_binary, PX_DTYPE_BIT(PX_FLOAT32) | PX_DTYPE_BIT(PX_INT32)},
        {PX_OP_MUL, run_binary, PX_DTYPE_BIT(PX_FLOAT32)},
        {PX_OP_DIV, run_binary, PX_DTYPE_BIT(PX_INT32)},
    };
    static const kit::KernelTable<Runner> table(list);
    return table;
}

int32_t device_total() { return flawed("no_devices") ? 0 : 1; }

px_status create(px_plugin_context** out, px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!out) return fail(err, PX_ERROR_INVALID_ARGUMENT, "create: out is NULL");
        if (const px_status st = kernels().refuse_wrong_lists(err, "flawed")) return st;
        *out = new px_plugin_context;
        return PX_OK;
    });
}

void destroy(px_plugin_context* ctx) {
    delete ctx;
    if (flawed("throw_destroy")) throw std::runtime_error("destroy blew up (FLAWED=throw_destroy)");
    if (flawed("crash_destroy")) ::raise(SIGSEGV);
    if (flawed("hang_destroy"))
        for (;;) ::pause();
}

px_status device_count(px_plugin_context* ctx, int32_t* count, px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!ctx || !count) return fail(err, PX_ERROR_INVALID_ARGUMENT, "device_count: NULL argument");
        *count = device_total();
        if (*count == 0) fail(err, PX_OK, "no flawed board in this machine (FLAWED=no_devices)");
        return PX_OK;
    });
}

px_status device_info(px_plugin_context* ctx, int32_t device, px_device_info* info, px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!ctx || device < 0 || device >= device_total()) return kit::no_device(err, "flawed", device);
        px_device_info mine{};
        mine.struct_size = sizeof mine;
        const char* kind = std::getenv("FLAWED_KIND");
        mine.kind = !kind ? PX_DEVICE_ACCELERATOR : std::strcmp(kind, "cpu") == 0 ? PX_DEVICE_CPU : PX_DEVICE_GPU;
        std::snprintf(mine.name, sizeof mine.name, "flawed (host memory)");
        const std::lock_guard<std::mutex> hold(ctx->lock);
        mine.memory_total = kMemory;
        mine.memory_free = flawed("free_over_total") ? 2 * kMemory : kMemory - ctx->in_use;
        mine.memory_in_use = mine.memory_reserved = ctx->in_use;
        mine.memory_peak = ctx->peak;
        return kit::copy_device_info(mine, info, err);
    });
}

bool offers(int32_t op, int32_t dtype) {
    return kernels().offers(op, dtype) || (flawed("supports_lie") && op == PX_OP_SUB && dtype == PX_FLOAT32);
}

int32_t supports(px_plugin_context* ctx, int32_t device, int32_t op, int32_t dtype) {
    return ctx && device >= 0 && device < device_total() && offers(op, dtype) ? 1 : 0;
}

px_status buffer_alloc(px_plugin_context* ctx, int32_t device, uint64_t bytes, px_plugin_buffer** out,
                       px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!ctx || device < 0 || device >= device_total()) return kit::no_device(err, "flawed", device);
        if (!out) return fail(err, PX_ERROR_INVALID_ARGUMENT, "buffer_alloc: out is NULL");
        const std::lock_guard<std::mutex> hold(ctx->lock);
        char* data = bytes <= kMemory - ctx->in_use ? static_cast<char*>(std::malloc(bytes ? bytes : 1)) : nullptr;
        if (!data)
            return fail(err, PX_ERROR_OUT_OF_MEMORY, "out of memory: asked for " + std::to_string(bytes) + " bytes, " +
                                                         std::to_string(ctx->in_use) + " in use, " +
                                                         std::to_string(kMemory - ctx->in_use) + " free");
        *out = new px_plugin_buffer{data, bytes};
        ctx->in_use += bytes;
        ctx->peak = std::max(ctx->peak, ctx->in_use);
        return PX_OK;
    });
}

px_status buffer_free(px_plugin_context* ctx, px_plugin_buffer* buffer, px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!ctx || !buffer) return fail(err, PX_ERROR_INVALID_ARGUMENT, "buffer_free: NULL argument");
        const std::lock_guard<std::mutex> hold(ctx->lock);
        ctx->in_use -= buffer->bytes;
        std::free(buffer->data);
        delete buffer;
        return PX_OK;
    });
}

bool in_range(const px_plugin_buffer* b, uint64_t offset, uint64_t bytes) {
    return b && offset <= b->bytes && bytes <= b->bytes - offset;
}

// The failure kept for this wait, if any: reported once, unless sticky.
px_status waited(px_plugin_context* ctx, px_plugin_error* err) {
    const std::lock_guard<std::mutex> hold(ctx->lock);
    if (ctx->failure.empty()) return PX_OK;
    const std::string words = ctx->failure;
    if (!flawed("sticky")) ctx->failure.clear();
    return kit::report(err, PX_ERROR_DEVICE, words);
}

px_status copy_from_host(px_plugin_context* ctx, px_plugin_buffer* dst, uint64_t dst_offset, const void* src,
                         uint64_t bytes, px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!ctx || !in_range(dst, dst_offset, bytes) || (!src && bytes))
            return fail(err, PX_ERROR_INVALID_ARGUMENT, "copy_from_host: NULL pointer or range outside the buffer");
        if (bytes) std::memcpy(dst->data + dst_offset, src, bytes);
        return PX_OK;
    });
}

px_status copy_to_host(px_plugin_context* ctx, px_plugin_buffer* src, uint64_t src_offset, void* dst, uint64_t bytes,
                       px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!ctx || !in_range(src, src_offset, bytes) || (!dst && bytes))
            return fail(err, PX_ERROR_INVALID_ARGUMENT, "copy_to_host: NULL pointer or range outside the buffer");
        if (bytes) std::memcpy(dst, src->data + src_offset, bytes);
        return waited(ctx, err);  // R7: reports the failure of earlier work
    });
}

px_status copy_device(px_plugin_context* ctx, px_plugin_buffer* src, uint64_t src_offset, px_plugin_buffer* dst,
                      uint64_t dst_offset, uint64_t bytes, px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!ctx || !in_range(src, src_offset, bytes) || !in_range(dst, dst_offset, bytes))
            return fail(err, PX_ERROR_INVALID_ARGUMENT, "copy_device: NULL buffer or range outside a buffer");
        if (bytes) std::memmove(dst->data + dst_offset, src->data + src_offset, bytes);
        return PX_OK;
    });
}

void buffer_facts(const px_plugin_buffer* b, int32_t* device, uint64_t* bytes) {
    *device = 0;
    *bytes = b->bytes;
}

px_status execute(px_plugin_context* ctx, const px_op_call* call, px_plugin_error* err) {
    if (flawed("throw_execute") && call && call->op == PX_OP_ADD) throw 42;  // not even a std::exception
    return kit::guard(err, [&] {
        if (const px_status st = px_op_call_check(call, ctx ? device_total() : 0, buffer_facts, err)) return st;
        const int32_t dtype = px_op_call_dtype(call);
        if (!kernels().offers(call->op, dtype))  // supports_lie's sub included: it has no kernel
            return fail(err, PX_ERROR_UNSUPPORTED,
                        std::string(px_op_name(call->op)) + " on " + px_dtype_name(dtype) + " is not supported");
        if (px_op_call_writes_nothing(call)) return PX_OK;
        const std::string failed = kernels().runner(call->op)(*call);
        if (!failed.empty()) {
            const std::lock_guard<std::mutex> hold(ctx->lock);
            if (ctx->failure.empty()) ctx->failure = failed;
        }
        return PX_OK;
    });
}

px_status synchronize(px_plugin_context* ctx, int32_t device, px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!ctx || device < 0 || device >= device_total()) return kit::no_device(err, "flawed", device);
        if (flawed("silent_sync")) return PX_ERROR_DEVICE;  // and no message
        return waited(ctx, err);
    });
}

const px_plugin_api table = {
    sizeof(px_plugin_api), PX_PLUGIN_ABI_MAJOR, PX_PLUGIN_ABI_MINOR, "flawed", "0.1.0",
    create, destroy, device_count, device_info, supports,
    buffer_alloc, buffer_free, copy_from_host, copy_to_host, copy_device,
    execute, synchronize,
    nullptr,                             // all_reduce (ABI 1.2)
    nullptr, nullptr, nullptr, nullptr,  // process groups (ABI 1.3)
    nullptr, nullptr,                    // buffer_memory, buffer_wrap (ABI 1.5)
    nullptr, nullptr, nullptr,           // trace slots (ABI 1.8)
};

}  // namespace

extern "C" PX_PLUGIN_EXPORT const px_plugin_api* px_plugin_get_api(void) { return &table; }
