// plexus C++ frontend: Tensor, a reference-counted handle to a tensor that
// lives on a device. Ops run on the device of their inputs and return at
// once; reading values (to_vector, item, printing) waits.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "plexus/cpp/device.hpp"
#include "plexus/cpp/format.hpp"
#include "plexus/cpp/half.hpp"

namespace plexus {

using Shape = std::vector<int64_t>;

// "(2, 3)", "(3,)" for one axis, "()" for none, as NumPy prints shapes.
inline std::string str(const Shape& s) {
    std::string out = "(";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + (s.size() == 1 ? ",)" : ")");
}

// One enumerator per row of the dtype table (types.h), named as its row.
#define PLEXUS_DTYPE_ENUMERATOR_(dtype, number, name, ...) name = dtype,
enum class DType : int32_t { PX_DTYPE_TABLE(PLEXUS_DTYPE_ENUMERATOR_) };
#undef PLEXUS_DTYPE_ENUMERATOR_

inline const char* name(DType d) { return px_dtype_name(static_cast<int32_t>(d)); }
// float32, float64, float16, bfloat16: the dtypes gradients and the float ops take.
inline bool is_floating(DType d) { return px_dtype_class(static_cast<int32_t>(d)) == PX_DTYPE_CLASS_FLOAT; }

class Tensor;

// The hooks through which ops record themselves; defined in autograd.hpp.
namespace autograd {
struct Meta;
// A recorded op's gradient rule: the gradient of each input (an empty Tensor
// for an input that needs none) from the gradient of the output.
using GradFn = std::function<std::vector<Tensor>(const Tensor& dy)>;
namespace detail {
// Whether recording is on and one of `inputs` needs a gradient.
bool wanted(std::initializer_list<const Tensor*> inputs);
// Links `out` to `inputs` on the tape (call only when wanted()). `reads`:
// every tensor the rule reads (inputs, the result), so that backward()
// refuses once one was written in place since; leaf inputs count always.
void record(Tensor& out, std::initializer_list<const Tensor*> inputs, GradFn fn, const char* op,
            std::initializer_list<Tensor> reads = {});
// Fails naming `op` when it would need a gradient it does not have.
void no_gradient(std::initializer_list<const Tensor*> inputs, const char* op);
}  // namespace detail
}  // namespace autograd

// The DType of a C++ element type.
template <class T>
constexpr DType dtype_of() {
    if constexpr (std::is_same_v<T, float>) return DType::float32;
    else if constexpr (std::is_same_v<T, double>) return DType::float64;
    else if constexpr (std::is_same_v<T, int32_t>) return DType::int32;
    else if constexpr (std::is_same_v<T, int64_t>) return DType::int64;
    else if constexpr (std::is_same_v<T, uint8_t>) return DType::uint8;
    else if constexpr (std::is_same_v<T, float16>) return DType::float16;
    else if constexpr (std::is_same_v<T, bfloat16>) return DType::bfloat16;
    else static_assert(sizeof(T) == 0, "no Plexus dtype for this C++ type");
}

// The forms the op table's rows give the frontend, by family: methods of a
// Tensor (kind METHOD, inside the class below: x.exp(), x.sum(axis)) and
// free functions (kind FUNCTION, after it: exp(x)). A family with no such
// form gives none; its ops have functions of their own. A row added to
// op_table.h in a family with forms has them, with nothing else to edit.
#define PLEXUS_OP_METHODS_(op, number, name, family, ...) PLEXUS_OP_FORMS_##family(METHOD, op, name)
#define PLEXUS_OP_FUNCTIONS_(op, number, name, family, ...) PLEXUS_OP_FORMS_##family(FUNCTION, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_UNARY(kind, op, name) PLEXUS_##kind##_UNARY_(op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_REDUCE(kind, op, name) PLEXUS_##kind##_REDUCE_(op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_UNARY_ALPHA(kind, op, name) PLEXUS_##kind##_UNARY_ALPHA_(op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_BINARY(kind, op, name) PLEXUS_##kind##_BINARY_(op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_WHERE(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_MATMUL(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_COPY(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_CAST(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_CREATION(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_GEMM(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_CONV2D(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_CONV2D_BACKWARD_INPUT(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_CONV2D_BACKWARD_WEIGHT(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_POOL2D(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_POOL2D_BACKWARD(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_BIAS(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_POINTWISE_GRAD(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_LOG_SOFTMAX(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_SOFTMAX_CROSS_ENTROPY(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_DROPOUT(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_SGD(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_BATCH_NORM(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_ADAM(kind, op, name)
#define PLEXUS_OP_FORMS_PX_FAMILY_TAKE(kind, op, name)
#define PLEXUS_METHOD_UNARY_(op, name) \
    Tensor name() const { return unary(op); }
#define PLEXUS_METHOD_REDUCE_(op, name)                                                     \
    Tensor name() const { return reduce(op); }                                              \
    Tensor name(int axis, bool keepdims = false) const { return reduce(op, axis, keepdims); } \
    Tensor name(const std::vector<int>& axes, bool keepdims = false) const { return reduce(op, axes, keepdims); }
#define PLEXUS_METHOD_UNARY_ALPHA_(op, name) \
    Tensor name(double alpha) const { return unary_alpha(op, alpha); }
#define PLEXUS_METHOD_BINARY_(op, name)                                 \
    Tensor name(const Tensor& b) const { return binary_op(op, b); } \
    Tensor name(double s) const { return scalar_op(op, s, false); }
#define PLEXUS_FUNCTION_UNARY_(op, name) \
    inline Tensor name(const Tensor& a) { return a.name(); }
#define PLEXUS_FUNCTION_BINARY_(op, name)                                          \
    inline Tensor name(const Tensor& a, const Tensor& b) { return a.name(b); } \
    inline Tensor name(const Tensor& a, double s) { return a.name(s); }        \
    inline Tensor name(double s, const Tensor& b) { return b.scalar_op(op, s, true); }
// Reductions are methods only; an alpha op's function has its own default
// alpha, written after the class.
#define PLEXUS_FUNCTION_REDUCE_(op, name)
#define PLEXUS_FUNCTION_UNARY_ALPHA_(op, name)

class Tensor {
public:
    Tensor() = default;
    // Takes ownership of one reference of `handle`.
    explicit Tensor(px_tensor* handle) : h_(handle) {}
    Tensor(const Tensor& o) : h_(o.h_), meta_(o.meta_) {
        if (h_) check(px_tensor_retain(h_));
    }
    Tensor(Tensor&& o) noexcept : h_(std::exchange(o.h_, nullptr)), meta_(std::move(o.meta_)) {}
    Tensor& operator=(Tensor o) noexcept {
        std::swap(h_, o.h_);
        std::swap(meta_, o.meta_);
        return *this;
    }
    ~Tensor() {
        if (h_) px_tensor_release(h_);
    }

    px_tensor* handle() const { return h_; }
    bool defined() const { return h_ != nullptr; }

    Device device() const {
        px_device d{};
        check(px_tensor_device(need(), &d));
        return Device::of(d);
    }
    DType dtype() const {
        px_dtype d{};
        check(px_tensor_dtype(need(), &d));
        return static_cast<DType>(d);
    }
    Shape shape() const {
        int64_t dims[PX_MAX_DIMS];
        int32_t nd = 0;
        check(px_tensor_ndim(need(), &nd));
        check(px_tensor_shape(need(), dims, PX_MAX_DIMS));
        return Shape(dims, dims + nd);
    }
    int ndim() const {
        int32_t nd = 0;
        check(px_tensor_ndim(need(), &nd));
        return nd;
    }
    int64_t size() const {
        int64_t n = 0;
        check(px_tensor_numel(need(), &n));
        return n;
    }

    // Always a new tensor with its own memory, even on the same device.
    // A copy on `d` (d may be this tensor's device); differentiable, as
    // MXNet's copyto and PyTorch's to(): the gradient is copied back.
    Tensor copyto(Device d) const {
        Tensor out = wrap([&](px_tensor** o) { return px_tensor_copy_to(need(), d.raw(), o); });
        return copied_back(out);
    }
    // This very tensor (the same handle, and its autograd record) when it is
    // already on `d`, otherwise a copy as copyto.
    Tensor as_in_context(Device d) const {
        Tensor out = wrap([&](px_tensor** o) { return px_tensor_as_on(need(), d.raw(), o); });
        return out.is(*this) ? *this : copied_back(out);
    }
    // Identity, as Python's `is`.
    bool is(const Tensor& o) const { return h_ == o.h_; }
    // Writes `values` into this tensor's memory, in place (px_tensor_assign_region),
    // cast to its dtype, moved to its device and broadcast to its shape, as
    // NumPy's x[...] = values (values that share its memory are read before
    // it is written: x[1:] = x[:-1]): every handle to it, its views and memory shared
    // through DLPack see them. Not into a recorded result, nor, while
    // recording, into a leaf or from values that need a gradient (as MXNet:
    // other tensors may be written while recording).
    Tensor& assign(const Tensor& values);
    Tensor& assign(double value);
    // Writes `values` (cast, moved and broadcast as assign) into the places a
    // basic index names: along each axis k, count[k] places from start[k],
    // step[k] apart (px_tensor_assign_region; NumPy's x[1:4:2, 0] = values).
    Tensor& assign_region(const std::vector<int64_t>& start, const std::vector<int64_t>& step,
                          const std::vector<int64_t>& count, const Tensor& values);
    // assign()'s refusals before a write in place, for a write through a
    // view of this tensor that carries no autograd record of its own
    // (Python's x[i] = v).
    void check_writable() const;
    // How many writes in place Plexus has made to this tensor's memory,
    // through any handle or view of it (px_tensor_version).
    uint64_t version() const {
        uint64_t v = 0;
        check(px_tensor_version(need(), &v));
        return v;
    }

    // ---- autograd (see autograd.hpp) ----
    // Makes this tensor a leaf whose gradient backward() computes; the
    // gradient starts as zeros on the same device. Floating dtypes only.
    // grad_req "write": each backward() replaces the gradient; "add": adds
    // to it (Gluon's grad_req, for gradients accumulated over batches).
    void attach_grad(const std::string& grad_req = "write");
    // The gradient written (or summed) by the backward() calls that reached this tensor.
    Tensor grad() const;
    // Back-propagates from this tensor (a scalar, or with head gradient
    // `head`, ones by default) through what was recorded, freeing the graph
    // as it goes unless retain_graph (as Gluon's and PyTorch's), so that
    // another loss can go back through the results both use.
    void backward() const;
    void backward(const Tensor& head, bool retain_graph = false) const;
    // The same values, cut from the recorded graph.
    Tensor detach() const {
        Tensor t(*this);
        t.meta_.reset();
        return t;
    }
    // The autograd record attached to this tensor, if any (for autograd.hpp).
    const std::shared_ptr<autograd::Meta>& autograd_meta() const { return meta_; }
    void set_autograd_meta(std::shared_ptr<autograd::Meta> m) { meta_ = std::move(m); }

    // The values, waiting for the device. T must be the tensor's dtype.
    template <class T>
    std::vector<T> to_vector() const {
        if (dtype_of<T>() != dtype())
            throw DTypeError(PX_ERROR_DTYPE, std::string("to_vector: the tensor is ") + name(dtype()) +
                                                 ", not " + name(dtype_of<T>()) + "; use astype() first");
        std::vector<T> out(static_cast<size_t>(size()));
        check(px_tensor_to_host(need(), out.data(), out.size() * sizeof(T)));
        return out;
    }
    // The one value of a one-element tensor, as T: converted as astype()
    // converts when T is not its dtype (loss.item<double>() of a float32 loss).
    template <class T>
    T item() const {
        if (size() != 1)
            throw ShapeError(PX_ERROR_SHAPE, "item: the tensor has " + std::to_string(size()) + " elements, not 1");
        if (dtype_of<T>() != dtype()) return astype(dtype_of<T>()).template to_vector<T>()[0];
        return to_vector<T>()[0];
    }

    // Views sharing memory.
    Tensor reshape(const Shape& s) const {
        Tensor out = wrap([&](px_tensor** o) { return px_tensor_reshape(need(), int32_t(s.size()), s.data(), o); });
        if (autograd::detail::wanted({this})) {
            Shape from = shape();
            autograd::detail::record(out, {this}, [from](const Tensor& dy) { return std::vector<Tensor>{dy.reshape(from)}; },
                                     "reshape");
        }
        return out;
    }
    // Rows [start, stop) of the first axis, a view. Differentiable (gradients.hpp).
    Tensor slice(int64_t start, int64_t stop) const;
    // Rows [start, stop) with step along `axis` (NumPy's clamping of negative
    // and outside indices), as a new tensor. Differentiable (gradients.hpp).
    Tensor slice_axis(int axis, int64_t start, int64_t stop, int64_t step = 1) const;

    Tensor astype(DType d) const {
        Tensor out = wrap([&](px_tensor** o) { return px_cast(need(), static_cast<px_dtype>(d), o); });
        if (is_floating(d) && autograd::detail::wanted({this})) {
            DType from = dtype();
            autograd::detail::record(out, {this}, [from](const Tensor& dy) { return std::vector<Tensor>{dy.astype(from)}; },
                                     "astype");
        }
        return out;
    }
    Tensor transpose(const std::vector<int32_t>& perm = {}) const {
        Tensor out = wrap([&](px_tensor** o) {
            return px_transpose(need(), perm.empty() ? nullptr : perm.data(), int32_t(perm.size()), o);
        });
        if (autograd::detail::wanted({this})) {
            int nd = ndim();
            std::vector<int32_t> inverse(nd);
            for (int i = 0; i < nd; ++i) inverse[perm.empty() ? nd - 1 - i : (perm[i] + nd) % nd] = i;
            autograd::detail::record(out, {this}, [inverse](const Tensor& dy) {
                return std::vector<Tensor>{dy.transpose(inverse)};
            }, "transpose");
        }
        return out;
    }
    Tensor T() const { return transpose(); }

    Tensor unary(px_op op) const;
    Tensor unary_alpha(px_op op, double alpha) const;  // leaky_relu
    Tensor reduce(px_op op) const { return reduce_impl(op, true, 0, false); }
    Tensor reduce(px_op op, int axis, bool keepdims = false) const { return reduce_impl(op, false, axis, keepdims); }
    // Over several axes (each once, negative counting from the end): one
    // reduction per axis, the highest first. Not argmax.
    Tensor reduce(px_op op, const std::vector<int>& axes, bool keepdims = false) const;

    // One method per unary op of the op table (x.exp(), x.relu(), ...), two
    // per binary op (x.add(y), x.add(2.0), x.pow(y), x.lt(0.5)) and three per
    // reduction (x.sum(), x.sum(axis, keepdims), x.sum(axes)), named as its
    // row: a row added to op_table.h is a method here, with nothing else to edit.
    PX_OP_TABLE(PLEXUS_OP_METHODS_)

    Tensor binary_op(px_op op, const Tensor& b) const;
    Tensor scalar_op(px_op op, double s, bool scalar_first) const;

    // Runs a C call that makes a tensor and wraps its result.
    template <class F>
    static Tensor wrap(F&& f) {
        px_tensor* out = nullptr;
        check(f(&out));
        return Tensor(out);
    }

    px_tensor* need() const {
        if (!h_) throw InvalidArgumentError(PX_ERROR_INVALID_HANDLE, "this Tensor is empty (default-constructed or moved from)");
        return h_;
    }

private:
    Tensor reduce_impl(px_op op, bool all_axes, int axis, bool keepdims) const;

    // `out`, a copy of this tensor, recorded for autograd: its gradient is
    // copied back to this tensor's device.
    Tensor copied_back(Tensor out) const {
        if (is_floating(dtype()) && autograd::detail::wanted({this})) {
            const Device from = device();
            autograd::detail::record(out, {this}, [from](const Tensor& dy) { return std::vector<Tensor>{dy.copyto(from)}; },
                                     "copyto");
        }
        return out;
    }

    px_tensor* h_ = nullptr;
    std::shared_ptr<autograd::Meta> meta_;  // set for tensors autograd tracks
};

// ---- arithmetic, as operators and free functions ----

// exp(x), relu(x), ...: one per unary row of the op table; add(a, b),
// add(a, 2.0), add(2.0, a), pow(2.0, x), lt(x, y), ...: three per binary row.
PX_OP_TABLE(PLEXUS_OP_FUNCTIONS_)
inline Tensor leaky_relu(const Tensor& a, double alpha = 0.01) { return a.leaky_relu(alpha); }

// The operators are the binary rows' functions (below) under C++'s symbols.
#define PLEXUS_BINARY_OPERATOR(sym, name)                                                 \
    inline Tensor operator sym(const Tensor& a, const Tensor& b) { return name(a, b); } \
    inline Tensor operator sym(const Tensor& a, double s) { return name(a, s); }        \
    inline Tensor operator sym(double s, const Tensor& a) { return name(s, a); }
PLEXUS_BINARY_OPERATOR(+, add)
PLEXUS_BINARY_OPERATOR(-, sub)
PLEXUS_BINARY_OPERATOR(*, mul)
PLEXUS_BINARY_OPERATOR(/, div)
// Elementwise comparisons give uint8 tensors of 0 and 1.
PLEXUS_BINARY_OPERATOR(<, lt)
PLEXUS_BINARY_OPERATOR(<=, le)
PLEXUS_BINARY_OPERATOR(>, gt)
PLEXUS_BINARY_OPERATOR(>=, ge)
#undef PLEXUS_BINARY_OPERATOR

inline Tensor operator-(const Tensor& a) { return a.neg(); }
// == and != are functions, not operators: an operator returning a tensor
// would make `a == b` compile where a bool is meant (if, std::find).
inline Tensor equal(const Tensor& a, const Tensor& b) { return eq(a, b); }
inline Tensor equal(const Tensor& a, double s) { return eq(a, s); }
inline Tensor not_equal(const Tensor& a, const Tensor& b) { return ne(a, b); }
inline Tensor not_equal(const Tensor& a, double s) { return ne(a, s); }


Tensor matmul(const Tensor& a, const Tensor& b);  // differentiable; in gradients.hpp
// NumPy's dot of vectors and matrices (their matmul, or a product with a
// zero-dimensional tensor); beyond 2-D NumPy's dot pairs every matrix of one
// with every matrix of the other, which is not a batched matmul: refused
// rather than computed otherwise.
inline Tensor dot(const Tensor& a, const Tensor& b) {
    if (a.shape().empty() || b.shape().empty()) return a * b;  // a scalar: np.dot multiplies
    if (a.shape().size() > 2 || b.shape().size() > 2)
        throw ShapeError(PX_ERROR_SHAPE, "dot: takes vectors and matrices, not " + str(a.shape()) + " and " +
                                             str(b.shape()) + " (np.dot of those differs from a batched "
                                             "product: use matmul for stacks of matrices, as np.matmul)");
    return matmul(a, b);
}
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);  // differentiable; in gradients.hpp
Tensor concat(const std::vector<Tensor>& parts, int axis = 0);  // differentiable; in gradients.hpp
// Rows of `table` (V, ...) picked by int32/int64 `indices` of any shape:
// (indices' shape, ...). Differentiable in the table (an embedding lookup).
Tensor take(const Tensor& table, const Tensor& indices);  // in gradients.hpp

// Sums tensors of one shape and dtype, one per device, and writes the sum
// into every one of them (in place; all end with the same bits). The
// devices' collective (e.g. NCCL) does it when their plugin has one.
inline void all_reduce_sum(const std::vector<Tensor>& tensors) {
    std::vector<px_tensor*> hs;
    hs.reserve(tensors.size());
    for (const auto& t : tensors) hs.push_back(t.handle());
    check(px_all_reduce_sum(hs.data(), int32_t(hs.size())));
}

// ---- creation; tensors are made on the CPU unless a device is named ----

template <class T>
Tensor array(const std::vector<T>& values, const Shape& shape = {}, Device device = cpu()) {
    Shape s = shape.empty() ? Shape{int64_t(values.size())} : shape;
    return Tensor::wrap([&](px_tensor** o) {
        return px_tensor_from_host(runtime(), device.raw(), static_cast<px_dtype>(dtype_of<T>()), int32_t(s.size()),
                                   s.data(), values.data(), values.size() * sizeof(T), o);
    });
}
inline Tensor array(std::initializer_list<float> values, const Shape& shape = {}, Device device = cpu()) {
    return array(std::vector<float>(values), shape, device);
}
inline Tensor array(std::initializer_list<float> values, Device device) {
    return array(std::vector<float>(values), {}, device);
}

inline Tensor empty(const Shape& s, Device device = cpu(), DType d = DType::float32) {
    return Tensor::wrap([&](px_tensor** o) {
        return px_tensor_empty(runtime(), device.raw(), static_cast<px_dtype>(d), int32_t(s.size()), s.data(), o);
    });
}
inline Tensor full(const Shape& s, double value, Device device = cpu(), DType d = DType::float32) {
    return Tensor::wrap([&](px_tensor** o) {
        return px_tensor_full(runtime(), device.raw(), static_cast<px_dtype>(d), int32_t(s.size()), s.data(), value, o);
    });
}
inline Tensor zeros(const Shape& s, Device device = cpu(), DType d = DType::float32) { return full(s, 0, device, d); }
inline Tensor ones(const Shape& s, Device device = cpu(), DType d = DType::float32) { return full(s, 1, device, d); }
inline Tensor arange(double start, double stop, double step = 1, Device device = cpu(), DType d = DType::float32) {
    return Tensor::wrap([&](px_tensor** o) {
        return px_tensor_arange(runtime(), device.raw(), static_cast<px_dtype>(d), start, stop, step, o);
    });
}
// arange(12): 0, 1, ..., 11, as nd.arange(12) and np.arange(12).
inline Tensor arange(double stop, Device device = cpu(), DType d = DType::float32) {
    return arange(0, stop, 1, device, d);
}
inline Tensor random_uniform(const Shape& s, double low = 0, double high = 1, Device device = cpu(),
                             DType d = DType::float32) {
    return Tensor::wrap([&](px_tensor** o) {
        return px_tensor_random_uniform(runtime(), device.raw(), static_cast<px_dtype>(d), int32_t(s.size()), s.data(),
                                        low, high, o);
    });
}
inline Tensor random_normal(const Shape& s, double mean = 0, double stddev = 1, Device device = cpu(),
                            DType d = DType::float32) {
    return Tensor::wrap([&](px_tensor** o) {
        return px_tensor_random_normal(runtime(), device.raw(), static_cast<px_dtype>(d), int32_t(s.size()), s.data(),
                                       mean, stddev, o);
    });
}

// ---- printing: the values, then <Tensor 2x3 @gpu(0)> (dtype shown unless float32) ----

inline std::string values_string(const Tensor& t) {
    Shape shape = t.shape();
    int64_t n = t.size();
    bool summarize = n > 1000;
    std::vector<long long> sh(shape.begin(), shape.end());
    // Collect the shown elements in row-major order of the shown indices.
    std::vector<int64_t> flat;
    std::vector<int64_t> strides(shape.size(), 1);
    for (int i = int(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
    std::vector<std::vector<long long>> per_axis;
    for (auto d : sh) {
        auto idx = format::shown(d, summarize);
        idx.erase(std::remove(idx.begin(), idx.end(), -1), idx.end());
        per_axis.push_back(idx);
    }
    if (n > 0) {
        std::vector<size_t> pos(shape.size(), 0);
        for (;;) {
            int64_t off = 0;
            for (size_t i = 0; i < shape.size(); ++i) off += per_axis[i][pos[i]] * strides[i];
            flat.push_back(off);
            int i = int(shape.size()) - 1;
            while (i >= 0 && ++pos[i] == per_axis[i].size()) pos[i--] = 0;
            if (i < 0) break;
        }
    }
    std::vector<format::Cell> cells;
    DType d = t.dtype();
    if (is_floating(d)) {
        auto widen = [](const auto& v) { return std::vector<double>(v.begin(), v.end()); };
        const std::vector<double> all = d == DType::float32   ? widen(t.to_vector<float>())
                                        : d == DType::float16 ? widen(t.to_vector<float16>())
                                        : d == DType::bfloat16 ? widen(t.to_vector<bfloat16>())
                                                               : t.to_vector<double>();
        std::vector<double> vals;
        vals.reserve(flat.size());
        for (auto o : flat) vals.push_back(all[size_t(o)]);
        cells = format::float_cells(vals, [d](double v) {
            switch (d) {
            case DType::float32: return double(float(v));
            case DType::float16: return double(float16(v));
            case DType::bfloat16: return double(bfloat16(v));
            default: return v;
            }
        });
    } else {
        auto widen = [](const auto& v) { return std::vector<long long>(v.begin(), v.end()); };
        const std::vector<long long> all = d == DType::int32   ? widen(t.to_vector<int32_t>())
                                           : d == DType::int64 ? widen(t.to_vector<int64_t>())
                                                               : widen(t.to_vector<uint8_t>());
        std::vector<long long> vals;
        vals.reserve(flat.size());
        for (auto o : flat) vals.push_back(all[size_t(o)]);
        cells = format::int_cells(vals);
    }
    auto texts = format::align(cells);
    if (shape.empty()) return texts.empty() ? "" : texts[0];
    std::string out;
    size_t next = 0;
    format::nest(out, sh, 0, summarize, texts, next, 0);
    return out;
}

inline std::string describe(const Tensor& t) {
    std::string dims;
    for (auto d : t.shape()) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    if (dims.empty()) dims = "scalar";
    std::string dt = t.dtype() == DType::float32 ? "" : std::string(" ") + name(t.dtype());
    return "<Tensor " + dims + dt + " @" + t.device().str() + ">";
}

inline std::ostream& operator<<(std::ostream& os, const Tensor& t) {
    return os << values_string(t) << "\n" << describe(t);
}

}  // namespace plexus
