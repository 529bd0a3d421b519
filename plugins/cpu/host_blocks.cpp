#include "host_blocks.hpp"

#include <cstdlib>
#include <sys/mman.h>

namespace pxcpu {

void* allocate_host_block(size_t bytes) noexcept {
    if (bytes < huge_page_bytes) return std::aligned_alloc(64, bytes);
    void* p = nullptr;
    if (posix_memalign(&p, huge_page_bytes, bytes) != 0) return nullptr;
    // Advice only: a kernel without transparent huge pages refuses it, and the
    // block works as it is.
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}

}  // namespace pxcpu
