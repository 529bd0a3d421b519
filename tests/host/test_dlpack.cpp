// DLPack through the C API (plexus.h, "DLPack"): every dtype both ways, in
// both forms; views; any strides on import; ownership and the deleter; the
// wait before an export; every refusal with its status and reason; on the
// CPU plugin, a plugin whose work fails, and the CUDA emulator's GPUs.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "plexus/dlpack.h"
#include "plexus/plexus.h"

#if __has_include(<dlpack/dlpack.h>) && defined(PLEXUS_TEST_SYSTEM_DLPACK)
#define HAVE_SYSTEM_DLPACK 1
#endif

#include "dlpack_support.hpp"

using namespace dlpack_test;

namespace {

template <class T>
void round_trip_one_dtype(px_runtime* rt, px_dtype dtype, DLDataType expected, std::vector<T> v) {
    INFO(px_dtype_name(dtype));
    px_tensor* t = from_values(rt, dtype, v, {2, static_cast<int64_t>(v.size() / 2)});
    // Versioned.
    DLManagedTensorVersioned* m = nullptr;
    REQUIRE(px_tensor_to_dlpack(t, PX_DLPACK_COPY_IF_NEEDED, &m) == PX_OK);
    CHECK(px_last_status() == PX_OK);
    CHECK(m->version.major == 1);
    CHECK(m->version.minor == 1);
    CHECK(m->flags == 0);  // shared (the CPU plugin gives its buffers' addresses), and writable
    CHECK((m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0);
    const DLTensor& d = m->dl_tensor;
    CHECK(d.device.device_type == kDLCPU);
    CHECK(d.device.device_id == 0);
    CHECK(d.ndim == 2);
    CHECK(d.dtype.code == expected.code);
    CHECK(d.dtype.bits == expected.bits);
    CHECK(d.dtype.lanes == 1);
    CHECK(d.shape[0] == 2);
    CHECK(d.shape[1] == static_cast<int64_t>(v.size() / 2));
    CHECK(d.strides[0] == static_cast<int64_t>(v.size() / 2));
    CHECK(d.strides[1] == 1);
    CHECK(d.byte_offset == 0);
    CHECK(reinterpret_cast<uintptr_t>(d.data) % 64 == 0);
    CHECK(std::memcmp(d.data, v.data(), v.size() * sizeof(T)) == 0);
    // And back into Plexus, onto the CPU: the same values; the deleter runs once.
    px_tensor* back = nullptr;
    REQUIRE(px_tensor_from_dlpack(rt, cpu0, m, PX_DLPACK_COPY_IF_NEEDED, &back) == PX_OK);
    px_dtype dt{};
    REQUIRE(px_tensor_dtype(back, &dt) == PX_OK);
    CHECK(dt == dtype);
    CHECK(values<T>(back) == v);
    // Unversioned.
    DLManagedTensor* u = nullptr;
    REQUIRE(px_tensor_to_dlpack_unversioned(t, PX_DLPACK_COPY_ALWAYS, &u) == PX_OK);
    CHECK(u->dl_tensor.dtype.code == expected.code);
    CHECK(u->dl_tensor.dtype.bits == expected.bits);
    CHECK(std::memcmp(u->dl_tensor.data, v.data(), v.size() * sizeof(T)) == 0);
    px_tensor* back2 = nullptr;
    REQUIRE(px_tensor_from_dlpack_unversioned(rt, cpu0, u, PX_DLPACK_COPY_ALWAYS, &back2) == PX_OK);
    CHECK(values<T>(back2) == v);
    px_tensor_release(back2);
    px_tensor_release(back);
    px_tensor_release(t);
}

}  // namespace

TEST_CASE("every Plexus dtype goes out and back through DLPack, versioned and unversioned", "[dlpack]") {
    Rt r;
    round_trip_one_dtype<float>(r.rt, PX_FLOAT32, DLDataType{kDLFloat, 32, 1},
                                {1.5f, -2.25f, 3.0e38f, std::numeric_limits<float>::denorm_min(), -0.0f, 7.0f});
    round_trip_one_dtype<double>(r.rt, PX_FLOAT64, DLDataType{kDLFloat, 64, 1},
                                 {1e-300, -2.5, 1.0 / 3.0, 4.0, std::numeric_limits<double>::infinity(), 6.0});
    round_trip_one_dtype<int32_t>(r.rt, PX_INT32, DLDataType{kDLInt, 32, 1},
                                  {std::numeric_limits<int32_t>::min(), -1, 0, 1, 2, std::numeric_limits<int32_t>::max()});
    round_trip_one_dtype<int64_t>(r.rt, PX_INT64, DLDataType{kDLInt, 64, 1},
                                  {std::numeric_limits<int64_t>::min(), -1, 0, 1, 5000000000LL,
                                   std::numeric_limits<int64_t>::max()});
    round_trip_one_dtype<uint8_t>(r.rt, PX_UINT8, DLDataType{kDLUInt, 8, 1}, {0, 1, 127, 128, 200, 255});
}

TEST_CASE("an exported view carries the view's elements only, and a scalar and an empty tensor go too", "[dlpack]") {
    Rt r;
    std::vector<int32_t> v(24);
    for (int i = 0; i < 24; ++i) v[static_cast<size_t>(i)] = i * 3;
    px_tensor* t = from_values(r.rt, PX_INT32, v, {24});
    px_tensor *shaped = nullptr, *rows = nullptr;
    int64_t shape[3] = {4, 3, 2};
    REQUIRE(px_tensor_reshape(t, 3, shape, &shaped) == PX_OK);
    REQUIRE(px_tensor_slice(shaped, 1, 3, &rows) == PX_OK);  // elements 6..17, at a byte offset in the buffer
    DLManagedTensorVersioned* m = nullptr;
    REQUIRE(px_tensor_to_dlpack(rows, PX_DLPACK_COPY_IF_NEEDED, &m) == PX_OK);
    CHECK(m->dl_tensor.ndim == 3);
    CHECK(m->dl_tensor.shape[0] == 2);
    CHECK(m->dl_tensor.strides[0] == 6);
    CHECK(m->dl_tensor.strides[1] == 2);
    const auto* got = static_cast<const int32_t*>(m->dl_tensor.data);
    for (int i = 0; i < 12; ++i) CHECK(got[i] == (i + 6) * 3);
    m->deleter(m);
    // A scalar: rank 0.
    px_tensor* s = from_values<double>(r.rt, PX_FLOAT64, {2.5}, {});
    DLManagedTensor* u = nullptr;
    REQUIRE(px_tensor_to_dlpack_unversioned(s, PX_DLPACK_COPY_IF_NEEDED, &u) == PX_OK);
    CHECK(u->dl_tensor.ndim == 0);
    CHECK(*static_cast<const double*>(u->dl_tensor.data) == 2.5);
    u->deleter(u);
    // No elements: the data pointer is still not NULL.
    px_tensor* e = nullptr;
    int64_t zero_shape[2] = {0, 3};
    REQUIRE(px_tensor_empty(r.rt, cpu0, PX_FLOAT32, 2, zero_shape, &e) == PX_OK);
    REQUIRE(px_tensor_to_dlpack(e, PX_DLPACK_COPY_IF_NEEDED, &m) == PX_OK);
    CHECK(m->dl_tensor.data != nullptr);
    CHECK(m->dl_tensor.shape[0] == 0);
    px_tensor* e2 = nullptr;
    REQUIRE(px_tensor_from_dlpack(r.rt, cpu0, m, PX_DLPACK_COPY_IF_NEEDED, &e2) == PX_OK);
    int64_t n = -1;
    CHECK(px_tensor_numel(e2, &n) == PX_OK);
    CHECK(n == 0);
    for (px_tensor* x : {t, shaped, rows, s, e, e2}) px_tensor_release(x);
}

TEST_CASE("an import reads any strides and byte offset: transposed, reversed, broadcast, every other element",
          "[dlpack]") {
    Rt r;
    std::vector<float> host(64);
    for (int i = 0; i < 64; ++i) host[static_cast<size_t>(i)] = static_cast<float>(i) + 0.5f;
    struct Case {
        const char* name;
        std::vector<int64_t> shape, strides;
        uint64_t offset;  // bytes
        bool shared;      // compact row-major: the import wraps the producer's memory
    };
    const Case cases[] = {
        {"compact, strides given", {4, 4}, {4, 1}, 0, true},
        {"compact, strides NULL", {4, 4}, {}, 0, true},
        {"transposed", {4, 4}, {1, 4}, 0, false},
        {"every other element", {3, 5}, {10, 2}, 0, false},
        {"reversed rows, at an offset", {3, 4}, {-4, 1}, 32 * sizeof(float), false},
        {"broadcast (stride 0)", {3, 4}, {0, 1}, 4, false},
        {"three axes, all shuffled", {2, 3, 4}, {1, 16, 2}, 4, false},
        {"a size-1 axis with any stride", {1, 4}, {999, 1}, 0, true},
        {"compact at a byte offset", {2, 3}, {}, 8 * sizeof(float), true},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        Produced p(host.data(), DLDataType{kDLFloat, 32, 1}, c.shape, c.strides, c.offset);
        px_tensor* t = nullptr;
        REQUIRE(px_tensor_from_dlpack(r.rt, cpu0, &p.versioned, PX_DLPACK_COPY_IF_NEEDED, &t) == PX_OK);
        CHECK(p.deleted == (c.shared ? 0 : 1));  // a copy hands it back at once, a shared one when released
        // The reference: walk the indices with the strides, independently of the host's gather.
        std::vector<int64_t> st = c.strides;
        if (st.empty()) {
            st.assign(c.shape.size(), 1);
            for (size_t i = c.shape.size() - 1; i > 0; --i) st[i - 1] = st[i] * c.shape[i];
        }
        std::vector<float> want;
        const size_t nd = c.shape.size();
        std::vector<int64_t> idx(nd, 0);
        int64_t total = 1;
        for (int64_t d : c.shape) total *= d;
        for (int64_t k = 0; k < total; ++k) {
            int64_t off = static_cast<int64_t>(c.offset / sizeof(float));
            for (size_t i = 0; i < nd; ++i) off += idx[i] * st[i];
            want.push_back(host[static_cast<size_t>(off)]);
            for (size_t i = nd; i-- > 0;) {
                if (++idx[i] < c.shape[i]) break;
                idx[i] = 0;
            }
        }
        CHECK(values<float>(t) == want);
        int64_t shape_back[PX_MAX_DIMS] = {};
        REQUIRE(px_tensor_shape(t, shape_back, PX_MAX_DIMS) == PX_OK);
        for (size_t i = 0; i < nd; ++i) CHECK(shape_back[i] == c.shape[i]);
        px_tensor_release(t);
        CHECK(p.deleted == 1);
    }
    // Pinned host memory (kDLCUDAHost) is host memory too.
    Produced pinned(host.data(), DLDataType{kDLFloat, 32, 1}, {2}, {}, 0, DLDevice{kDLCUDAHost, 0});
    px_tensor* t = nullptr;
    REQUIRE(px_tensor_from_dlpack_unversioned(r.rt, cpu0, &pinned.plain, PX_DLPACK_COPY_IF_NEEDED, &t) == PX_OK);
    CHECK(values<float>(t) == std::vector<float>{0.5f, 1.5f});
    px_tensor_release(t);
}

TEST_CASE("px_tensor_assign between two imports of the same memory reads the values before it writes",
          "[dlpack][assign]") {
    // Two buffers over the same bytes: a copy between overlapping parts of them had raced, chunk by chunk
    // (wrong elements at the CPU plugin's 32768-element chunk edges).
    Rt r;
    const int64_t n = int64_t(1) << 20;
    std::vector<float> host(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) host[static_cast<size_t>(i)] = static_cast<float>(i);
    std::vector<float> want = host;
    for (int64_t i = n - 1; i > 0; --i) want[static_cast<size_t>(i)] = want[static_cast<size_t>(i - 1)];
    Produced one(host.data(), DLDataType{kDLFloat, 32, 1}, {n}, {}, 0), two(host.data(), DLDataType{kDLFloat, 32, 1},
                                                                             {n}, {}, 0);
    px_tensor *x = nullptr, *y = nullptr, *to = nullptr, *from = nullptr;
    REQUIRE(px_tensor_from_dlpack_unversioned(r.rt, cpu0, &one.plain, PX_DLPACK_COPY_NEVER, &x) == PX_OK);
    REQUIRE(px_tensor_from_dlpack_unversioned(r.rt, cpu0, &two.plain, PX_DLPACK_COPY_NEVER, &y) == PX_OK);
    REQUIRE(px_tensor_slice(x, 1, n, &to) == PX_OK);
    REQUIRE(px_tensor_slice(y, 0, n - 1, &from) == PX_OK);
    REQUIRE(px_tensor_assign(to, from) == PX_OK);
    CHECK(values<float>(x) == want);
    for (px_tensor* t : {x, y, to, from}) px_tensor_release(t);
}

TEST_CASE("what cannot be exchanged is refused with the reason, and a refused import stays the caller's",
          "[dlpack][errors]") {
    Rt r;
    std::vector<float> host(16, 1.0f);
    px_tensor* t = from_values(r.rt, PX_FLOAT32, host, {16});
    px_tensor* out = nullptr;
    DLManagedTensorVersioned* m = nullptr;
    DLManagedTensor* u = nullptr;

    // No copy asked of the CPU plugin (ABI 1.5): shared. (The refusals of
    // COPY_NEVER are in test_dlpack_shared.cpp.)
    REQUIRE(px_tensor_to_dlpack(t, PX_DLPACK_COPY_NEVER, &m) == PX_OK);
    m->deleter(m);
    m = nullptr;
    CHECK(px_tensor_to_dlpack_unversioned(t, 7, &u) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("px_tensor_to_dlpack_unversioned: copy 7 is not PX_DLPACK_COPY_IF_NEEDED (0)"));
    CHECK(u == nullptr);
    CHECK(px_tensor_to_dlpack(t, PX_DLPACK_COPY_IF_NEEDED, nullptr) == PX_ERROR_INVALID_ARGUMENT);

    auto refused = [&](Produced& p, bool versioned, int32_t copy, px_status status, const std::string& why) {
        out = nullptr;
        const px_status s = versioned ? px_tensor_from_dlpack(r.rt, cpu0, &p.versioned, copy, &out)
                                      : px_tensor_from_dlpack_unversioned(r.rt, cpu0, &p.plain, copy, &out);
        CHECK(s == status);
        CHECK(says(why));
        CHECK(out == nullptr);
        CHECK(p.deleted == 0);  // still the caller's
    };
    const DLDataType f32{kDLFloat, 32, 1};
    {
        Produced p(host.data(), f32, {2, 2}, {1, 2});
        refused(p, true, PX_DLPACK_COPY_NEVER, PX_ERROR_UNSUPPORTED,
                "px_tensor_from_dlpack: PX_DLPACK_COPY_NEVER: importing memory onto cpu(0) without a copy: its "
                "strides are not compact row-major, which a Plexus tensor cannot describe; pass "
                "PX_DLPACK_COPY_IF_NEEDED to copy");
        refused(p, false, -1, PX_ERROR_INVALID_ARGUMENT, "px_tensor_from_dlpack_unversioned: copy -1 is not");
    }
    {
        Produced p(host.data(), f32, {4}, {});
        p.versioned.version = DLPackVersion{2, 0};
        refused(p, true, PX_DLPACK_COPY_IF_NEEDED, PX_ERROR_UNSUPPORTED,
                "the tensor is DLPack 2.0; this Plexus reads DLPack 1.x (1.1 and older minors)");
    }
    {
        Produced p(host.data(), f32, {4}, {}, 0, DLDevice{kDLCUDA, 0});
        refused(p, false, PX_DLPACK_COPY_IF_NEEDED, PX_ERROR_UNSUPPORTED,
                "the tensor is on kDLCUDA (2, id 0), which the host cannot read to copy");
    }
    {
        // A device type no DLDeviceType names (read as the enum, undefined behaviour).
        DLDevice unknown{kDLCPU, 0};
        const int32_t ninety_nine = 99;
        std::memcpy(&unknown.device_type, &ninety_nine, sizeof ninety_nine);
        Produced p(host.data(), f32, {4}, {}, 0, unknown);
        refused(p, true, PX_DLPACK_COPY_IF_NEEDED, PX_ERROR_UNSUPPORTED,
                "the tensor is on an unknown device type (99, id 0), which the host cannot read to copy");
    }
    // No elements: nothing to share or read, on any device (kDLCUDA had been refused).
    for (const int32_t type : {int32_t(kDLCUDA), int32_t(kDLOpenCL), 99}) {
        for (const int32_t copy : {PX_DLPACK_COPY_IF_NEEDED, PX_DLPACK_COPY_NEVER}) {
            DLDevice where_it_is{kDLCPU, 0};
            std::memcpy(&where_it_is.device_type, &type, sizeof type);
            Produced p(nullptr, f32, {3, 0}, {}, 0, where_it_is);
            out = nullptr;
            CAPTURE(type, copy);
            REQUIRE(px_tensor_from_dlpack(r.rt, cpu0, &p.versioned, copy, &out) == PX_OK);
            int64_t dims[2] = {-1, -1};
            REQUIRE(px_tensor_shape(out, dims, 2) == PX_OK);
            CHECK((dims[0] == 3 && dims[1] == 0));
            CHECK(p.deleted == 1);  // a copy (of nothing) hands it back at once
            px_tensor_release(out);
        }
    }
    const std::pair<DLDataType, const char*> bad_types[] = {
        {DLDataType{kDLBool, 8, 1}, "DLPack dtype bool8 (code 6) has no Plexus dtype"},
        {DLDataType{kDLFloat, 8, 1}, "DLPack dtype float8 (code 2) has no Plexus dtype"},
        {DLDataType{kDLBfloat, 32, 1}, "DLPack dtype bfloat32 (code 4) has no Plexus dtype"},
        {DLDataType{kDLFloat, 32, 4}, "DLPack dtype float32 x4 lanes (code 2)"},
        {DLDataType{kDLComplex, 64, 1}, "complex64"},
        {DLDataType{kDLUInt, 16, 1}, "uint16"},
    };
    for (auto [type, why] : bad_types) {
        Produced p(host.data(), type, {4}, {});
        refused(p, true, PX_DLPACK_COPY_IF_NEEDED, PX_ERROR_DTYPE, why);
    }
    {
        Produced p(host.data(), f32, std::vector<int64_t>(9, 1), {});
        refused(p, true, PX_DLPACK_COPY_IF_NEEDED, PX_ERROR_SHAPE, "the tensor's rank 9 is outside 0..8");
    }
    {
        Produced p(host.data(), f32, {2, -3}, {});
        refused(p, true, PX_DLPACK_COPY_IF_NEEDED, PX_ERROR_SHAPE, "the tensor's shape");
    }
    {
        Produced p(host.data(), f32, {2}, {});
        p.versioned.dl_tensor.shape = nullptr;
        refused(p, true, PX_DLPACK_COPY_IF_NEEDED, PX_ERROR_INVALID_ARGUMENT, "the tensor's shape is NULL for rank 1");
    }
    {
        Produced p(nullptr, f32, {2}, {});
        refused(p, false, PX_DLPACK_COPY_IF_NEEDED, PX_ERROR_INVALID_ARGUMENT, "the tensor's data is NULL for 2 elements");
    }
    {
        Produced p(host.data(), f32, {3, 2}, {int64_t(1) << 62, 1});
        refused(p, true, PX_DLPACK_COPY_IF_NEEDED, PX_ERROR_SHAPE, "stride 4611686018427387904 of axis 0 overflows 64 bits");
    }
    {
        Produced p(host.data(), f32, {2}, {});
        out = nullptr;
        CHECK(px_tensor_from_dlpack(r.rt, px_device{PX_DEVICE_GPU, 5}, &p.versioned, 0, &out) == PX_ERROR_NO_DEVICE);
        CHECK(p.deleted == 0);
        CHECK(px_tensor_from_dlpack(r.rt, cpu0, nullptr, 0, &out) == PX_ERROR_INVALID_ARGUMENT);
        CHECK(says("px_tensor_from_dlpack: 'in' is NULL"));
        CHECK(px_tensor_from_dlpack_unversioned(r.rt, cpu0, &p.plain, 0, nullptr) == PX_ERROR_INVALID_ARGUMENT);
        CHECK(p.deleted == 0);
    }
    int32_t type = 0, id = 0;
    CHECK(px_tensor_dlpack_device(t, nullptr, &id) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("'device_type' is NULL"));
    CHECK(px_tensor_dlpack_device(t, &type, nullptr) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("'device_id' is NULL"));
    px_tensor_release(t);
}

TEST_CASE("a tensor Plexus exported comes back as a view of the same buffer, its writes counted together",
          "[dlpack]") {
    Rt r;
    std::vector<float> host{1, 2, 3, 4, 5, 6};
    px_tensor* t = from_values(r.rt, PX_FLOAT32, host, {6});
    px_tensor *row = nullptr, *back_row = nullptr, *nines = nullptr;
    REQUIRE(px_tensor_slice(t, 2, 5, &row) == PX_OK);  // a view at an offset
    for (const bool versioned : {true, false}) {
        CAPTURE(versioned);
        DLManagedTensorVersioned* m = nullptr;
        DLManagedTensor* u = nullptr;
        if (versioned) {
            REQUIRE(px_tensor_to_dlpack(row, PX_DLPACK_COPY_NEVER, &m) == PX_OK);
            REQUIRE(px_tensor_from_dlpack(r.rt, cpu0, m, PX_DLPACK_COPY_NEVER, &back_row) == PX_OK);
        } else {
            REQUIRE(px_tensor_to_dlpack_unversioned(row, PX_DLPACK_COPY_IF_NEEDED, &u) == PX_OK);
            REQUIRE(px_tensor_from_dlpack_unversioned(r.rt, cpu0, u, PX_DLPACK_COPY_NEVER, &back_row) == PX_OK);
        }
        uint64_t before = 0, after = 0;
        REQUIRE(px_tensor_version(t, &before) == PX_OK);
        const int64_t three = 3;
        REQUIRE(px_tensor_full(r.rt, cpu0, PX_FLOAT32, 1, &three, 9.0, &nines) == PX_OK);
        REQUIRE(px_tensor_assign(back_row, nines) == PX_OK);  // through the import
        REQUIRE(px_tensor_version(t, &after) == PX_OK);
        CHECK(after == before + 1);  // it had its own buffer, and autograd missed the write
        float v[6];
        REQUIRE(px_tensor_to_host(t, v, sizeof v) == PX_OK);
        CHECK(std::vector<float>(v, v + 6) == std::vector<float>{1, 2, 9, 9, 9, 6});
        px_tensor_release(back_row);
        px_tensor_release(nines);
        back_row = nines = nullptr;
    }
    for (px_tensor* h : {t, row}) px_tensor_release(h);
}

TEST_CASE("a DLPack tensor outlives the runtime and the tensor it came from, and an import outlives its producer",
          "[dlpack][lifetime]") {
    DLManagedTensorVersioned* m = nullptr;
    DLManagedTensor* u = nullptr;
    px_tensor* imported = nullptr;
    Produced* producer = nullptr;
    std::vector<double> want{1, 2, 3, 4, 5, 6};
    {
        Rt r;
        px_tensor* t = from_values(r.rt, PX_FLOAT64, want, {3, 2});
        px_tensor* doubled = nullptr;
        REQUIRE(px_binary_scalar(PX_OP_MUL, t, 2.0, 0, &doubled) == PX_OK);
        REQUIRE(px_tensor_to_dlpack(doubled, PX_DLPACK_COPY_IF_NEEDED, &m) == PX_OK);
        REQUIRE(px_tensor_to_dlpack_unversioned(t, PX_DLPACK_COPY_IF_NEEDED, &u) == PX_OK);
        px_tensor_release(t);  // the producer's tensors go first
        px_tensor_release(doubled);
        // The import shares the producer's memory, which its deleter frees when the
        // last tensor using it is released, after the runtime is gone.
        auto* heap = new std::vector<double>(want);
        auto* p = new Produced(heap->data(), DLDataType{kDLFloat, 64, 1}, {6}, {});
        p->plain.manager_ctx = heap;
        p->plain.deleter = [](DLManagedTensor* self) { delete static_cast<std::vector<double>*>(self->manager_ctx); };
        REQUIRE(px_tensor_from_dlpack_unversioned(r.rt, cpu0, &p->plain, 0, &imported) == PX_OK);
        producer = p;
        CHECK(values<double>(imported) == want);
    }  // the runtime is destroyed here
    // Read after the runtime is gone (ASan would see a use after free), then delete.
    const auto* d = static_cast<const double*>(m->dl_tensor.data);
    for (size_t i = 0; i < want.size(); ++i) CHECK(d[i] == want[i] * 2);
    const auto* e = static_cast<const double*>(u->dl_tensor.data);
    for (size_t i = 0; i < want.size(); ++i) CHECK(e[i] == want[i]);
    m->deleter(m);
    u->deleter(u);
    CHECK(values<double>(imported) == want);  // tensors outlive their runtime too
    CHECK(px_tensor_release(imported) == PX_OK);  // runs the producer's deleter (ASan: the vector is freed once)
    delete producer;
}

TEST_CASE("an export waits for the work that makes its tensor, and reports that work's failure", "[dlpack]") {
    {
        Rt r;
        // A product that takes the CPU device a while: queued, not yet run, when the export starts.
        px_tensor *a = nullptr, *p = nullptr;
        int64_t shape[2] = {384, 384};
        REQUIRE(px_tensor_full(r.rt, cpu0, PX_FLOAT32, 2, shape, 0.5, &a) == PX_OK);
        REQUIRE(px_matmul(a, a, &p) == PX_OK);
        DLManagedTensor* u = nullptr;
        REQUIRE(px_tensor_to_dlpack_unversioned(p, PX_DLPACK_COPY_IF_NEEDED, &u) == PX_OK);
        const auto* v = static_cast<const float*>(u->dl_tensor.data);
        CHECK(v[0] == 96.0f);  // 384 * 0.25
        CHECK(v[384 * 384 - 1] == 96.0f);
        u->deleter(u);
        px_tensor_release(p);
        px_tensor_release(a);
    }
    {
        Rt r({PLEXUS_FAULT_PLUGIN_DIR "/libfault-async.so"});
        const px_device accel0{PX_DEVICE_ACCELERATOR, 0};
        px_tensor* t = nullptr;
        int64_t n = 2;
        REQUIRE(px_tensor_full(r.rt, accel0, PX_FLOAT32, 1, &n, 1.0, &t) == PX_OK);
        DLManagedTensorVersioned* m = nullptr;
        CHECK(px_tensor_to_dlpack(t, PX_DLPACK_COPY_IF_NEEDED, &m) == PX_ERROR_DEVICE);
        CHECK(says("px_tensor_to_dlpack: "));
        CHECK(says("simulated asynchronous failure"));
        CHECK(m == nullptr);
        int32_t type = 0, id = -1;
        REQUIRE(px_tensor_dlpack_device(t, &type, &id) == PX_OK);
        CHECK(type == kDLExtDev);
        CHECK(id == 0);
        px_tensor_release(t);
    }
}

TEST_CASE("__dlpack_device__'s answer: cpu(i) is (kDLCPU, 0)", "[dlpack]") {
    Rt r;
    px_tensor* t = from_values<float>(r.rt, PX_FLOAT32, {1}, {1});
    int32_t type = 0, id = -1;
    REQUIRE(px_tensor_dlpack_device(t, &type, &id) == PX_OK);
    CHECK(type == kDLCPU);
    CHECK(id == 0);
    px_tensor_release(t);
}

#ifdef PLEXUS_CUDA_EMU_PLUGIN_FILE
TEST_CASE("on the CUDA emulator's GPUs: (kDLCUDA, ordinal), values out and in, and the wait for the stream",
          "[dlpack][emulator]") {
    Rt r({PLEXUS_CPU_PLUGIN_FILE, PLEXUS_CUDA_EMU_PLUGIN_FILE});
    int32_t gpus = 0;
    REQUIRE(px_runtime_device_count(r.rt, PX_DEVICE_GPU, &gpus) == PX_OK);
    REQUIRE(gpus >= 2);
    const px_device gpu1{PX_DEVICE_GPU, 1};
    std::vector<int64_t> v{1, -2, 3, -4, 5, -6};
    px_tensor* t = from_values(r.rt, PX_INT64, v, {2, 3}, gpu1);
    int32_t type = 0, id = -1;
    REQUIRE(px_tensor_dlpack_device(t, &type, &id) == PX_OK);
    CHECK(type == kDLCUDA);
    CHECK(id == 1);
    // Work queued on the emulated stream (which runs it only when waited for):
    // the export must wait for it.
    px_tensor* neg = nullptr;
    REQUIRE(px_unary(PX_OP_NEG, t, &neg) == PX_OK);
    DLManagedTensorVersioned* m = nullptr;
    REQUIRE(px_tensor_to_dlpack(neg, PX_DLPACK_COPY_ALWAYS, &m) == PX_OK);
    CHECK(m->dl_tensor.device.device_type == kDLCPU);  // a host copy
    CHECK(m->flags == DLPACK_FLAG_BITMASK_IS_COPIED);
    const auto* got = static_cast<const int64_t*>(m->dl_tensor.data);
    for (size_t i = 0; i < v.size(); ++i) CHECK(got[i] == -v[i]);
    // Imported onto a GPU.
    px_tensor* back = nullptr;
    REQUIRE(px_tensor_from_dlpack(r.rt, gpu1, m, PX_DLPACK_COPY_IF_NEEDED, &back) == PX_OK);
    px_device where{};
    REQUIRE(px_tensor_device(back, &where) == PX_OK);
    CHECK(where.kind == PX_DEVICE_GPU);
    CHECK(where.index == 1);
    std::vector<int64_t> want(v.size());
    for (size_t i = 0; i < v.size(); ++i) want[i] = -v[i];
    CHECK(values<int64_t>(back) == want);
    for (px_tensor* x : {t, neg, back}) px_tensor_release(x);
}
#endif

#ifdef HAVE_SYSTEM_DLPACK
// Debian's libdlpack-dev (DLPack 0.x), in a namespace of its own: our
// structs must have its layout and numbers, field by field.
#undef DLPACK_DLPACK_H_
#undef DLPACK_MAJOR_VERSION
#undef DLPACK_MINOR_VERSION
#undef DLPACK_VERSION
#undef DLPACK_ABI_VERSION
#undef DLPACK_EXTERN_C
#undef DLPACK_DLL
namespace system_dlpack {
#include <dlpack/dlpack.h>
}
#define SAME_FIELD(S, f) CHECK(offsetof(::S, f) == offsetof(system_dlpack::S, f))
TEST_CASE("plexus/dlpack.h has the layout and numbers of the system's DLPack header", "[dlpack]") {
    CHECK(sizeof(::DLDevice) == sizeof(system_dlpack::DLDevice));
    CHECK(sizeof(::DLDataType) == sizeof(system_dlpack::DLDataType));
    CHECK(sizeof(::DLTensor) == sizeof(system_dlpack::DLTensor));
    CHECK(sizeof(::DLManagedTensor) == sizeof(system_dlpack::DLManagedTensor));
    SAME_FIELD(DLTensor, data);
    SAME_FIELD(DLTensor, device);
    SAME_FIELD(DLTensor, ndim);
    SAME_FIELD(DLTensor, dtype);
    SAME_FIELD(DLTensor, shape);
    SAME_FIELD(DLTensor, strides);
    SAME_FIELD(DLTensor, byte_offset);
    SAME_FIELD(DLManagedTensor, dl_tensor);
    SAME_FIELD(DLManagedTensor, manager_ctx);
    SAME_FIELD(DLManagedTensor, deleter);
    SAME_FIELD(DLDataType, code);
    SAME_FIELD(DLDataType, bits);
    SAME_FIELD(DLDataType, lanes);
    CHECK(int(::kDLCPU) == int(system_dlpack::kDLCPU));
    CHECK(int(::kDLCUDA) == int(system_dlpack::kDLCUDA));
    CHECK(int(::kDLCUDAHost) == int(system_dlpack::kDLCUDAHost));
    CHECK(int(::kDLExtDev) == int(system_dlpack::kDLExtDev));
    CHECK(int(::kDLROCM) == int(system_dlpack::kDLROCM));
    CHECK(int(::kDLInt) == int(system_dlpack::kDLInt));
    CHECK(int(::kDLUInt) == int(system_dlpack::kDLUInt));
    CHECK(int(::kDLFloat) == int(system_dlpack::kDLFloat));
    CHECK(int(::kDLBfloat) == int(system_dlpack::kDLBfloat));
}
#endif
