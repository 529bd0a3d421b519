// The communicators of one set of this plugin's GPUs (ncclCommInitAll), and
// what keeps a GPU from waiting forever on a member that cannot arrive: each
// member's device polls a watch while a sum is queued on it; a member whose
// context is lost, or an NCCL error, aborts every communicator of the set
// (their kernels return, so the streams drain) and fails each member's wait
// with the reason. A broken clique is replaced at the next all-reduce.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collective.hpp"
#include "device.hpp"

namespace pxcuda {

class Clique {
public:
    // Throws std::runtime_error naming the NCCL error.
    Clique(const NcclApi& nccl, std::vector<Device*> devices);
    // The devices must still exist; their locks are not taken (the caller
    // holds them, or nothing else runs).
    ~Clique();
    Clique(const Clique&) = delete;
    Clique& operator=(const Clique&) = delete;

    // Queues the in-place sum of data[i] on member i's stream, for every i.
    void all_reduce_sum(const std::vector<void*>& data, size_t count, ncclDataType_t type);
    bool broken();

private:
    // Member i's watch, polled by its device's waits under that device's lock.
    class Member : public StreamWatch {
    public:
        Member(Clique& c, size_t i) : clique_(c), index_(i) {}
        bool pending() const override { return pending_; }
        std::string check() override { return clique_.check(index_); }
        void drained() override { pending_ = false; }
        bool pending_ = false;

    private:
        Clique& clique_;
        size_t index_;
    };

    // "" while member i may wait on; else why it may not (the clique is broken).
    std::string check(size_t i);
    void abort(const std::string& why);  // the caller holds mutex_
    std::string members() const;

    const NcclApi& nccl_;
    std::vector<Device*> devices_;
    std::vector<ncclComm_t> comms_;
    std::vector<std::unique_ptr<Member>> watches_;
    std::mutex mutex_;   // broken_ and comms_, between the members' devices
    std::string broken_;
};

}  // namespace pxcuda
