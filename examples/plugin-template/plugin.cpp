// plexus-mydev: a minimal Plexus plugin to copy (docs/writing-a-plugin.md).
// One device whose memory is host memory (1 GiB of it), ops run at once in
// execute(), so work is ordered and done when execute returns. It offers copy
// on every dtype (it is mandatory), cast on ABI 1.0's five (the conformance
// suite makes inputs and reads results through it) and add and mul on
// float32; every
// other (op, dtype) it refuses as unsupported. Add an op: a kernel and a row
// in kernels().
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>

#include <plexus/plugin_kit.hpp>

namespace kit = plexus::kit;

struct px_plugin_buffer {
    char* data;
    uint64_t bytes;
};
struct px_plugin_context {
    std::mutex lock;  // the host may call from several threads
    uint64_t in_use = 0, peak = 0;
};

namespace {

constexpr uint64_t kMemory = uint64_t(1) << 30;

px_status fail(px_plugin_error* err, px_status status, const std::string& message) {
    return kit::report(err, status, "mydev plugin: " + message);
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

// y = a op b on float32: two inputs broadcast to y, or one and a scalar.
template <class Op>
void binary(const px_op_call& c) {
    const px_tensor_desc &a = c.inputs[0], &y = c.outputs[0];
    if (c.num_inputs == 2) {
        const px_tensor_desc& b = c.inputs[1];
        each(y, {&a, &b, &y}, [&](const int64_t* o) { at<float>(y)[o[2]] = Op()(at<float>(a)[o[0]], at<float>(b)[o[1]]); });
        return;
    }
    const auto& attrs = *static_cast<const px_binary_attrs*>(c.attrs);
    const auto s = static_cast<float>(attrs.scalar);
    each(y, {&a, &y}, [&](const int64_t* o) {
        const float x = at<float>(a)[o[0]];
        at<float>(y)[o[1]] = attrs.scalar_operand == 1 ? Op()(s, x) : Op()(x, s);
    });
}

// Any strides on both sides, any dtype: element by element (the views may overlap).
void copy(const px_op_call& c) {
    const px_tensor_desc &x = c.inputs[0], &y = c.outputs[0];
    const size_t size = px_dtype_size(x.dtype);
    each(y, {&x, &y}, [&](const int64_t* o) { std::memmove(at<char>(y) + o[1] * size, at<char>(x) + o[0] * size, size); });
}

// Calls f(T{}) with T the C type of `dtype`.
template <class F>
void with_type(int32_t dtype, F&& f) {
    switch (dtype) {
    case PX_FLOAT32: f(float{}); break;
    case PX_FLOAT64: f(double{}); break;
    case PX_INT32: f(int32_t{}); break;
    case PX_INT64: f(int64_t{}); break;
    case PX_UINT8: f(uint8_t{}); break;
    default:  // a cast to a dtype this plugin has no type for (float16, bfloat16): a host may send one
        throw kit::Refusal(PX_ERROR_UNSUPPORTED, std::string("cast: no kernel for ") + px_dtype_name(dtype));
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

// Contiguous in, contiguous out of another dtype.
void cast(const px_op_call& c) {
    const px_tensor_desc &x = c.inputs[0], &y = c.outputs[0];
    with_type(x.dtype, [&](auto from) {
        with_type(y.dtype, [&](auto to) {
            using To = decltype(to);
            each(y, {&x, &y}, [&](const int64_t* o) { at<To>(y)[o[1]] = convert<To>(at<decltype(from)>(x)[o[0]]); });
        });
    });
}

using Runner = void (*)(const px_op_call&);
const kit::KernelTable<Runner>& kernels() {
    static const kit::Kernel<Runner> list[] = {
        {PX_OP_COPY, copy, PX_DTYPES_ALL | PX_DTYPES_HALF},  // bytes: every dtype
        {PX_OP_CAST, cast},
        {PX_OP_ADD, binary<std::plus<float>>, PX_DTYPE_BIT(PX_FLOAT32)},
        {PX_OP_MUL, binary<std::multiplies<float>>, PX_DTYPE_BIT(PX_FLOAT32)},
    };
    static const kit::KernelTable<Runner> table(list);
    return table;
}

px_status create(px_plugin_context** out, px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!out) return fail(err, PX_ERROR_INVALID_ARGUMENT, "create: out is NULL");
        if (const px_status st = kernels().refuse_wrong_lists(err, "mydev")) return st;
        *out = new px_plugin_context;
        return PX_OK;
    });
}

void destroy(px_plugin_context* ctx) { delete ctx; }

px_status device_count(px_plugin_context* ctx, int32_t* count, px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!ctx || !count) return fail(err, PX_ERROR_INVALID_ARGUMENT, "device_count: NULL argument");
        *count = 1;
        return PX_OK;
    });
}

px_status device_info(px_plugin_context* ctx, int32_t device, px_device_info* info, px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!ctx || device != 0) return kit::no_device(err, "mydev", device);
        px_device_info mine{};
        mine.struct_size = sizeof mine;
        mine.kind = PX_DEVICE_ACCELERATOR;
        std::snprintf(mine.name, sizeof mine.name, "mydev (host memory)");
        const std::lock_guard<std::mutex> hold(ctx->lock);
        mine.memory_total = kMemory;
        mine.memory_free = kMemory - ctx->in_use;
        mine.memory_in_use = mine.memory_reserved = ctx->in_use;
        mine.memory_peak = ctx->peak;
        return kit::copy_device_info(mine, info, err);  // as far as the caller's struct_size reaches
    });
}

int32_t supports(px_plugin_context* ctx, int32_t device, int32_t op, int32_t dtype) {
    return ctx && device == 0 && kernels().offers(op, dtype) ? 1 : 0;
}

px_status buffer_alloc(px_plugin_context* ctx, int32_t device, uint64_t bytes, px_plugin_buffer** out,
                       px_plugin_error* err) {
    return kit::guard(err, [&] {
        if (!ctx || device != 0) return kit::no_device(err, "mydev", device);
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

// A range of a buffer, checked without overflow.
bool in_range(const px_plugin_buffer* b, uint64_t offset, uint64_t bytes) {
    return b && offset <= b->bytes && bytes <= b->bytes - offset;
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
        return PX_OK;
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
    return kit::guard(err, [&] {
        // The call's form and layout, checked before any operand is read (R2).
        if (const px_status st = px_op_call_check(call, ctx ? 1 : 0, buffer_facts, err)) return st;
        const int32_t dtype = px_op_call_dtype(call);
        if (!kernels().offers(call->op, dtype))
            return fail(err, PX_ERROR_UNSUPPORTED,
                        std::string(px_op_name(call->op)) + " on " + px_dtype_name(dtype) + " is not supported");
        if (!px_op_call_writes_nothing(call)) kernels().runner(call->op)(*call);
        return PX_OK;
    });
}

px_status synchronize(px_plugin_context* ctx, int32_t device, px_plugin_error* err) {
    return kit::guard(err, [&] { return ctx && device == 0 ? PX_OK : kit::no_device(err, "mydev", device); });
}

const px_plugin_api table = {
    sizeof(px_plugin_api), PX_PLUGIN_ABI_MAJOR, PX_PLUGIN_ABI_MINOR, "mydev", "0.1.0",
    create, destroy, device_count, device_info, supports,
    buffer_alloc, buffer_free, copy_from_host, copy_to_host, copy_device,
    execute, synchronize,
    nullptr,                             // all_reduce (ABI 1.2): the host sums through copies
    nullptr, nullptr, nullptr, nullptr,  // process groups (ABI 1.3)
    nullptr, nullptr,                    // buffer_memory, buffer_wrap (ABI 1.5): DLPack copies
    nullptr, nullptr, nullptr,           // trace slots (ABI 1.8): a trace shows the host's side
};

}  // namespace

extern "C" PX_PLUGIN_EXPORT const px_plugin_api* px_plugin_get_api(void) { return &table; }
