// Returns from main with products still queued on both CPU devices (one
// running inside OpenBLAS, more waiting), as a program that forgets to wait
// does. Exit must neither crash nor hang: before the CPU plugin drained its
// queues at exit (plugins/cpu/exit_drain.hpp), one run in about seven died
// of a segmentation fault as OpenBLAS was finalized under a running product.
// A static object's destructor then still computes, and another makes a new
// runtime (new queues, made and destroyed after the plugin's list of live
// queues is gone). With a GPU (the CUDA emulator's, in ctest), work is also
// left queued on gpu(0) and a GPU tensor is kept in a global: at exit, after
// CUDA has shut down, its release must make no CUDA call, GPU work asked for
// must fail saying why, and a runtime made then has no GPUs (the emulator
// ends the process at any CUDA call after its shutdown). ctest runs it 20
// times on the CPU and 5 times with the emulator (tests/CMakeLists.txt,
// tests/cuda_emu/CMakeLists.txt).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "plexus/plexus.hpp"

using namespace plexus;

// LeakSanitizer's, where the test is built with it (tools/run-sanitizers.sh).
extern "C" void __lsan_disable() __attribute__((weak));

namespace {
// Made before main, so destroyed after the plugin's queues were drained at
// exit: Plexus still computes then, as a static object's destructor may ask.
struct ComputesAtExit {
    ~ComputesAtExit() {
        try {
            if (num_gpus() > 0) refused_on_gpu();
            if (matmul(full({64, 64}, 1.0, cpu(1)), full({64, 64}, 2.0, cpu(1))).max().item<float>() == 128.0f) return;
            std::fprintf(stderr, "exit_with_work_queued: a product computed at exit is wrong\n");
        } catch (const Error& e) {
            std::fprintf(stderr, "exit_with_work_queued: at exit: %s\n", e.what());
        }
        std::_Exit(1);
    }
    static void refused_on_gpu() {
        try {
            full({4}, 1.0, gpu(0));
        } catch (const DeviceError& e) {
            if (std::string(e.what()).find("CUDA has shut down because the process is exiting") != std::string::npos) return;
            throw;
        }
        std::fprintf(stderr, "exit_with_work_queued: a GPU tensor was made after CUDA shut down\n");
        std::_Exit(1);
    }
} computes_at_exit;

// Also made before main: a runtime of its own at exit, whose CPU queues come
// and go after the plugin's exit drain has run (they are not registered).
struct NewRuntimeAtExit {
    ~NewRuntimeAtExit() {
        px_runtime* rt = nullptr;
        px_tensor *a = nullptr, *b = nullptr;
        const int64_t shape[] = {2, 2};
        const float v[] = {1, 2, 3, 4};
        float got[4] = {};
        const px_device dev{PX_DEVICE_CPU, 0};
        const bool ok = px_runtime_create(nullptr, &rt) == PX_OK &&
                        px_tensor_from_host(rt, dev, PX_FLOAT32, 2, shape, v, sizeof v, &a) == PX_OK &&
                        px_matmul(a, a, &b) == PX_OK && px_tensor_to_host(b, got, sizeof got) == PX_OK;
        if (!ok) std::fprintf(stderr, "exit_with_work_queued: a new runtime at exit: %s\n", px_last_error());
        px_tensor_release(b);
        px_tensor_release(a);
        if (rt && px_runtime_destroy(rt) != PX_OK) {
            std::fprintf(stderr, "exit_with_work_queued: destroying a runtime at exit: %s\n", px_last_error());
            std::_Exit(1);
        }
        if (!ok || got[0] != 7 || got[1] != 10 || got[2] != 15 || got[3] != 22) {  // [[1,2],[3,4]] squared
            std::fprintf(stderr, "exit_with_work_queued: a product in a new runtime at exit is wrong\n");
            std::_Exit(1);
        }
        // An error at exit has its message (the thread's message string is
        // destroyed by then: a fixed buffer takes over).
        int32_t none = 0;
        if (px_runtime_device_count(nullptr, PX_DEVICE_CPU, &none) == PX_OK ||
            std::string(px_last_error()).find("px_runtime_device_count") == std::string::npos) {
            std::fprintf(stderr, "exit_with_work_queued: an error at exit said '%s'\n", px_last_error());
            std::_Exit(1);
        }
        int32_t gpus = -1;
        px_runtime_create(nullptr, &rt);
        px_runtime_device_count(rt, PX_DEVICE_GPU, &gpus);
        px_runtime_destroy(rt);
        if (gpus != 0) {
            std::fprintf(stderr, "exit_with_work_queued: a runtime made at exit has %d GPUs, not 0\n", int(gpus));
            std::_Exit(1);
        }
    }
} new_runtime_at_exit;

// A GPU tensor in a global, released at exit after CUDA has shut down.
Tensor kept_on_gpu;

// A runtime of the C API made in main, with a tensor and work queued on each
// device it has, released and destroyed at exit by a global that owns them
// (after CUDA has shut down, where there is a GPU): products, copies from
// the host (the CUDA plugin's pinned staging), over two GPUs a sum across
// them, and a process group of one (NCCL communicators both).
struct RuntimeOwnedByGlobal {
    px_runtime* rt = nullptr;
    px_tensor* tensors[3] = {};
    px_group* group = nullptr;
    void make() {
        if (px_runtime_create(nullptr, &rt) != PX_OK) return;
        const px_device devices[] = {{PX_DEVICE_CPU, 0}, {PX_DEVICE_GPU, 0}, {PX_DEVICE_GPU, 1}};
        const int64_t shape[] = {128, 128};
        static float quarter[128 * 128];
        for (float& v : quarter) v = 0.25f;
        for (int i = 0; i < 3; ++i) {
            px_tensor* a = nullptr;
            if (px_tensor_from_host(rt, devices[i], PX_FLOAT32, 2, shape, quarter, sizeof quarter, &a) != PX_OK)
                continue;  // no such GPU
            px_matmul(a, a, &tensors[i]);  // queued, never read
            px_tensor_release(a);
        }
        if (tensors[1] && tensors[2]) px_all_reduce_sum(tensors + 1, 2);
        // A process group of one on gpu(0), with a sum queued: left at exit.
        const px_device gpu0 = devices[1];
        px_group_id id{};
        id.struct_size = sizeof id;
        if (tensors[1] && px_group_make_id(rt, gpu0, &id) == PX_OK &&
            px_group_join(rt, gpu0, &id, 0, 1, 30.0, &group) == PX_OK)
            px_group_all_reduce_sum(group, tensors + 1, 1);
    }
    ~RuntimeOwnedByGlobal() {
        px_group_release(group);  // may report the sum it could not finish
        for (px_tensor* t : tensors) px_tensor_release(t);
        // The runtime goes either way; its wait may report the GPU work it could not finish.
        if (rt && px_runtime_destroy(rt) != PX_OK &&
            std::string(px_last_error()).find("CUDA has shut down because the process is exiting") == std::string::npos) {
            std::fprintf(stderr, "exit_with_work_queued: destroying a runtime at exit: %s\n", px_last_error());
            std::_Exit(1);
        }
    }
} owned_by_global;
}  // namespace

int main() try {
    // What is left on a GPU at exit is by design not freed (after CUDA's
    // shutdown the plugin makes no call; a driver reclaims it), and the
    // emulator, which stands for the driver, would show it as leaked: so
    // with a GPU, this thread's allocations from here on are not leak-checked.
    if (num_gpus() > 0 && __lsan_disable) __lsan_disable();
    const Device devices[] = {cpu(0), cpu(1)};
    for (const Device& d : devices) {
        Tensor a = full({512, 512}, 0.5, d);
        // One product read back: the device computes (the value is 512 * 0.25).
        if (matmul(a, a).max().item<float>() != 128.0f) {
            std::fprintf(stderr, "exit_with_work_queued: a product on %s is wrong\n", d.str().c_str());
            return 1;
        }
        Tensor big = random_normal({1024, 1024}, 0, 1, d);
        for (int i = 0; i < 4; ++i) big = matmul(big, big) * 1e-3;  // queued, never read
    }
    owned_by_global.make();
    if (num_gpus() > 0) {
        kept_on_gpu = full({256, 256}, 0.5, gpu(0));
        Tensor big = random_normal({256, 256}, 0, 1, gpu(0));
        for (int i = 0; i < 4; ++i) big = matmul(big, kept_on_gpu) * 1e-3;  // queued, never read
    }
    return 0;
} catch (const Error& e) {
    std::fprintf(stderr, "exit_with_work_queued: %s\n", e.what());
    return 1;
}
