#include "staging.hpp"

#include <cstring>

#include "cuda_check.hpp"
#include "shutdown.hpp"

namespace pxcuda {

StagingRing::~StagingRing() {
    if (cuda_unusable()) return;  // the driver reclaims the pinned memory with the process
    for (Slot& s : slots_) {
        if (s.done) cudaEventDestroy(s.done);
        if (s.host) cudaFreeHost(s.host);
    }
}

StagingRing::Slot* StagingRing::next_slot() {
    if (slots_.empty()) slots_.resize(kSlots);
    Slot& s = slots_[next_];
    if (!s.done) PX_CUDA(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
    if (!s.host) {  // pinned memory is taken on first use: a device that never copies keeps none
        if (cudaHostAlloc(reinterpret_cast<void**>(&s.host), kSlotBytes, cudaHostAllocDefault) != cudaSuccess) {
            cudaGetLastError();  // out of memory does not poison the context
            s.host = nullptr;
            return nullptr;
        }
    } else {
        // The copy out of this slot must have run before it is refilled.
        const cudaError_t e = cudaEventQuery(s.done);
        if (e == cudaErrorNotReady) {
            wait_();
        } else {
            check_cuda(e, "cudaEventQuery");
        }
    }
    next_ = (next_ + 1) % kSlots;
    return &s;
}

size_t StagingRing::to_device(char* dst, const char* src, size_t bytes, cudaStream_t stream) {
    size_t off = 0;
    for (; off < bytes; off += kSlotBytes) {
        const size_t len = bytes - off < kSlotBytes ? bytes - off : kSlotBytes;
        Slot* s = next_slot();
        if (!s) break;
        std::memcpy(s->host, src + off, len);
        PX_CUDA(cudaMemcpyAsync(dst + off, s->host, len, cudaMemcpyHostToDevice, stream));
        PX_CUDA(cudaEventRecord(s->done, stream));
    }
    return off < bytes ? off : bytes;
}

}  // namespace pxcuda
