// OpenBLAS, which the plugin loads itself (dlopen) as it starts rather than
// linking it. OpenBLAS maps a work buffer (128 MiB in Debian's x86-64 builds)
// for each of its threads while it loads, and when the address space has no
// room for them (ulimit -v) it retries forever inside the dynamic loader:
// every process that loaded the plugin hung there with no message (issue 37,
// item 10). Loaded here, the buffers are counted and mapped once first, and
// a plugin that cannot fit them refuses to start, saying so with the figures.
// The check also asks for room for the library itself and 64 MiB to spare
// (a thread's malloc arena reserves that much): with the buffers alone, a
// limit a little above them still hung. Another thread of the process may
// take the room between the check and OpenBLAS's own mapping (a window of
// microseconds, once per process).
#pragma once

#include <cblas.h>

#include <cstddef>
#include <string>

#include "plexus/plugin.h"

namespace pxcpu {

// The OpenBLAS functions the plugin calls.
struct OpenBlas {
    decltype(&cblas_sgemm) sgemm;
    decltype(&cblas_dgemm) dgemm;
    decltype(&openblas_set_num_threads) set_num_threads;
    decltype(&openblas_get_num_threads) get_num_threads;
    decltype(&openblas_get_num_procs) get_num_procs;
    decltype(&openblas_get_config) get_config;
    void* (*memory_alloc)(int procpos);  // blas_memory_alloc: exported, not in cblas.h
    void (*memory_free)(void* buffer);   // blas_memory_free
};

// Loads OpenBLAS for the process (kept loaded: RTLD_NODELETE). PX_OK, or
// PX_ERROR_OUT_OF_MEMORY when its load-time buffers do not fit and
// PX_ERROR_PLUGIN when it cannot be loaded, with why. After a success the
// later calls return at once; after a failure they try again.
px_status load_openblas(std::string& why);

// The loaded OpenBLAS, loading it first if need be (throws with why when it cannot be).
const OpenBlas& openblas();

// Opens the library named `soname` (the one already in the process, else
// `file`, else the loader's search for the name; kept loaded) and resolves
// its functions into `out`; false with why. load_openblas's first step
// after its check, apart for tests.
bool open_openblas(const char* soname, const char* file, OpenBlas& out, std::string& why);

// One OpenBLAS work buffer (BUFFER_SIZE, 32 << 22 here) with the page it
// adds and the page its malloc fallback adds.
constexpr size_t openblas_buffer_bytes = (size_t(32) << 22) + size_t(2 * 4096);

// Whether the address space holds `count` OpenBLAS work buffers and `extra`
// bytes beside them at once (mapped together, then unmapped); if not,
// `error` is the errno of the mapping that failed.
bool room_for_openblas_buffers(int count, size_t extra, int& error);

// The kernels OpenBLAS is told to take as the plugin loads it, or NULL to
// leave the choice to OpenBLAS. A DYNAMIC_ARCH build (Debian's) picks its
// kernels from the CPU's model number, and a model newer than the release
// gets its oldest x86-64 kernels: 0.3.21 runs SSE3 ("Prescott") on Sapphire
// and Emerald Rapids, its products 3-5x slower than with its AVX-512 kernels
// (docs/performance.md). A CPU with AVX-512 F, CD, BW, DQ and VL gets those
// by name ("Cooperlake" with AVX-512 BF16, else "SkylakeX": what newer
// releases pick for such models themselves). Not used when the user set
// OPENBLAS_CORETYPE or OpenBLAS was in the process before the plugin; the
// device's name shows the kernels in use either way.
const char* openblas_core_for_this_cpu();

// The threads OpenBLAS may give itself as it loads, one work buffer each,
// at most 64: the more of its two builds' rules. Debian's OpenMP build takes
// OMP_NUM_THREADS, else every online core, and ignores OPENBLAS_NUM_THREADS,
// GOTO_NUM_THREADS and the affinity mask; the pthread build takes the first
// of those set, else the cores, never more than the cores.
int openblas_load_threads();

// openblas_set_num_threads(threads), once the buffers of the threads it
// adds fit (the OpenMP build maps them at once, unchecked): PX_OK, or
// PX_ERROR_OUT_OF_MEMORY with why.
px_status openblas_use_threads(int threads, std::string& why);

}  // namespace pxcpu
