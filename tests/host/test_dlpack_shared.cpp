// DLPack without a copy (plugin ABI 1.5's buffer_memory and buffer_wrap):
// an export is the tensor's own memory and an import wraps the producer's,
// with writes visible both ways; lifetimes (the consumer outlives the tensor
// and the runtime; the producer's deleter runs once, when the last tensor
// using it goes); what is copied instead (read-only, misaligned, strides
// Plexus cannot describe) and COPY_NEVER's refusal of it; a plugin of ABI 1.4
// falling back to copies; the CUDA emulator's device pointers.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dlpack_support.hpp"

using namespace dlpack_test;

namespace {

const DLDataType f32{kDLFloat, 32, 1};

// The address a fresh export of `t` shares (the tensor's own memory).
void* shared_address(px_tensor* t) {
    DLManagedTensor* u = nullptr;
    REQUIRE(px_tensor_to_dlpack_unversioned(t, PX_DLPACK_COPY_NEVER, &u) == PX_OK);
    void* p = u->dl_tensor.data;
    u->deleter(u);
    return p;
}

}  // namespace

TEST_CASE("an export shares the tensor's memory: the same address and writes visible both ways and views at their offset",
          "[dlpack][shared]") {
    Rt r;
    std::vector<float> v{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    px_tensor* t = from_values(r.rt, PX_FLOAT32, v, {4, 3});
    DLManagedTensorVersioned* m = nullptr;
    REQUIRE(px_tensor_to_dlpack(t, PX_DLPACK_COPY_NEVER, &m) == PX_OK);
    CHECK(m->flags == 0);  // neither copied nor read-only
    CHECK(m->dl_tensor.byte_offset == 0);
    CHECK(m->dl_tensor.data == shared_address(t));  // every export: the same memory
    auto* d = static_cast<float*>(m->dl_tensor.data);
    d[4] = 40.0f;  // the consumer writes; Plexus reads it
    std::vector<float> want = v;
    want[4] = 40.0f;
    CHECK(values<float>(t) == want);
    // Plexus writes in place (an SGD step on the tensor); the consumer reads it.
    px_tensor* grad = from_values(r.rt, PX_FLOAT32, std::vector<float>(12, 1.0f), {4, 3});
    REQUIRE(px_sgd_update(t, grad, nullptr, 0.5, 0.0, 0.0, 1.0) == PX_OK);
    DLManagedTensor* again = nullptr;
    REQUIRE(px_tensor_to_dlpack_unversioned(t, PX_DLPACK_COPY_IF_NEEDED, &again) == PX_OK);  // waits for the step
    CHECK(d[0] == -0.5f);
    CHECK(d[4] == 39.5f);
    again->deleter(again);
    // A view (rows 1..2): data is the view's first element, byte_offset 0.
    px_tensor* rows = nullptr;
    REQUIRE(px_tensor_slice(t, 1, 3, &rows) == PX_OK);
    DLManagedTensor* u = nullptr;
    REQUIRE(px_tensor_to_dlpack_unversioned(rows, PX_DLPACK_COPY_NEVER, &u) == PX_OK);
    CHECK(u->dl_tensor.data == static_cast<void*>(d + 3));
    CHECK(u->dl_tensor.byte_offset == 0);
    CHECK(u->dl_tensor.shape[0] == 2);
    CHECK(u->dl_tensor.strides[0] == 3);
    CHECK(u->dl_tensor.strides[1] == 1);
    u->deleter(u);
    // COPY_ALWAYS still copies.
    DLManagedTensorVersioned* c = nullptr;
    REQUIRE(px_tensor_to_dlpack(t, PX_DLPACK_COPY_ALWAYS, &c) == PX_OK);
    CHECK(c->flags == DLPACK_FLAG_BITMASK_IS_COPIED);
    CHECK(c->dl_tensor.data != m->dl_tensor.data);
    c->deleter(c);
    m->deleter(m);
    for (px_tensor* x : {t, grad, rows}) px_tensor_release(x);
}

TEST_CASE("a shared export outlives its tensor and its runtime and the buffer goes with the last deleter",
          "[dlpack][shared][lifetime]") {
    DLManagedTensorVersioned* m = nullptr;
    DLManagedTensor* u = nullptr;
    {
        Rt r;
        px_tensor* t = from_values<int64_t>(r.rt, PX_INT64, {1, 2, 3, 4}, {4});
        px_tensor* view = nullptr;
        REQUIRE(px_tensor_slice(t, 2, 4, &view) == PX_OK);
        REQUIRE(px_tensor_to_dlpack(t, PX_DLPACK_COPY_NEVER, &m) == PX_OK);
        REQUIRE(px_tensor_to_dlpack_unversioned(view, PX_DLPACK_COPY_NEVER, &u) == PX_OK);
        px_tensor_release(view);
        px_tensor_release(t);
    }  // the runtime is destroyed; the CPU plugin's context lives on in the buffer
    auto* d = static_cast<int64_t*>(m->dl_tensor.data);
    CHECK(d[3] == 4);
    d[3] = 44;  // still memory of the (live) buffer: ASan would object otherwise
    CHECK(static_cast<int64_t*>(u->dl_tensor.data)[1] == 44);
    m->deleter(m);
    CHECK(static_cast<int64_t*>(u->dl_tensor.data)[0] == 3);  // the other export keeps the buffer
    u->deleter(u);  // the buffer is freed, and the plugin with it
}

TEST_CASE("an import wraps the producer's memory: writes visible both ways and the deleter runs once at the last release",
          "[dlpack][shared][lifetime]") {
    std::vector<float> host{1, 2, 3, 4, 5, 6, 7, 8};
    Produced p(host.data(), f32, {2, 4}, {});
    px_tensor* t = nullptr;
    px_tensor* half = nullptr;
    {
        Rt r;
        REQUIRE(px_tensor_from_dlpack(r.rt, cpu0, &p.versioned, PX_DLPACK_COPY_NEVER, &t) == PX_OK);
        CHECK(p.deleted == 0);
        CHECK(shared_address(t) == host.data());  // the producer's own memory goes back out
        host[0] = 10;                             // the producer writes; Plexus reads it
        CHECK(values<float>(t)[0] == 10.0f);
        px_tensor* grad = from_values(r.rt, PX_FLOAT32, std::vector<float>(8, 2.0f), {2, 4});
        REQUIRE(px_sgd_update(t, grad, nullptr, 1.0, 0.0, 0.0, 1.0) == PX_OK);  // Plexus writes in place
        CHECK(values<float>(t)[1] == 0.0f);  // (waits for the step)
        CHECK(host[1] == 0.0f);
        CHECK(host[0] == 8.0f);
        REQUIRE(px_tensor_slice(t, 1, 2, &half) == PX_OK);  // a view keeps the buffer
        px_tensor_release(grad);
        px_tensor_release(t);
        CHECK(p.deleted == 0);
    }  // the runtime goes first
    CHECK(values<float>(half) == std::vector<float>{3, 4, 5, 6});
    CHECK(p.deleted == 0);
    px_tensor_release(half);
    CHECK(p.deleted == 1);  // exactly once, when the last tensor using it went
}

TEST_CASE("read-only and misaligned or non-compact producers are copied and COPY_NEVER says why", "[dlpack][shared][errors]") {
    Rt r;
    std::vector<float> host(16, 1.0f);
    auto refused = [&](Produced& p, const std::string& why, bool aligned = true) {
        px_tensor* out = nullptr;
        CHECK(px_tensor_from_dlpack(r.rt, cpu0, &p.versioned, PX_DLPACK_COPY_NEVER, &out) == PX_ERROR_UNSUPPORTED);
        CHECK(says("px_tensor_from_dlpack: PX_DLPACK_COPY_NEVER: importing memory onto cpu(0) without a copy: " + why));
        CHECK(says("; pass PX_DLPACK_COPY_IF_NEEDED to copy"));
        CHECK(out == nullptr);
        CHECK(p.deleted == 0);
        // The default copies: the deleter runs at once, and the producer's later writes do not travel.
        REQUIRE(px_tensor_from_dlpack(r.rt, cpu0, &p.versioned, PX_DLPACK_COPY_IF_NEEDED, &out) == PX_OK);
        CHECK(p.deleted == 1);
        const std::vector<float> before = values<float>(out);
        CHECK(before.size() == 4);
        if (aligned) CHECK(before[0] == 1.0f);
        host[1] = 99.0f;
        CHECK(values<float>(out) == before);
        host[1] = 1.0f;
        px_tensor_release(out);
    };
    {  // Read-only (DLPack 1.x): a Plexus tensor may be written (px_sgd_update), so it is copied.
        Produced p(host.data(), f32, {4}, {});
        p.versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
        refused(p, "the tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY), and a Plexus tensor may be written");
    }
    {  // Not aligned to the dtype.
        Produced p(host.data(), f32, {4}, {}, 2);
        refused(p, "data + byte_offset is not aligned to the 4 bytes of float32", false);
    }
    {  // Transposed.
        Produced p(host.data(), f32, {2, 2}, {1, 2});
        refused(p, "its strides are not compact row-major, which a Plexus tensor cannot describe");
    }
    {  // Reversed (negative strides).
        Produced p(host.data(), f32, {4}, {-1}, 3 * sizeof(float));
        refused(p, "its strides are not compact row-major");
    }
    {  // No elements: nothing to share, so never refused.
        Produced p(host.data(), f32, {0, 4}, {});
        px_tensor* out = nullptr;
        REQUIRE(px_tensor_from_dlpack(r.rt, cpu0, &p.versioned, PX_DLPACK_COPY_NEVER, &out) == PX_OK);
        CHECK(p.deleted == 1);
        px_tensor_release(out);
    }
}

TEST_CASE("an import that fails after its memory was wrapped leaves the producer's tensor with the caller",
          "[dlpack][shared][errors]") {
    REQUIRE(setenv("PLEXUS_MAX_LIVE_TENSORS", "1", 1) == 0);
    {
        Rt r;  // read at creation: one live tensor handle in the process, which `one` (or another) takes
        std::vector<float> host(4, 1.0f);
        px_tensor* one = nullptr;
        const int64_t n = 4;
        static_cast<void>(px_tensor_from_host(r.rt, cpu0, PX_FLOAT32, 1, &n, host.data(), 16, &one));
        Produced p(host.data(), f32, {4}, {});
        px_tensor* out = nullptr;
        CHECK(px_tensor_from_dlpack(r.rt, cpu0, &p.versioned, PX_DLPACK_COPY_NEVER, &out) == PX_ERROR_OUT_OF_MEMORY);
        CHECK(out == nullptr);
        CHECK(p.deleted == 0);  // the wrapped buffer was freed without handing the tensor back
        if (one) px_tensor_release(one);
    }
    REQUIRE(unsetenv("PLEXUS_MAX_LIVE_TENSORS") == 0);
    Rt reset;  // back to the table's capacity
}

TEST_CASE("a plugin of ABI 1.4 (no buffer_memory and no buffer_wrap) copies and COPY_NEVER names it and the slot",
          "[dlpack][shared][errors]") {
    Rt r({PLEXUS_CPU_ABI_1_4_PLUGIN_FILE});
    px_plugin_info info{};
    info.struct_size = sizeof info;
    REQUIRE(px_runtime_plugin_info(r.rt, 0, &info) == PX_OK);
    REQUIRE(std::string(info.name) == "cpu-abi-1.4");
    CHECK(info.abi_minor == 4);
    px_tensor* t = from_values<int32_t>(r.rt, PX_INT32, {5, 6, 7}, {3});
    DLManagedTensorVersioned* m = nullptr;
    CHECK(px_tensor_to_dlpack(t, PX_DLPACK_COPY_NEVER, &m) == PX_ERROR_UNSUPPORTED);
    CHECK(says("px_tensor_to_dlpack: PX_DLPACK_COPY_NEVER: sharing the memory of a tensor on cpu(0) without a copy: "
               "its plugin 'cpu-abi-1.4' (plugin ABI 1.4) lacks the slot buffer_memory (plugin ABI 1.5), which gives "
               "a buffer's address; the plugin was built before 1.5; pass PX_DLPACK_COPY_IF_NEEDED to copy"));
    CHECK(m == nullptr);
    REQUIRE(px_tensor_to_dlpack(t, PX_DLPACK_COPY_IF_NEEDED, &m) == PX_OK);
    CHECK(m->flags == DLPACK_FLAG_BITMASK_IS_COPIED);
    CHECK(static_cast<int32_t*>(m->dl_tensor.data)[2] == 7);
    std::vector<int32_t> host{1, 2, 3};
    Produced p(host.data(), DLDataType{kDLInt, 32, 1}, {3}, {});
    px_tensor* out = nullptr;
    CHECK(px_tensor_from_dlpack_unversioned(r.rt, cpu0, &p.plain, PX_DLPACK_COPY_NEVER, &out) == PX_ERROR_UNSUPPORTED);
    CHECK(says("importing memory onto cpu(0) without a copy: its plugin 'cpu-abi-1.4' (plugin ABI 1.4) lacks the slot "
               "buffer_wrap (plugin ABI 1.5), which takes memory the plugin did not allocate"));
    CHECK(p.deleted == 0);
    REQUIRE(px_tensor_from_dlpack_unversioned(r.rt, cpu0, &p.plain, PX_DLPACK_COPY_IF_NEEDED, &out) == PX_OK);
    CHECK(p.deleted == 1);  // copied: handed back at once
    CHECK(values<int32_t>(out) == host);
    m->deleter(m);
    px_tensor_release(out);
    px_tensor_release(t);
}

#ifdef PLEXUS_CUDA_EMU_PLUGIN_FILE
TEST_CASE("on the CUDA emulator: a GPU tensor goes out as its device pointer and comes back onto its GPU sharing it"
          "", "[dlpack][shared][emulator]") {
    Rt r({PLEXUS_CPU_PLUGIN_FILE, PLEXUS_CUDA_EMU_PLUGIN_FILE});
    const px_device gpu0{PX_DEVICE_GPU, 0}, gpu1{PX_DEVICE_GPU, 1};
    std::vector<double> v{1, 2, 3, 4, 5, 6};
    px_tensor* t = from_values(r.rt, PX_FLOAT64, v, {2, 3}, gpu1);
    px_tensor* twice = nullptr;
    REQUIRE(px_binary_scalar(PX_OP_MUL, t, 2.0, 0, &twice) == PX_OK);  // queued on the emulated stream
    DLManagedTensorVersioned* m = nullptr;
    REQUIRE(px_tensor_to_dlpack(twice, PX_DLPACK_COPY_NEVER, &m) == PX_OK);  // waits for the product
    CHECK(m->dl_tensor.device.device_type == kDLCUDA);
    CHECK(m->dl_tensor.device.device_id == 1);
    CHECK(m->flags == 0);
    void* address = m->dl_tensor.data;
    // Onto the same GPU: wrapped, the same device pointer.
    px_tensor* back = nullptr;
    REQUIRE(px_tensor_from_dlpack(r.rt, gpu1, m, PX_DLPACK_COPY_NEVER, &back) == PX_OK);
    CHECK(shared_address(back) == address);
    CHECK(values<double>(back) == std::vector<double>{2, 4, 6, 8, 10, 12});
    // Written by Plexus through the wrapped buffer, seen in the tensor it came from.
    px_tensor* grad = from_values(r.rt, PX_FLOAT64, std::vector<double>(6, 1.0), {2, 3}, gpu1);
    REQUIRE(px_sgd_update(back, grad, nullptr, 1.0, 0.0, 0.0, 1.0) == PX_OK);
    CHECK(values<double>(twice) == std::vector<double>{1, 3, 5, 7, 9, 11});
    // Another GPU's memory is not shared onto gpu(0), and the host cannot copy it.
    DLManagedTensor* u = nullptr;
    REQUIRE(px_tensor_to_dlpack_unversioned(twice, PX_DLPACK_COPY_NEVER, &u) == PX_OK);
    px_tensor* other = nullptr;
    CHECK(px_tensor_from_dlpack_unversioned(r.rt, gpu0, u, PX_DLPACK_COPY_NEVER, &other) == PX_ERROR_UNSUPPORTED);
    CHECK(says("importing memory onto gpu(0) without a copy: its plugin 'cuda' does not take this memory: memory of "
               "kind 2 on device 1 is not CUDA memory (PX_MEMORY_CUDA) of CUDA device 0; nor can it be copied (the host "
               "cannot read GPU memory): give compact row-major memory (e.g. x.contiguous() in PyTorch)"));
    CHECK(px_tensor_from_dlpack_unversioned(r.rt, gpu0, u, PX_DLPACK_COPY_IF_NEEDED, &other) == PX_ERROR_UNSUPPORTED);
    CHECK(says("which the host cannot read to copy"));
    CHECK(says("(not shared onto gpu(0): its plugin 'cuda' does not take this memory"));
    // Nor onto the CPU.
    CHECK(px_tensor_from_dlpack_unversioned(r.rt, cpu0, u, PX_DLPACK_COPY_IF_NEEDED, &other) == PX_ERROR_UNSUPPORTED);
    CHECK(says("(not shared onto cpu(0): its plugin 'cpu' does not take this memory: memory of kind 2"));
    u->deleter(u);
    // The wrapped buffer keeps the exported one: released last, after the runtime goes.
    for (px_tensor* x : {t, twice, grad}) px_tensor_release(x);
    CHECK(values<double>(back) == std::vector<double>{1, 3, 5, 7, 9, 11});
    px_tensor_release(back);
}
#endif
