// A process group (plugin ABI 1.3) on one GPU: an NCCL communicator across
// processes, created non-blocking so that nothing waits on another process
// without a deadline. Joining polls until every rank is there or the time-out
// passes; the group's collectives are watched by the device's waits
// (StreamWatch), which abort the communicator once the group's work has gone
// longer than the time-out without a collective finishing, so a dead peer
// fails a wait instead of hanging it, and a slow one that keeps up does not.
#pragma once

#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include <nccl.h>

#include "collective.hpp"
#include "device.hpp"
#include "plexus/plugin.h"

struct px_plugin_group;

namespace pxcuda {

class ProcessGroup : public StreamWatch {
public:
    // Joins; throws DeviceFailure after `timeout` seconds, or naming NCCL's
    // error. Called without the device's lock (joining may take long).
    ProcessGroup(const NcclApi& nccl, Device& device, const ncclUniqueId& id, int rank, int size, double timeout);
    ~ProcessGroup() override;  // aborts the communicator unless leave() freed it
    ProcessGroup(const ProcessGroup&) = delete;
    ProcessGroup& operator=(const ProcessGroup&) = delete;

    Device& device() { return device_; }
    // Queues an in-place sum of every tensor of `call` (checked by the
    // caller) on the device's stream; the caller holds the device's lock.
    void all_reduce_sum(const px_group_call& call);
    // Waits for the group's work, then frees the communicator; the caller
    // holds the device's lock. Never throws.
    void leave() noexcept;

    bool pending() const override { return pending_; }
    std::string check() override;
    void drained() override;

private:
    // Polls NCCL until the communicator's last call is no longer in
    // progress; throws DeviceFailure (having aborted) on error or time-out.
    void settle(const std::string& what);
    // Aborts the communicator; returns the message it is kept with.
    std::string give_up(const std::string& why);
    std::string nccl_error(ncclResult_t r) const;
    // An event recorded after the work queued so far (throws CudaError).
    cudaEvent_t record_event();
    // Every event of in_flight_ back to spare_ (the stream has drained).
    void recycle_all();

    const NcclApi& nccl_;
    Device& device_;
    ncclComm_t comm_ = nullptr;  // null once aborted or destroyed
    const int rank_, size_;
    const double timeout_;
    // A collective queued since the stream last drained: events recorded
    // before it and after it (null until it is queued).
    struct Queued {
        cudaEvent_t before, after;
    };
    std::deque<Queued> in_flight_;    // oldest first
    std::vector<cudaEvent_t> spare_;  // events for reuse
    bool pending_ = false;
    bool front_started_ = false;  // the poll has seen the oldest one able to start, at started_at_
    std::chrono::steady_clock::time_point started_at_{};
    std::string broken_;  // why the communicator was aborted ("" while usable)
};

}  // namespace pxcuda
