/* The C API from C99, against the installed headers: list plugins and
 * devices, add two tensors on cpu(0), read the result back. */
#include <stdio.h>

#include <plexus/plexus.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        if ((call) != PX_OK) {                                               \
            fprintf(stderr, "c_api: %s failed: %s\n", #call, px_last_error()); \
            return 1;                                                        \
        }                                                                    \
    } while (0)

int main(void) {
    px_runtime* rt = NULL;
    int32_t plugins = 0, cpus = 0;
    CHECK(px_runtime_create(NULL, &rt));
    CHECK(px_runtime_plugin_count(rt, &plugins));
    CHECK(px_runtime_device_count(rt, PX_DEVICE_CPU, &cpus));
    printf("%d plugin(s), %d cpu device(s)\n", (int)plugins, (int)cpus);
    if (cpus < 1) return 1;

    px_device cpu0 = {PX_DEVICE_CPU, 0};
    const float a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
    const int64_t shape[1] = {3};
    px_tensor *ta = NULL, *tb = NULL, *sum = NULL;
    CHECK(px_tensor_from_host(rt, cpu0, PX_FLOAT32, 1, shape, a, sizeof a, &ta));
    CHECK(px_tensor_from_host(rt, cpu0, PX_FLOAT32, 1, shape, b, sizeof b, &tb));
    CHECK(px_binary(PX_OP_ADD, ta, tb, &sum));
    float out[3] = {0};
    CHECK(px_tensor_to_host(sum, out, sizeof out));
    printf("[%g %g %g]\n", out[0], out[1], out[2]);
    /* A NULL handle is an error with a message, not a crash. */
    if (px_binary(PX_OP_ADD, NULL, tb, &sum) != PX_ERROR_INVALID_HANDLE) return 1;
    printf("px_binary(add, NULL, ...): %s\n", px_last_error());
    px_tensor_release(ta);
    px_tensor_release(tb);
    px_tensor_release(sum);
    CHECK(px_runtime_destroy(rt));
    return out[0] == 11 && out[1] == 22 && out[2] == 33 ? 0 : 1;
}
