// Pinned (page-locked) host buffers through which host-to-device copies go,
// so a copy from ordinary memory is queued on the stream and returns as soon
// as the caller's bytes are in a staging slot, not when the GPU has them.
// Slots are reused round-robin; a slot is refilled only after the copy out
// of it has run (its event). Large copies run slot by slot, the memcpy into
// one slot overlapping the transfer out of the previous one. Pinned memory
// is a speed-up, not a need: without it the caller copies directly.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

namespace pxcuda {

class StagingRing {
public:
    static constexpr size_t kSlotBytes = size_t(4) << 20;
    static constexpr int kSlots = 4;

    // `wait` blocks until the stream's work so far has run (Device::fence:
    // it gives up on a dead peer, where an event's wait could hang).
    explicit StagingRing(std::function<void()> wait) : wait_(std::move(wait)) {}
    ~StagingRing();  // the device must be current and its work finished
    StagingRing(const StagingRing&) = delete;
    StagingRing& operator=(const StagingRing&) = delete;

    // Queues dst <- src (bytes) on `stream` and returns once src may be
    // reused. Returns the bytes queued: fewer than `bytes` when no pinned
    // memory could be had for a slot, and the rest is the caller's to copy.
    // Throws CudaError.
    size_t to_device(char* dst, const char* src, size_t bytes, cudaStream_t stream);

private:
    struct Slot {
        char* host = nullptr;
        cudaEvent_t done = nullptr;  // recorded after the copy out of `host`
    };
    // The next slot, ready to fill; nullptr when it has no pinned memory and none can be had.
    Slot* next_slot();
    std::function<void()> wait_;
    std::vector<Slot> slots_;
    int next_ = 0;
};

}  // namespace pxcuda
