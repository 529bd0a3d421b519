// The CPU plugin's scratch pool (plugins/cpu/scratch_pool.cpp), compiled into
// this test: leases are aligned and reused, the smallest fitting buffer is
// taken, and what is kept stays within its bound.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "scratch_pool.hpp"

using pxcpu::ScratchLease;
using pxcpu::scratch_figures;

namespace {
constexpr size_t MiB = size_t(1) << 20;
bool aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }
}  // namespace

TEST_CASE("a scratch lease is aligned and its buffer is kept for the next lease", "[host][scratch]") {
    const auto before = scratch_figures();
    void* first;
    {
        ScratchLease a(1000);
        first = a.data();
        REQUIRE(aligned64(first));
        std::memset(first, 0x5a, 1000);  // writable for the whole size asked
        CHECK(scratch_figures().leased_buffers == before.leased_buffers + 1);
    }
    CHECK(scratch_figures().leased_buffers == before.leased_buffers);
    CHECK(scratch_figures().kept_buffers == before.kept_buffers + 1);
    ScratchLease again(1000);
    CHECK(again.data() == first);
    CHECK(scratch_figures().kept_buffers == before.kept_buffers);
    ScratchLease empty(0);  // still a valid, distinct pointer
    CHECK(empty.data() != nullptr);
    CHECK(empty.data() != again.data());
}

TEST_CASE("a scratch lease takes the smallest kept buffer that is large enough", "[host][scratch]") {
    void *small, *large;
    {
        ScratchLease a(1 * MiB), b(3 * MiB);
        small = a.data(), large = b.data();
    }
    {
        ScratchLease fits(2 * MiB);  // the 1 MiB one is too small
        CHECK(fits.data() == large);
        ScratchLease next(MiB / 2);
        CHECK(next.data() == small);
    }
}

TEST_CASE("scratch buffers kept stay within the bound, the oldest freed first", "[host][scratch]") {
    {
        ScratchLease huge(pxcpu::scratch_kept_bytes + 64);  // never kept
        std::memset(huge.data(), 1, 64);
    }
    CHECK(scratch_figures().kept_bytes <= pxcpu::scratch_kept_bytes);
    void* oldest;
    {
        std::vector<std::unique_ptr<ScratchLease>> held;
        held.reserve(5);
        for (int i = 0; i < 5; ++i) held.push_back(std::make_unique<ScratchLease>(20 * MiB));
        oldest = held[0]->data();
        // Given back oldest first: 100 MiB offered, at most 64 MiB kept.
    }
    const auto f = scratch_figures();
    CHECK(f.kept_bytes <= pxcpu::scratch_kept_bytes);
    CHECK(f.kept_bytes >= size_t(3 * 20) * MiB);  // the three newest 20 MiB buffers
    CHECK(f.leased_buffers == 0);
    // The first given back went first: three 20 MiB leases get the newest three.
    ScratchLease x(20 * MiB), y(20 * MiB), z(20 * MiB);
    CHECK(x.data() != oldest);
    CHECK(y.data() != oldest);
    CHECK(z.data() != oldest);
}

TEST_CASE("thread scratch gives each thread an aligned part that zero_part clears alone", "[host][scratch]") {
    const pxcpu::ThreadScratch<float> s(nullptr, 3, 10);  // 40 bytes a part, 64 apart
    REQUIRE(s.threads() == 3);
    for (int k = 0; k < 3; ++k) {
        REQUIRE(aligned64(s.part(k)));
        std::memset(static_cast<void*>(s.part(k)), 0xff, 10 * sizeof(float));
    }
    CHECK(reinterpret_cast<char*>(s.part(1)) - reinterpret_cast<char*>(s.part(0)) == 64);
    s.zero_part(1);
    for (int i = 0; i < 10; ++i) {
        CHECK(s.part(1)[i] == 0.0f);
        CHECK(std::isnan(s.part(0)[i]));  // 0xffffffff is a NaN: untouched
        CHECK(std::isnan(s.part(2)[i]));
    }
}

TEST_CASE("a scratch lease the system cannot give throws bad_alloc and leaves the pool as it was", "[host][scratch]") {
    const auto before = scratch_figures();
    // Within 63 bytes of SIZE_MAX: rounding to 64 bytes would wrap to 0.
    CHECK_THROWS_AS(ScratchLease(SIZE_MAX), std::bad_alloc);
    CHECK_THROWS_AS(ScratchLease(SIZE_MAX - 63), std::bad_alloc);
    // 4 EiB: the system's allocator itself returns NULL (under ASan too, with
    // allocator_may_return_null=1 as tools/run-sanitizers.sh sets it).
    CHECK_THROWS_WITH(ScratchLease(size_t(1) << 62), "the system could not give 4611686018427387904 bytes of scratch space");
    // Parts whose total overflows a size_t are refused before any lease.
    CHECK_THROWS_AS(pxcpu::ThreadScratch<double>(nullptr, 2, SIZE_MAX / 8), std::bad_alloc);
    CHECK_THROWS_AS(pxcpu::ThreadScratch<float>(nullptr, 16, SIZE_MAX / 32), std::bad_alloc);
    CHECK_THROWS_AS(pxcpu::ThreadScratch<float>(nullptr, 0, 10), std::bad_alloc);
    const auto after = scratch_figures();
    CHECK(after.leased_buffers == before.leased_buffers);
    CHECK(after.kept_bytes == before.kept_bytes);
    ScratchLease fine(1000);  // and the next lease is served
    CHECK(aligned64(fine.data()));
}

namespace {
// A budget that counts what it holds and refuses past a cap.
struct CountingBudget final : pxcpu::ScratchBudget {
    size_t cap, held = 0, peak = 0;
    explicit CountingBudget(size_t c) : cap(c) {}
    bool charge(size_t bytes, std::string& why) override {
        if (bytes > cap - held) {
            why = "refused " + std::to_string(bytes) + " bytes";
            return false;
        }
        held += bytes;
        peak = std::max(peak, held);
        return true;
    }
    void refund(size_t bytes) override { held -= bytes; }
};
}  // namespace

TEST_CASE("a scratch lease is charged to its budget while it lasts", "[host][scratch]") {
    CountingBudget budget(1 * MiB);
    {
        ScratchLease uncharged(1000);  // no budget: not charged anywhere
        CHECK(budget.held == 0);
    }
    {
        ScratchLease a(1000, &budget), b(2000, &budget);
        CHECK(budget.held == 3000);
        {
            const pxcpu::ThreadScratch<float> parts(&budget, 2, 10);  // two parts of 64 bytes
            CHECK(budget.held == 3128);
        }
        CHECK(budget.held == 3000);
    }
    CHECK(budget.held == 0);
    CHECK(budget.peak == 3128);
    // Refused by the budget: ScratchRefused (a bad_alloc) with its reason, nothing held.
    const auto before = scratch_figures();
    try {
        ScratchLease too_big(2 * MiB, &budget);
        FAIL("the budget's cap was not enforced");
    } catch (const pxcpu::ScratchRefused& e) {
        CHECK(std::string(e.what()) == "refused 2097152 bytes");
    }
    CHECK(budget.held == 0);
    CHECK(scratch_figures().leased_buffers == before.leased_buffers);
    // Charged, then refused by the system: the charge is refunded.
    CountingBudget roomy(SIZE_MAX);
    CHECK_THROWS_AS(ScratchLease(size_t(1) << 62, &roomy), pxcpu::ScratchRefused);
    CHECK(roomy.held == 0);
}
