#include "kernels.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace threads_plugin {
namespace {

template <class T>
T* data_of(const px_tensor_desc& d) {
    return reinterpret_cast<T*>(d.buffer->data + d.offset);
}

int64_t element_count(const px_tensor_desc& d) {
    int64_t n = 1;
    for (int i = 0; i < d.ndim; ++i) n *= d.shape[i];
    return n;
}

// Calls f(offsets) for every index of `out`'s shape, offsets[k] being the
// element offset of that index in operand k (broadcast axes have stride 0).
template <size_t K, class F>
void walk(const px_tensor_desc& out, const px_tensor_desc* const (&operands)[K], F&& f) {
    const int ndim = out.ndim;
    const int64_t total = element_count(out);
    int64_t index[PX_MAX_DIMS] = {0};
    int64_t offsets[K] = {0};
    for (int64_t n = 0; n < total; ++n) {
        f(offsets);
        for (int d = ndim - 1; d >= 0; --d) {
            if (++index[d] < out.shape[d]) {
                for (size_t k = 0; k < K; ++k) offsets[k] += operands[k]->strides[d];
                break;
            }
            for (size_t k = 0; k < K; ++k) offsets[k] -= operands[k]->strides[d] * (out.shape[d] - 1);
            index[d] = 0;
        }
    }
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
    default:  // a cast to a dtype this plugin has no type for (float16, bfloat16): the op fails, naming it
        throw std::invalid_argument(std::string("no kernel for ") + px_dtype_name(dtype));
    }
}

template <class T>
T apply_binary(int32_t op, T a, T b) {
    switch (op) {
    case PX_OP_ADD: return a + b;
    case PX_OP_SUB: return a - b;
    case PX_OP_MUL: return a * b;
    default: return a / b;
    }
}

template <class T>
T apply_unary(int32_t op, T x) {
    switch (op) {
    case PX_OP_NEG: return -x;
#ifdef THREADS_PLUGIN_WRONG_EXP  // Plexus's own tests build this to see plexus-conformance fail it
    case PX_OP_EXP: return std::exp(x) * T(1.001);
#else
    case PX_OP_EXP: return std::exp(x);
#endif
    default: return x > T(0) ? x : T(0);
    }
}

template <class T>
void binary(const Work& w) {
    const px_tensor_desc& out = w.outputs[0];
    T* y = data_of<T>(out);
    const T* a = data_of<T>(w.inputs[0]);
    if (w.inputs.size() == 2) {
        const T* b = data_of<T>(w.inputs[1]);
        const px_tensor_desc* ops[3] = {&w.inputs[0], &w.inputs[1], &out};
        walk(out, ops, [&](const int64_t* o) { y[o[2]] = apply_binary(w.op, a[o[0]], b[o[1]]); });
        return;
    }
    const T s = static_cast<T>(w.binary.scalar);
    const bool scalar_left = w.binary.scalar_operand == 1;
    const px_tensor_desc* ops[2] = {&w.inputs[0], &out};
    walk(out, ops, [&](const int64_t* o) {
        y[o[1]] = scalar_left ? apply_binary(w.op, s, a[o[0]]) : apply_binary(w.op, a[o[0]], s);
    });
}

template <class T>
void unary(const Work& w) {
    const px_tensor_desc& out = w.outputs[0];
    const T* x = data_of<T>(w.inputs[0]);
    T* y = data_of<T>(out);
    const px_tensor_desc* ops[2] = {&w.inputs[0], &out};
    walk(out, ops, [&](const int64_t* o) { y[o[1]] = apply_unary(w.op, x[o[0]]); });
}

// The input is contiguous; the output contiguous with the axis removed.
template <class T>
void sum(const Work& w) {
    const px_tensor_desc& in = w.inputs[0];
    const T* x = data_of<T>(in);
    T* y = data_of<T>(w.outputs[0]);
    int64_t outer = 1, length = element_count(in), inner = 1;
    if (w.reduce.axis >= 0) {
        length = in.shape[w.reduce.axis];
        for (int d = 0; d < w.reduce.axis; ++d) outer *= in.shape[d];
        for (int d = w.reduce.axis + 1; d < in.ndim; ++d) inner *= in.shape[d];
    }
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            double acc = 0;
            for (int64_t j = 0; j < length; ++j) acc += double(x[(o * length + j) * inner + i]);
            y[o * inner + i] = static_cast<T>(acc);
        }
}

// a (B,M,K) x b (B,K,N) -> y (B,M,N); batch strides may be 0, rows strided.
template <class T>
void matmul(const Work& w) {
    const px_tensor_desc &a = w.inputs[0], &b = w.inputs[1], &y = w.outputs[0];
    const int64_t batch = y.shape[0], m = y.shape[1], n = y.shape[2], k = a.shape[2];
    const T *pa = data_of<T>(a), *pb = data_of<T>(b);
    T* py = data_of<T>(y);
    for (int64_t s = 0; s < batch; ++s)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double acc = 0;
                for (int64_t p = 0; p < k; ++p)
                    acc += double(pa[s * a.strides[0] + i * a.strides[1] + p * a.strides[2]]) *
                           double(pb[s * b.strides[0] + p * b.strides[1] + j * b.strides[2]]);
                py[s * y.strides[0] + i * y.strides[1] + j * y.strides[2]] = static_cast<T>(acc);
            }
}

void copy(const Work& w) {
    const px_tensor_desc &in = w.inputs[0], &out = w.outputs[0];
    const size_t size = px_dtype_size(in.dtype);
    const char* x = in.buffer->data + in.offset;
    char* y = out.buffer->data + out.offset;
    const px_tensor_desc* ops[2] = {&in, &out};
    // memmove: a host may copy between overlapping views of one buffer.
    walk(out, ops, [&](const int64_t* o) { std::memmove(y + o[1] * size, x + o[0] * size, size); });
}

// Float to integer saturates and sends NaN to 0 (the rule the conformance
// suite checks; a plain static_cast would be undefined there).
template <class To, class From>
To convert(From x) {
    if constexpr (std::is_floating_point<From>::value && std::is_integral<To>::value) {
        if (std::isnan(x)) return 0;
        if (x <= From(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
        if (x >= From(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    }
    return static_cast<To>(x);
}

void cast(const Work& w) {
    const px_tensor_desc &in = w.inputs[0], &out = w.outputs[0];
    with_type(in.dtype, [&](auto from) {
        using From = decltype(from);
        with_type(out.dtype, [&](auto to) {
            using To = decltype(to);
            const From* x = data_of<From>(in);
            To* y = data_of<To>(out);
            const px_tensor_desc* ops[2] = {&in, &out};
            walk(out, ops, [&](const int64_t* o) { y[o[1]] = convert<To>(x[o[0]]); });
        });
    });
}

// Element i of the output (contiguous, of any rank) is start + i * step,
// converted as a cast converts it.
void arange(const Work& w) {
    const px_tensor_desc& out = w.outputs[0];
    with_type(out.dtype, [&](auto tag) {
        using T = decltype(tag);
        T* y = data_of<T>(out);
        for (int64_t i = 0; i < element_count(out); ++i) y[i] = convert<T>(w.arange.start + double(i) * w.arange.step);
    });
}

void fill(const Work& w) {
    const px_tensor_desc& out = w.outputs[0];
    with_type(out.dtype, [&](auto tag) {
        using T = decltype(tag);
        T v = std::is_floating_point<T>::value ? static_cast<T>(w.fill.value) : static_cast<T>(w.fill.int_value);
        T* y = data_of<T>(out);
        const px_tensor_desc* ops[1] = {&out};
        walk(out, ops, [&](const int64_t* o) { y[o[0]] = v; });
    });
}

}  // namespace

// What a failed op leaves (plugin.h, R9): every element of each output it
// does not update in place NaN (a float dtype) or 0, never the bytes the
// memory held before.
void fill_failed_outputs(const Work& w) {
    for (const px_tensor_desc& out : w.outputs) {
        bool in_place = false;
        for (const px_tensor_desc& in : w.inputs) in_place = in_place || (in.buffer == out.buffer && in.offset == out.offset);
        const size_t size = px_dtype_size(out.dtype);
        if (in_place || size == 0) continue;
        unsigned char bits[8];
        px_failed_element(out.dtype, bits);
        char* base = data_of<char>(out);
        const px_tensor_desc* ops[1] = {&out};
        walk(out, ops, [&](const int64_t* o) { std::memcpy(base + o[0] * int64_t(size), bits, size); });
    }
}

namespace {

// A kernel over float32 or float64, picked by the first operand's dtype.
template <void (*F32)(const Work&), void (*F64)(const Work&)>
void floating(const Work& w) {
    const int32_t dtype = w.inputs.empty() ? w.outputs[0].dtype : w.inputs[0].dtype;
    if (dtype == PX_FLOAT32) F32(w);
    else F64(w);
}

// The ops this plugin runs (rows of the op table), on the dtypes each kernel
// takes: the kit answers supports() and finds the kernel from this list.
const plexus::kit::KernelTable<Runner>& kernels() {
    static const std::vector<plexus::kit::Kernel<Runner>> list = {
        {PX_OP_ADD, floating<binary<float>, binary<double>>, PX_DTYPES_FLOAT},
        {PX_OP_SUB, floating<binary<float>, binary<double>>, PX_DTYPES_FLOAT},
        {PX_OP_MUL, floating<binary<float>, binary<double>>, PX_DTYPES_FLOAT},
        {PX_OP_DIV, floating<binary<float>, binary<double>>, PX_DTYPES_FLOAT},
        {PX_OP_NEG, floating<unary<float>, unary<double>>, PX_DTYPES_FLOAT},
        {PX_OP_EXP, floating<unary<float>, unary<double>>, PX_DTYPES_FLOAT},
        {PX_OP_RELU, floating<unary<float>, unary<double>>, PX_DTYPES_FLOAT},
        {PX_OP_SUM, floating<sum<float>, sum<double>>, PX_DTYPES_FLOAT},
        {PX_OP_MATMUL, floating<matmul<float>, matmul<double>>, PX_DTYPES_FLOAT},
        {PX_OP_COPY, copy, PX_DTYPES_ALL | PX_DTYPES_HALF},  // bytes: every dtype
        {PX_OP_CAST, cast},
        {PX_OP_FILL, fill},
        {PX_OP_ARANGE, arange},
    };
    static const plexus::kit::KernelTable<Runner> table(list);
    return table;
}

}  // namespace

bool supported(int32_t op, int32_t dtype) { return kernels().offers(op, dtype); }

px_status refuse_wrong_kernel_list(px_plugin_error* err) { return kernels().refuse_wrong_lists(err, "threads"); }

Refusal check_call(const px_op_call& call) {
    const std::string name = px_op_name(call.op);
    const int32_t dtype = px_op_call_dtype(&call);
    if (!supported(call.op, dtype))
        return {PX_ERROR_UNSUPPORTED, name + " on " + px_dtype_name(dtype) + " is not supported by the threads plugin"};
    return {};
}

Work capture(const px_op_call& call) {
    Work w;
    w.op = call.op;
    w.inputs.assign(call.inputs, call.inputs + call.num_inputs);
    w.outputs.assign(call.outputs, call.outputs + call.num_outputs);
    // attrs are read only as far as the caller's struct_size reaches.
    auto take = [&](auto& dst) {
        if (!call.attrs) return;
        uint32_t size = *static_cast<const uint32_t*>(call.attrs);
        std::memcpy(&dst, call.attrs, size < sizeof dst ? size : sizeof dst);
    };
    if (call.op == PX_OP_SUM) take(w.reduce);
    else if (call.op == PX_OP_FILL) take(w.fill);
    else if (call.op == PX_OP_ARANGE) take(w.arange);
    else if (call.op <= PX_OP_DIV) take(w.binary);
    return w;
}

void run(const Work& w) { kernels().runner(w.op)(w); }

}  // namespace threads_plugin
