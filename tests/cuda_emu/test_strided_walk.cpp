// The CUDA plugin's strided walk (plugins/cuda/kernel_util.cuh), run on the
// host: a walk of fewer than 2^31 elements divides its 32-bit indices by
// multiplying; every offset must be the one the 64-bit division gives.
// (No test tensor reaches 2^31 elements, so the conformance suite runs only
// the 32-bit path; this holds it to the other.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

#include "kernel_util.cuh"

using pxcuda::Operand;

TEST_CASE("the strided walk's 32-bit offsets by multiplication equal its 64-bit ones", "[walk]") {
    uint64_t state = 88172645463325252ull;
    auto next = [&](uint64_t m) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        return int64_t(state % m);
    };
    int64_t visited = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const int nd = 1 + int(next(PX_MAX_DIMS));
        Operand out, permuted, broadcast;
        out.ndim = permuted.ndim = broadcast.ndim = nd;
        for (int d = 0; d < nd; ++d) out.shape[d] = permuted.shape[d] = broadcast.shape[d] = 1 + next(nd > 4 ? 4 : 9);
        // out contiguous; permuted: contiguous in a random order of its axes;
        // broadcast: some axes repeated (stride 0), the rest contiguous.
        int64_t s = 1;
        for (int d = nd - 1; d >= 0; --d) out.strides[d] = s, s *= out.shape[d];
        std::vector<int> order(static_cast<size_t>(nd));
        std::iota(order.begin(), order.end(), 0);
        for (int d = nd - 1; d > 0; --d) std::swap(order[size_t(d)], order[size_t(next(uint64_t(d) + 1))]);
        s = 1;
        for (int d : order) permuted.strides[d] = s, s *= permuted.shape[d];
        s = 1;
        for (int d = nd - 1; d >= 0; --d) {
            broadcast.strides[d] = next(3) == 0 ? 0 : s;
            s *= broadcast.shape[d];
        }
        const Operand* ops[3] = {&out, &permuted, &broadcast};
        const pxcuda::Strided<3> narrow = pxcuda::make_strided<3>(ops);
        REQUIRE(narrow.narrow);
        pxcuda::Strided<3> wide = narrow;
        wide.narrow = false;
        const int64_t n = out.numel();
        for (int64_t i = 0; i < n; ++i) {
            int64_t a[3], b[3];
            narrow.offsets(i, a);
            wide.offsets(i, b);
            if (!std::equal(a, a + 3, b)) {
                INFO("trial " << trial << ", element " << i);
                REQUIRE(std::vector<int64_t>(a, a + 3) == std::vector<int64_t>(b, b + 3));
            }
            ++visited;
        }
    }
    CHECK(visited > 100000);
}

TEST_CASE("a walk of 2^31 elements or more keeps 64-bit division", "[walk]") {
    Operand out, in;
    out.ndim = in.ndim = 2;
    out.shape[0] = in.shape[0] = 65536, out.shape[1] = in.shape[1] = 32768;  // 2^31
    out.strides[0] = 32768, out.strides[1] = 1;
    in.strides[0] = 1, in.strides[1] = 65536;  // a transpose: the axes do not merge
    const Operand* ops[2] = {&out, &in};
    pxcuda::Strided<2> w = pxcuda::make_strided<2>(ops);
    CHECK_FALSE(w.narrow);
    int64_t off[2];
    w.offsets((int64_t(1) << 31) - 1, off);  // the last element
    CHECK(off[0] == (int64_t(1) << 31) - 1);
    CHECK(off[1] == 65535 + int64_t(32767) * 65536);
    out.shape[0] = in.shape[0] = 65535;  // one row fewer: 32-bit
    CHECK(pxcuda::make_strided<2>(ops).narrow);
}
