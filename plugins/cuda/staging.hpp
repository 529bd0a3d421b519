// Pinned (page-locked) host buffers through which host-to-device copies go,
// so a copy from ordinary memory is queued on the stream and returns as soon
// as the caller's bytes are in a staging slot, not when the GPU has them.
// Slots are reused round-robin; a slot is refilled only after the copy out
// of it has run (its event). Large copies run slot by slot, the memcpy into
// one slot overlapping the transfer out of the previous one.
#pragma once

#include <cstddef>
#include <vector>

#include <cuda_runtime.h>

namespace pxcuda {

class StagingRing {
public:
    static constexpr size_t kSlotBytes = size_t(4) << 20;
    static constexpr int kSlots = 4;

    StagingRing() = default;
    ~StagingRing();  // the device must be current and its work finished
    StagingRing(const StagingRing&) = delete;
    StagingRing& operator=(const StagingRing&) = delete;

    // Queues dst <- src (bytes) on `stream`; returns once src may be reused.
    // Throws CudaError, or OutOfMemory when no pinned memory can be had.
    void to_device(char* dst, const char* src, size_t bytes, cudaStream_t stream);

private:
    struct Slot {
        char* host = nullptr;
        cudaEvent_t done = nullptr;  // recorded after the copy out of `host`
    };
    Slot& next_slot();
    std::vector<Slot> slots_;
    int next_ = 0;
};

}  // namespace pxcuda
