#include "staging.hpp"

#include <cstring>

#include "cuda_check.hpp"

namespace pxcuda {

StagingRing::~StagingRing() {
    for (Slot& s : slots_) {
        if (s.done) cudaEventDestroy(s.done);
        if (s.host) cudaFreeHost(s.host);
    }
}

StagingRing::Slot& StagingRing::next_slot() {
    if (slots_.empty()) slots_.resize(kSlots);
    Slot& s = slots_[next_];
    next_ = (next_ + 1) % kSlots;
    if (!s.host) {  // pinned memory is taken on first use: a device that never copies keeps none
        if (cudaHostAlloc(reinterpret_cast<void**>(&s.host), kSlotBytes, cudaHostAllocDefault) != cudaSuccess) {
            cudaGetLastError();
            s.host = nullptr;
            throw OutOfMemory("no pinned host memory for a staging buffer of " + std::to_string(kSlotBytes) + " bytes");
        }
        PX_CUDA(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
    } else {
        PX_CUDA(cudaEventSynchronize(s.done));  // the copy out of this slot has run
    }
    return s;
}

void StagingRing::to_device(char* dst, const char* src, size_t bytes, cudaStream_t stream) {
    for (size_t off = 0; off < bytes; off += kSlotBytes) {
        const size_t len = bytes - off < kSlotBytes ? bytes - off : kSlotBytes;
        Slot& s = next_slot();
        std::memcpy(s.host, src + off, len);
        PX_CUDA(cudaMemcpyAsync(dst + off, s.host, len, cudaMemcpyHostToDevice, stream));
        PX_CUDA(cudaEventRecord(s.done, stream));
    }
}

}  // namespace pxcuda
