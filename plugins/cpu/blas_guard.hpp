// OpenBLAS's work buffers, mapped before an op runs its matrix products, so
// that running out of address space is an error and never a hang (issue 37,
// item 10).
//
// OpenBLAS (0.3.21 here, Debian's OpenMP build, and every release since)
// gives each gemm call a work buffer from a table of slots: 32 << BUFFERSIZE
// bytes (128 MiB in Debian's x86-64 builds) plus a page, mapped the first
// time a slot is used and kept mapped after. Its OpenMP threads' buffers take
// a slot each when the library loads. When neither mmap nor malloc can give
// it a new buffer, blas_memory_alloc tries again, forever: under `ulimit -v
// 600000` plexus-train spun there at 100% CPU with no message.
//
// So an op that calls gemm holds a BlasWork for as many calls as it makes at
// once (its OpenMP team). When more calls are wanted at once than have been
// made ready, the guard first checks that a buffer's worth of address space
// can be mapped, then has OpenBLAS map the buffer (it takes slots with
// blas_memory_alloc, holding them together, and gives them back), and
// refuses the op with the figures when there is no room: the device reports
// PX_ERROR_OUT_OF_MEMORY at its next wait, naming the op. Between that check
// and OpenBLAS's own mapping another thread of the process could take the
// room (a window of microseconds, once per new buffer), and memory that
// the application maps for OpenBLAS's own calls outside the plugin is not
// counted.
#pragma once

#include <string>

namespace pxcpu {

// How OpenBLAS is reached, so a test can stand in for it (blas_guard_test.cpp).
struct BlasBuffers {
    void* (*take)();                 // a work buffer from OpenBLAS's table (blas_memory_alloc), or null when it is full
    void (*give_back)(void*);        // blas_memory_free
    int (*threads_now)();            // OpenBLAS's threads now, each holding a buffer
    int (*threads_most)();           // the most it may come to use
    bool (*room)(std::string& why);  // whether one more buffer can be mapped; if not, why, with the figures
};

// The table above for the OpenBLAS the plugin links.
const BlasBuffers& openblas_buffers();

// For tests: `b` instead of OpenBLAS until called with nullptr; the count of
// buffers made ready starts again from 0.
void use_blas_buffers(const BlasBuffers* b);

// Held by an op while it makes up to `calls` gemm calls at once (any thread).
// Throws ScratchRefused (an out-of-memory error with the reason) when the
// buffers they need cannot be mapped; nothing is held then.
class BlasWork {
public:
    explicit BlasWork(int calls);
    ~BlasWork();
    BlasWork(const BlasWork&) = delete;
    BlasWork& operator=(const BlasWork&) = delete;

private:
    int calls_;
};

// Calls made ready (buffers mapped beyond those of OpenBLAS's threads) and calls running now (for tests).
struct BlasWorkFigures {
    int ready, running;
};
BlasWorkFigures blas_work_figures();

}  // namespace pxcpu
