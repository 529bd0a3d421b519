/* Prints the layout of the plugin ABI: every struct of plugin.h with its
 * size, alignment and each field's offset and size, then every constant and
 * enum value of types.h. The build compares this with the checked-in
 * plugin_abi.layout, so an inserted, removed, reordered or resized field, or
 * a renumbered op, fails the build instead of breaking plugins in the field.
 *
 * Adding to the ABI: append the field or struct in plugin.h (bump
 * PX_PLUGIN_ABI_MINOR), list it here, and regenerate the recorded file with
 * `cmake --build build --target plexus-abi-update`. */
#include <stddef.h>
#include <stdio.h>

#include "plexus/plugin.h"

#define STRUCT(T) printf("struct %s size=%zu align=%zu\n", #T, sizeof(T), _Alignof(T))
#define FIELD(T, f) printf("  %s.%s offset=%zu size=%zu\n", #T, #f, offsetof(T, f), sizeof(((T*)0)->f))
#define CONSTANT(c) printf("const %s=%lld\n", #c, (long long)(c))

int main(void) {
    STRUCT(px_device);
    FIELD(px_device, kind);
    FIELD(px_device, index);

    STRUCT(px_plugin_error);
    FIELD(px_plugin_error, struct_size);
    FIELD(px_plugin_error, message);

    STRUCT(px_device_info);
    FIELD(px_device_info, struct_size);
    FIELD(px_device_info, kind);
    FIELD(px_device_info, name);
    FIELD(px_device_info, memory_total);
    FIELD(px_device_info, memory_free);
    FIELD(px_device_info, memory_in_use);
    FIELD(px_device_info, memory_reserved);
    FIELD(px_device_info, memory_peak);

    STRUCT(px_tensor_desc);
    FIELD(px_tensor_desc, struct_size);
    FIELD(px_tensor_desc, dtype);
    FIELD(px_tensor_desc, buffer);
    FIELD(px_tensor_desc, offset);
    FIELD(px_tensor_desc, ndim);
    FIELD(px_tensor_desc, shape);
    FIELD(px_tensor_desc, strides);

    STRUCT(px_binary_attrs);
    FIELD(px_binary_attrs, struct_size);
    FIELD(px_binary_attrs, scalar_operand);
    FIELD(px_binary_attrs, scalar);

    STRUCT(px_reduce_attrs);
    FIELD(px_reduce_attrs, struct_size);
    FIELD(px_reduce_attrs, axis);
    FIELD(px_reduce_attrs, keepdims);

    STRUCT(px_matmul_attrs);
    FIELD(px_matmul_attrs, struct_size);
    FIELD(px_matmul_attrs, allow_tf32);

    STRUCT(px_fill_attrs);
    FIELD(px_fill_attrs, struct_size);
    FIELD(px_fill_attrs, value);
    FIELD(px_fill_attrs, int_value);

    STRUCT(px_arange_attrs);
    FIELD(px_arange_attrs, struct_size);
    FIELD(px_arange_attrs, start);
    FIELD(px_arange_attrs, step);

    STRUCT(px_random_attrs);
    FIELD(px_random_attrs, struct_size);
    FIELD(px_random_attrs, seed);
    FIELD(px_random_attrs, offset);
    FIELD(px_random_attrs, a);
    FIELD(px_random_attrs, b);

    STRUCT(px_gemm_attrs);
    FIELD(px_gemm_attrs, struct_size);
    FIELD(px_gemm_attrs, trans_a);
    FIELD(px_gemm_attrs, trans_b);
    FIELD(px_gemm_attrs, allow_tf32);

    STRUCT(px_conv2d_attrs);
    FIELD(px_conv2d_attrs, struct_size);
    FIELD(px_conv2d_attrs, stride_h);
    FIELD(px_conv2d_attrs, stride_w);
    FIELD(px_conv2d_attrs, pad_h);
    FIELD(px_conv2d_attrs, pad_w);

    STRUCT(px_pool2d_attrs);
    FIELD(px_pool2d_attrs, struct_size);
    FIELD(px_pool2d_attrs, kernel_h);
    FIELD(px_pool2d_attrs, kernel_w);
    FIELD(px_pool2d_attrs, stride_h);
    FIELD(px_pool2d_attrs, stride_w);
    FIELD(px_pool2d_attrs, pad_h);
    FIELD(px_pool2d_attrs, pad_w);

    STRUCT(px_dropout_attrs);
    FIELD(px_dropout_attrs, struct_size);
    FIELD(px_dropout_attrs, seed);
    FIELD(px_dropout_attrs, offset);
    FIELD(px_dropout_attrs, p);

    STRUCT(px_sgd_attrs);
    FIELD(px_sgd_attrs, struct_size);
    FIELD(px_sgd_attrs, lr);
    FIELD(px_sgd_attrs, momentum);
    FIELD(px_sgd_attrs, weight_decay);
    FIELD(px_sgd_attrs, rescale);

    STRUCT(px_batch_norm_attrs);
    FIELD(px_batch_norm_attrs, struct_size);
    FIELD(px_batch_norm_attrs, eps);

    STRUCT(px_adam_attrs);
    FIELD(px_adam_attrs, struct_size);
    FIELD(px_adam_attrs, decoupled);
    FIELD(px_adam_attrs, beta1);
    FIELD(px_adam_attrs, beta2);
    FIELD(px_adam_attrs, eps);
    FIELD(px_adam_attrs, weight_decay);
    FIELD(px_adam_attrs, rescale);
    FIELD(px_adam_attrs, one_minus_beta1);
    FIELD(px_adam_attrs, one_minus_beta2);
    FIELD(px_adam_attrs, decay);
    FIELD(px_adam_attrs, step_size);
    FIELD(px_adam_attrs, root_correction2);

    STRUCT(px_alpha_attrs);
    FIELD(px_alpha_attrs, struct_size);
    FIELD(px_alpha_attrs, alpha);

    STRUCT(px_op_call);
    FIELD(px_op_call, struct_size);
    FIELD(px_op_call, op);
    FIELD(px_op_call, device);
    FIELD(px_op_call, num_inputs);
    FIELD(px_op_call, inputs);
    FIELD(px_op_call, num_outputs);
    FIELD(px_op_call, outputs);
    FIELD(px_op_call, attrs);

    STRUCT(px_collective_call);
    FIELD(px_collective_call, struct_size);
    FIELD(px_collective_call, op);
    FIELD(px_collective_call, count);
    FIELD(px_collective_call, devices);
    FIELD(px_collective_call, tensors);

    STRUCT(px_group_id);
    FIELD(px_group_id, struct_size);
    FIELD(px_group_id, plugin);
    FIELD(px_group_id, bytes);

    STRUCT(px_group_call);
    FIELD(px_group_call, struct_size);
    FIELD(px_group_call, op);
    FIELD(px_group_call, count);
    FIELD(px_group_call, tensors);

    STRUCT(px_buffer_memory);
    FIELD(px_buffer_memory, struct_size);
    FIELD(px_buffer_memory, memory_kind);
    FIELD(px_buffer_memory, device_id);
    FIELD(px_buffer_memory, address);
    FIELD(px_buffer_memory, bytes);
    FIELD(px_buffer_memory, release);
    FIELD(px_buffer_memory, release_context);

    STRUCT(px_trace_span);
    FIELD(px_trace_span, struct_size);
    FIELD(px_trace_span, op);
    FIELD(px_trace_span, trace_id);
    FIELD(px_trace_span, bytes);
    FIELD(px_trace_span, start_ns);
    FIELD(px_trace_span, end_ns);

    STRUCT(px_plugin_api);
    FIELD(px_plugin_api, struct_size);
    FIELD(px_plugin_api, abi_major);
    FIELD(px_plugin_api, abi_minor);
    FIELD(px_plugin_api, name);
    FIELD(px_plugin_api, version);
    FIELD(px_plugin_api, create);
    FIELD(px_plugin_api, destroy);
    FIELD(px_plugin_api, device_count);
    FIELD(px_plugin_api, device_info);
    FIELD(px_plugin_api, supports);
    FIELD(px_plugin_api, buffer_alloc);
    FIELD(px_plugin_api, buffer_free);
    FIELD(px_plugin_api, copy_from_host);
    FIELD(px_plugin_api, copy_to_host);
    FIELD(px_plugin_api, copy_device);
    FIELD(px_plugin_api, execute);
    FIELD(px_plugin_api, synchronize);
    FIELD(px_plugin_api, all_reduce);
    FIELD(px_plugin_api, group_make_id);
    FIELD(px_plugin_api, group_join);
    FIELD(px_plugin_api, group_all_reduce);
    FIELD(px_plugin_api, group_leave);
    FIELD(px_plugin_api, buffer_memory);
    FIELD(px_plugin_api, buffer_wrap);
    FIELD(px_plugin_api, trace_enable);
    FIELD(px_plugin_api, execute_traced);
    FIELD(px_plugin_api, trace_take);

    CONSTANT(PX_PLUGIN_ABI_MAJOR);
    CONSTANT(PX_PLUGIN_ABI_MINOR);
    CONSTANT(PX_MAX_DIMS);
    CONSTANT(PX_MESSAGE_MAX);
    CONSTANT(PX_GROUP_ID_BYTES);
    CONSTANT(PX_OP_NUMBER_LIMIT);
    CONSTANT(PX_COLLECTIVE_SUM);
    CONSTANT(PX_MEMORY_HOST);
    CONSTANT(PX_MEMORY_CUDA);
    CONSTANT(PX_OK);
    CONSTANT(PX_ERROR_INVALID_ARGUMENT);
    CONSTANT(PX_ERROR_INVALID_HANDLE);
    CONSTANT(PX_ERROR_DEVICE_MISMATCH);
    CONSTANT(PX_ERROR_SHAPE);
    CONSTANT(PX_ERROR_DTYPE);
    CONSTANT(PX_ERROR_OUT_OF_MEMORY);
    CONSTANT(PX_ERROR_UNSUPPORTED);
    CONSTANT(PX_ERROR_NO_DEVICE);
    CONSTANT(PX_ERROR_PLUGIN);
    CONSTANT(PX_ERROR_DEVICE);
    CONSTANT(PX_ERROR_INTERNAL);
    for (int d = 0; d < 256; ++d)
        if (px_dtype_name(d)) printf("dtype %d %s size=%zu\n", d, px_dtype_name(d), px_dtype_size(d));
    for (int k = 0; k < 256; ++k)
        if (px_device_kind_name(k)) printf("device_kind %d %s\n", k, px_device_kind_name(k));
    for (int op = 0; op < PX_OP_NUMBER_LIMIT; ++op)
        if (px_op_name(op)) printf("op %d %s\n", op, px_op_name(op));
    return 0;
}
