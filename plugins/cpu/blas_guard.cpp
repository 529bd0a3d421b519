#include "blas_guard.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "address_space.hpp"
#include "openblas.hpp"
#include "scratch_pool.hpp"

namespace pxcpu {
namespace {

bool address_space_room(std::string& why) {
    int error = 0;
    if (room_for_openblas_buffers(1, 0, error)) return true;
    why = "OpenBLAS needs a work buffer of " + mib_text(double(openblas_buffer_bytes)) +
          " for this op's matrix products and the address space has no room for it (mmap: " + std::strerror(error) +
          "; " + address_space_text() + ")";
    return false;
}

int openblas_threads_most() {
    return std::max({openblas().get_num_procs(), openblas().get_num_threads(), omp_get_max_threads()});
}

const BlasBuffers openblas_table = {
    [] { return openblas().memory_alloc(0); },
    [](void* p) { openblas().memory_free(p); },
    [] { return openblas().get_num_threads(); },
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
