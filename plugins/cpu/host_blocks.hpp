// Memory for tensors and kernels' scratch, from the system. Blocks of 2 MiB
// and more start on a 2 MiB boundary and are advised to transparent huge
// pages (MADV_HUGEPAGE): one TLB entry then maps 2 MiB instead of 4 KiB, and
// loops that stream through tens of MB stop waiting on page walks. Where the
// system's setting is `never`, the advice is ignored. Only whole 2 MiB pages
// inside the block are ever huge, so a block never holds more memory than its
// size. A sum over the rows of 4096x4096 float32 took 1.19-1.30 ms on 4 KiB
// pages and takes 0.95-1.01 ms (bench/results/2026-11-24-cpu-huge-pages.txt).
#pragma once

#include <cstddef>

namespace pxcpu {

// A block of `bytes` (the caller passes a multiple of 64), 64-byte aligned,
// not zeroed; nullptr when the system refuses. Freed with std::free.
void* allocate_host_block(size_t bytes) noexcept;

// Where blocks start on a 2 MiB boundary with the advice: from this size up.
constexpr size_t huge_page_bytes = size_t(2) << 20;

}  // namespace pxcpu
