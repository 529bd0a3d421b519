// C API: ops. Each entry point looks its handles up and hands over to the router.
#include <vector>

#include "router.hpp"

using namespace px;

extern "C" {

px_status px_binary(px_op op, px_tensor* a, px_tensor* b, px_tensor** out) {
    return guard("px_binary", [&] {
        TensorObj& x = get_tensor(a, "a");
        TensorObj& y = get_tensor(b, "b");
        need_out(out);
        *out = publish(router::binary(op, x, y));
    });
}

px_status px_binary_scalar(px_op op, px_tensor* a, double scalar, int32_t scalar_first, px_tensor** out) {
    return guard("px_binary_scalar", [&] {
        TensorObj& x = get_tensor(a, "a");
        need_out(out);
        *out = publish(router::binary_scalar(op, x, scalar, scalar_first != 0));
    });
}

px_status px_unary(px_op op, px_tensor* a, px_tensor** out) {
    return guard("px_unary", [&] {
        TensorObj& x = get_tensor(a, "a");
        need_out(out);
        *out = publish(router::unary(op, x));
    });
}

px_status px_where(px_tensor* cond, px_tensor* a, px_tensor* b, px_tensor** out) {
    return guard("px_where", [&] {
        TensorObj& c = get_tensor(cond, "cond");
        TensorObj& x = get_tensor(a, "a");
        TensorObj& y = get_tensor(b, "b");
        need_out(out);
        *out = publish(router::where(c, x, y));
    });
}

px_status px_reduce(px_op op, px_tensor* a, int32_t all_axes, int32_t axis, int32_t keepdims, px_tensor** out) {
    return guard("px_reduce", [&] {
        TensorObj& x = get_tensor(a, "a");
        need_out(out);
        *out = publish(router::reduce(op, x, all_axes != 0, axis, keepdims != 0));
    });
}

px_status px_matmul(px_tensor* a, px_tensor* b, px_tensor** out) {
    return guard("px_matmul", [&] {
        TensorObj& x = get_tensor(a, "a");
        TensorObj& y = get_tensor(b, "b");
        need_out(out);
        *out = publish(router::matmul(x, y));
    });
}

px_status px_transpose(px_tensor* a, const int32_t* perm, int32_t nperm, px_tensor** out) {
    return guard("px_transpose", [&] {
        TensorObj& x = get_tensor(a, "a");
        need_out(out);
        *out = publish(router::transpose(x, perm, nperm));
    });
}

px_status px_slice_axis(px_tensor* a, int32_t axis, int64_t start, int64_t stop, int64_t step, px_tensor** out) {
    return guard("px_slice_axis", [&] {
        TensorObj& x = get_tensor(a, "a");
        need_out(out);
        *out = publish(router::slice_axis(x, axis, start, stop, step));
    });
}

px_status px_concat(px_tensor* const* tensors, int32_t count, int32_t axis, px_tensor** out) {
    return guard("px_concat", [&] {
        if (count < 1) fail(PX_ERROR_INVALID_ARGUMENT, "count is ", count, "; at least one tensor is needed");
        if (!tensors) fail(PX_ERROR_INVALID_ARGUMENT, "'tensors' is NULL");
        std::vector<const TensorObj*> parts;
        parts.reserve(count);
        for (int32_t i = 0; i < count; ++i) {
            std::string arg = cat("tensors[", i, "]");
            parts.push_back(&get_tensor(tensors[i], arg.c_str()));
        }
        need_out(out);
        *out = publish(router::concat(parts, axis));
    });
}

px_status px_cast(px_tensor* a, px_dtype dtype, px_tensor** out) {
    return guard("px_cast", [&] {
        TensorObj& x = get_tensor(a, "a");
        check_dtype(dtype);
        need_out(out);
        *out = publish(router::cast(x, dtype));
    });
}

px_status px_all_reduce_sum(px_tensor* const* tensors, int32_t count) {
    return guard("px_all_reduce_sum", [&] {
        if (count < 1) fail(PX_ERROR_INVALID_ARGUMENT, "count is ", count, "; at least one tensor is needed");
        if (!tensors) fail(PX_ERROR_INVALID_ARGUMENT, "'tensors' is NULL");
        std::vector<TensorObj*> parts;
        parts.reserve(count);
        for (int32_t i = 0; i < count; ++i) {
            std::string arg = cat("tensors[", i, "]");
            parts.push_back(&get_tensor(tensors[i], arg.c_str()));
        }
        router::all_reduce_sum(parts);
    });
}

}  // extern "C"
