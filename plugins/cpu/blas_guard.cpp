#include "blas_guard.hpp"

#include <cblas.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "address_space.hpp"
#include "scratch_pool.hpp"

// OpenBLAS's allocator: exported by libopenblas, not declared in cblas.h.
extern "C" void* blas_memory_alloc(int procpos);
extern "C" void blas_memory_free(void* buffer);

namespace pxcpu {
namespace {

// The buffer OpenBLAS maps (BUFFER_SIZE, 32 << 22 in Debian's x86-64 builds),
// with the page it adds and the page its malloc fallback adds.
constexpr size_t buffer_bytes = (size_t(32) << 22) + size_t(2 * 4096);

bool address_space_room(std::string& why) {
    void* p = mmap(nullptr, buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
        munmap(p, buffer_bytes);
        return true;
    }
    const int err = errno;
    why = "OpenBLAS needs a work buffer of " + mib_text(double(buffer_bytes)) +
          " for this op's matrix products and the address space has no room for it (mmap: " + std::strerror(err) +
          "; " + address_space_text() + ")";
    return false;
}

int openblas_threads_most() {
    return std::max({openblas_get_num_procs(), openblas_get_num_threads(), omp_get_max_threads()});
}

const BlasBuffers openblas_table = {
    [] { return blas_memory_alloc(0); },
    [](void* p) { blas_memory_free(p); },
    [] { return openblas_get_num_threads(); },
    openblas_threads_most,
    address_space_room,
};

std::mutex lock;
const BlasBuffers* buffers = &openblas_table;
int ready = 0;    // calls at once whose buffers are mapped, beside OpenBLAS's threads'
int running = 0;  // calls the ops running now may make at once

// Leaves `want` calls ready. Every slot held at the same moment is a
// distinct mapped buffer afterwards, whatever other threads hold meanwhile;
// holding `want` plus the threads OpenBLAS may still add covers them all.
void make_ready(int want) {
    const BlasBuffers& b = *buffers;
    const int hold = want + std::max(0, b.threads_most() - b.threads_now());
    std::vector<void*> held;
    held.reserve(size_t(hold));
    auto give_back = [&] {
        for (void* p : held) b.give_back(p);
    };
    std::string why;
    for (int i = 0; i < hold; ++i) {
        if (!b.room(why)) {
            give_back();
            throw ScratchRefused(why);
        }
        void* p = b.take();
        if (!p) {
            give_back();
            throw ScratchRefused("OpenBLAS's table of work buffers is full: " + std::to_string(hold) +
                                 " wanted at once beside the " + std::to_string(b.threads_now()) +
                                 " of its threads, and it had " + std::to_string(i));
        }
        held.push_back(p);
    }
    give_back();
    ready = want;
}

}  // namespace

const BlasBuffers& openblas_buffers() { return openblas_table; }

void use_blas_buffers(const BlasBuffers* b) {
    std::lock_guard<std::mutex> guard(lock);
    buffers = b ? b : &openblas_table;
    ready = 0;
}

BlasWork::BlasWork(int calls) : calls_(std::max(calls, 1)) {
    std::lock_guard<std::mutex> guard(lock);
    const int want = running + calls_;
    if (want > ready) make_ready(want);
    running = want;
}

BlasWork::~BlasWork() {
    std::lock_guard<std::mutex> guard(lock);
    running -= calls_;
}

BlasWorkFigures blas_work_figures() {
    std::lock_guard<std::mutex> guard(lock);
    return {ready, running};
}

}  // namespace pxcpu
