// Process groups in C++: collectives across processes that a device's plugin
// runs itself (NCCL between the GPUs of several processes or machines). One
// process makes the id, the application sends it to the others (MPI_Bcast, a
// file, a socket), and each joins with its own rank:
//
//   GroupId id = rank == 0 ? make_group_id(gpu(0)) : receive_from_rank_0();
//   ProcessGroup group(gpu(0), id, rank, size, 30.0);  // returns once all joined
//   group.all_reduce_sum({grad_w, grad_b});           // in place, queued like an op
//
// plexus::mpi::World does all of this for training (plexus/mpi.hpp).
#pragma once

#include <utility>
#include <vector>

#include "plexus/cpp/device.hpp"
#include "plexus/cpp/errors.hpp"
#include "plexus/cpp/tensor.hpp"

namespace plexus {

// Bytes that every member must get unchanged: it is plain data.
using GroupId = px_group_id;

// Whether d's plugin offers process groups (plugin ABI 1.3).
inline bool groups_supported(Device d) {
    int32_t yes = 0;
    check(px_group_supported(runtime(), d.raw(), &yes));
    return yes != 0;
}

// A new group's id, for members on devices of d's plugin; made by one process.
inline GroupId make_group_id(Device d) {
    GroupId id{};
    id.struct_size = sizeof id;
    check(px_group_make_id(runtime(), d.raw(), &id));
    return id;
}

// This process's membership of a group; leaves it (after its queued work)
// when destroyed. Movable, not copyable.
class ProcessGroup {
public:
    // Joins as `rank` of `size` with `device` as this process's member;
    // returns once every member has joined, or throws after
    // `timeout_seconds`. The time-out also bounds every later wait on the
    // group's work: a member that dies makes that wait throw DeviceError.
    ProcessGroup(Device device, const GroupId& id, int rank, int size, double timeout_seconds)
        : device_(device), rank_(rank), size_(size) {
        check(px_group_join(runtime(), device.raw(), &id, rank, size, timeout_seconds, &group_));
        px_device own{};  // the name its tensors carry (naive(0) for accel(0)); the join found the device
        if (px_runtime_resolve_device(runtime(), device.raw(), &own) == PX_OK)
            device_ = Device::of(own);
    }
    ~ProcessGroup() {
        if (group_) px_group_release(group_);  // a failure here has no one left to tell; see leave()
    }
    ProcessGroup(ProcessGroup&& o) noexcept
        : group_(std::exchange(o.group_, nullptr)), device_(o.device_), rank_(o.rank_), size_(o.size_) {}
    ProcessGroup& operator=(ProcessGroup&& o) noexcept {
        if (this != &o) {
            if (group_) px_group_release(group_);
            group_ = std::exchange(o.group_, nullptr);
            device_ = o.device_, rank_ = o.rank_, size_ = o.size_;
        }
        return *this;
    }
    ProcessGroup(const ProcessGroup&) = delete;
    ProcessGroup& operator=(const ProcessGroup&) = delete;

    // Sums each tensor (on device(); float32, float64, int32, int64) with the
    // same-numbered tensor of every other member, in place. Every member
    // passes the same shapes and dtypes in the same order. Queued like an
    // op: a failure is reported by the next wait on the device.
    void all_reduce_sum(const std::vector<Tensor>& tensors) {
        if (!group_)
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                       "plexus::ProcessGroup: not a member any more (it left, or was moved from)");
        std::vector<px_tensor*> handles;
        handles.reserve(tensors.size());
        for (const auto& t : tensors) handles.push_back(t.handle());
        check(px_group_all_reduce_sum(group_, handles.data(), int32_t(handles.size())));
    }
    // Leaves now, once the queued work has run, and says if that failed
    // (the destructor cannot). Afterwards the group can no longer be used.
    void leave() {
        if (px_group* g = std::exchange(group_, nullptr)) check(px_group_release(g));
    }

    bool joined() const { return group_ != nullptr; }
    Device device() const { return device_; }
    int rank() const { return rank_; }
    int size() const { return size_; }
    px_group* raw() const { return group_; }

private:
    px_group* group_ = nullptr;
    Device device_;
    int rank_ = 0, size_ = 0;
};

}  // namespace plexus
