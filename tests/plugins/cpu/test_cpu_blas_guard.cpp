// The CPU plugin's guard over OpenBLAS's work buffers (plugins/cpu/blas_guard.hpp),
// against a stand-in for OpenBLAS's table of slots that counts what is held
// and mapped: an op's calls are made ready before it runs, holding enough
// slots at once to cover OpenBLAS's threads; no room, or a full table, is an
// out-of-memory error with the reason and leaves nothing held.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

#include <string>
#include <vector>

#include "blas_guard.hpp"
#include "openblas.hpp"
#include "scratch_pool.hpp"
#include "../../sanitizers.hpp"

namespace {

// OpenBLAS's table, as blas_memory_alloc keeps it: the first free slot is
// taken, and a slot never taken before is mapped.
struct FakeTable {
    std::vector<bool> used, mapped;
    int threads_now = 1, threads_most = 2;
    int room_left = 1000;  // buffers the address space has room for
    int takes = 0;
    size_t capacity = 50;  // OpenBLAS's NUM_BUFFERS
    void reset() { *this = FakeTable{}; }
};
FakeTable table;
char slots[64];  // an address per slot, never read

void* take() {
    ++table.takes;
    for (size_t i = 0; i < table.capacity; ++i) {
        if (i >= table.used.size()) table.used.push_back(false), table.mapped.push_back(false);
        if (!table.used[i]) {
            table.used[i] = true;
            if (!table.mapped[i]) table.mapped[i] = true, --table.room_left;
            return &slots[i];
        }
    }
    return nullptr;
}
void give_back(void* p) { table.used[size_t(static_cast<char*>(p) - slots)] = false; }
int mapped() {
    int n = 0;
    for (bool m : table.mapped) n += m ? 1 : 0;
    return n;
}
int held() {
    int n = 0;
    for (bool u : table.used) n += u ? 1 : 0;
    return n;
}

const pxcpu::BlasBuffers fake{
    take,
    give_back,
    [] { return table.threads_now; },
    [] { return table.threads_most; },
    [](std::string& why) {
        if (table.room_left > 0) return true;
        why = "no room (the fake's figures)";
        return false;
    },
};

// Uses the fake for one test case, then OpenBLAS again.
struct UseFake {
    UseFake() {
        table.reset();
        pxcpu::use_blas_buffers(&fake);
    }
    ~UseFake() { pxcpu::use_blas_buffers(nullptr); }
};

}  // namespace

TEST_CASE("an op's gemm calls get their OpenBLAS buffers mapped before it runs, once",
          "[host][cpu-plugin][blas]") {
    UseFake use;
    {
        const pxcpu::BlasWork two(2);  // a team of two, each calling gemm
        // Two calls plus the thread OpenBLAS may still add (1 now, 2 at most): three slots held at once.
        CHECK(table.takes == 3);
        CHECK(mapped() == 3);
        CHECK(held() == 0);  // all given back before the op runs
        CHECK(pxcpu::blas_work_figures().ready == 2);
        CHECK(pxcpu::blas_work_figures().running == 2);
        {
            const pxcpu::BlasWork one(1);  // another device's product at the same time: a third call
            CHECK(table.takes == 3 + 4);
            CHECK(mapped() == 4);
            CHECK(pxcpu::blas_work_figures().running == 3);
        }
        CHECK(pxcpu::blas_work_figures().running == 2);
    }
    CHECK(pxcpu::blas_work_figures().running == 0);
    // Ready from now on: no slot taken, nothing mapped, for up to three calls at once.
    for (int i = 0; i < 5; ++i) {
        const pxcpu::BlasWork again(3);
    }
    CHECK(table.takes == 7);
    CHECK(mapped() == 4);
    CHECK(pxcpu::blas_work_figures().ready == 3);
    const pxcpu::BlasWork zero(0);  // counted as one call
    CHECK(pxcpu::blas_work_figures().running == 1);
}

TEST_CASE("no room for an OpenBLAS buffer is an out-of-memory error, and nothing is left held",
          "[host][cpu-plugin][blas]") {
    UseFake use;
    table.room_left = 2;  // room for two buffers: the third of the three wanted is refused
    try {
        const pxcpu::BlasWork two(2);
        FAIL("no error");
    } catch (const pxcpu::ScratchRefused& e) {  // a std::bad_alloc: PX_ERROR_OUT_OF_MEMORY at the device's wait
        CHECK(std::string(e.what()) == "no room (the fake's figures)");
    }
    CHECK(held() == 0);
    CHECK(pxcpu::blas_work_figures().running == 0);
    CHECK(pxcpu::blas_work_figures().ready == 0);
    // The check comes before each slot is taken, one already mapped too: with
    // no room left, one call (two slots with the thread OpenBLAS may add) is
    // refused though two buffers are mapped, and no slot is taken; with room
    // for one more buffer it is made ready from the two mapped.
    table.room_left = 0;
    table.takes = 0;
    CHECK_THROWS_AS(pxcpu::BlasWork(1), pxcpu::ScratchRefused);
    CHECK(table.takes == 0);
    table.room_left = 1;
    {
        const pxcpu::BlasWork one(1);
        CHECK(pxcpu::blas_work_figures().ready == 1);
        CHECK(mapped() == 2);
    }
    CHECK(held() == 0);
}

TEST_CASE("a full OpenBLAS table of buffers is an out-of-memory error naming the figures",
          "[host][cpu-plugin][blas]") {
    UseFake use;
    table.capacity = 4;
    table.threads_now = table.threads_most = 2;
    table.used = {true, true};  // the two threads' buffers
    table.mapped = {true, true};
    try {
        const pxcpu::BlasWork three(3);
        FAIL("no error");
    } catch (const pxcpu::ScratchRefused& e) {
        CHECK(std::string(e.what()) ==
              "OpenBLAS's table of work buffers is full: 3 wanted at once beside the 2 of its threads, and it had 2");
    }
    CHECK(held() == 2);  // the threads' own, nothing more
    const pxcpu::BlasWork two(2);
    CHECK(pxcpu::blas_work_figures().running == 2);
}

TEST_CASE("OpenBLAS itself has room for a buffer where no limit is set", "[host][cpu-plugin][blas]") {
    std::string why;
    CHECK(pxcpu::openblas_buffers().room(why));
    CHECK(why.empty());
    CHECK(pxcpu::openblas_buffers().threads_most() >= pxcpu::openblas_buffers().threads_now());
    const pxcpu::BlasWork one(1);
    CHECK(pxcpu::blas_work_figures().ready >= 1);
}

// The plugin loads OpenBLAS itself (openblas.hpp); the refusals of a library
// it cannot load or that lacks a function. (The refusal of a limit too low
// for its load-time buffers is tools.train_address_space_limits'.)
TEST_CASE("OpenBLAS that cannot be loaded, or lacks a function, is refused naming the file", "[host][cpu-plugin][blas]") {
    pxcpu::OpenBlas got{};
    std::string why;
    CHECK_FALSE(pxcpu::open_openblas("libplexus-no-such-blas.so.0", "/nonexistent/libopenblas.so.0", got, why));
    CHECK(why.rfind("cannot load OpenBLAS (/nonexistent/libopenblas.so.0): /nonexistent/libopenblas.so.0: cannot open",
                    0) == 0);
    why.clear();
    CHECK_FALSE(pxcpu::open_openblas("libplexus-no-such-blas.so.0", "libm.so.6", got, why));  // a library, not OpenBLAS
    CHECK(why == "OpenBLAS (libm.so.6) lacks cblas_sgemm");
    CHECK(got.sgemm == nullptr);  // nothing is handed out from a refused library
    // The plugin's own: every function found, and the library answers.
    why.clear();
    REQUIRE(pxcpu::open_openblas("libopenblas.so.0", "libopenblas.so.0", got, why));
    CHECK(why.empty());
    CHECK(std::string(got.get_config()).find("OpenBLAS") != std::string::npos);
    CHECK(pxcpu::openblas().get_num_threads() >= 1);
    int threads = pxcpu::openblas_load_threads();
    CHECK((threads >= 1 && threads <= 64));
}

#if !defined(PXTEST_ASAN) && !defined(PXTEST_TSAN)  // their shadow memory needs the address space
// Threads OpenBLAS adds after it loaded map their buffers at once, unchecked
// by OpenBLAS: without room, openblas_use_threads refuses with the figures
// and leaves OpenBLAS as it was.
TEST_CASE("OpenBLAS is given more threads only when their work buffers fit", "[host][cpu-plugin][blas]") {
    const int now = pxcpu::openblas().get_num_threads();
    rlimit old{};
    REQUIRE(getrlimit(RLIMIT_AS, &old) == 0);
    FILE* f = std::fopen("/proc/self/statm", "r");
    REQUIRE(f != nullptr);
    unsigned long long pages = 0;
    REQUIRE(std::fscanf(f, "%llu", &pages) == 1);
    std::fclose(f);
    rlimit tight = old;
    tight.rlim_cur = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(64) << 20);  // 64 MiB beyond what is mapped
    REQUIRE(setrlimit(RLIMIT_AS, &tight) == 0);
    std::string why;
    const px_status s = pxcpu::openblas_use_threads(now + 2, why);
    REQUIRE(setrlimit(RLIMIT_AS, &old) == 0);
    CHECK(s == PX_ERROR_OUT_OF_MEMORY);
    CHECK(why.find("OpenBLAS maps a work buffer of 128 MiB for each of its threads, " + std::to_string(now + 2) +
                   " here where it has " + std::to_string(now)) == 0);
    CHECK(why.find("that RLIMIT_AS (ulimit -v) allows); raise the limit, or use fewer threads (OMP_NUM_THREADS)") !=
          std::string::npos);
    CHECK(pxcpu::openblas().get_num_threads() == now);
    why.clear();
    CHECK(pxcpu::openblas_use_threads(now, why) == PX_OK);  // no new buffer: nothing to check
    CHECK(why.empty());
}
#endif
