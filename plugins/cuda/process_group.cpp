#include "process_group.hpp"

#include <cstdio>
#include <thread>

#include "cuda_check.hpp"
#include "shutdown.hpp"

namespace pxcuda {

namespace {

double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string seconds(double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", s);
    return text;
}

}  // namespace

ProcessGroup::ProcessGroup(const NcclApi& nccl, Device& device, const ncclUniqueId& id, int rank, int size,
                           double timeout)
    : nccl_(nccl), device_(device), rank_(rank), size_(size), timeout_(timeout) {
    DeviceScope scope(device.ordinal);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // every call returns at once; settle() polls with a deadline
    ncclResult_t r = nccl_.comm_init_rank_config(&comm_, size, id, rank, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
        if (comm_) nccl_.comm_abort(comm_);
        throw DeviceFailure("ncclCommInitRankConfig: " + nccl_error(r));  // the destructor does not run
    }
    settle("joining the group (ncclCommInitRankConfig)");  // aborts comm_ when it throws
}

ProcessGroup::~ProcessGroup() {
    if (cuda_unusable()) return;  // its CUDA events and NCCL communicator go with the process
    if (comm_) nccl_.comm_abort(comm_);
    recycle_all();
    for (cudaEvent_t e : spare_) cudaEventDestroy(e);
}

cudaEvent_t ProcessGroup::record_event() {
    cudaEvent_t e = nullptr;
    if (spare_.empty()) {
        PX_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    } else {
        e = spare_.back();
        spare_.pop_back();
    }
    cudaError_t recorded = cudaEventRecord(e, device_.stream());
    if (recorded != cudaSuccess) {
        spare_.push_back(e);
        check_cuda(recorded, "cudaEventRecord");
    }
    return e;
}

void ProcessGroup::recycle_all() {
    for (const Queued& q : in_flight_)
        for (cudaEvent_t e : {q.before, q.after})
            if (e) spare_.push_back(e);
    in_flight_.clear();
    front_started_ = false;
}

std::string ProcessGroup::nccl_error(ncclResult_t r) const { return nccl_.error_string(r); }

std::string ProcessGroup::give_up(const std::string& why) {
    if (broken_.empty()) {
        broken_ = why;
        nccl_.comm_abort(comm_);  // its kernels return, so the stream drains
        comm_ = nullptr;
    }
    pending_ = false;
    return broken_;
}

void ProcessGroup::settle(const std::string& what) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        ncclResult_t state = ncclInProgress;
        ncclResult_t r = nccl_.comm_get_async_error(comm_, &state);
        if (r != ncclSuccess) state = r;
        if (state == ncclSuccess) return;
        if (state != ncclInProgress) throw DeviceFailure(give_up(what + ": " + nccl_error(state)));
        if (since(start) > timeout_)
            throw DeviceFailure(give_up(what + ": waited " + seconds(timeout_) + " s for the other " +
                                        std::to_string(size_ - 1) + " process(es); one has died or hangs"));
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
}

void ProcessGroup::all_reduce_sum(const px_group_call& call) {
    if (!broken_.empty()) throw DeviceFailure("the process group cannot be used any more: " + broken_);
    in_flight_.push_back(Queued{record_event(), nullptr});  // after the work before the collective
    ncclResult_t r = nccl_.group_start();
    for (int32_t i = 0; i < call.count && r == ncclSuccess; ++i) {
        const px_tensor_desc& t = call.tensors[i];
        size_t count = 1;
        for (int32_t k = 0; k < t.ndim; ++k) count *= size_t(t.shape[k]);
        void* data = static_cast<char*>(t.buffer->data) + t.offset;
        r = nccl_.all_reduce(data, data, count, nccl_type(t.dtype), ncclSum, comm_, device_.stream());
    }
    ncclResult_t end = nccl_.group_end();
    if (r == ncclSuccess || r == ncclInProgress) r = end;
    pending_ = true;
    if (r != ncclSuccess && r != ncclInProgress) throw DeviceFailure(give_up("ncclAllReduce: " + nccl_error(r)));
    settle("queuing the group's all-reduce");
    in_flight_.back().after = record_event();
}

std::string ProcessGroup::check() {
    if (!broken_.empty()) return broken_;
    ncclResult_t state = ncclSuccess;
    ncclResult_t r = nccl_.comm_get_async_error(comm_, &state);
    if (r != ncclSuccess) state = r;
    if (state != ncclSuccess && state != ncclInProgress)
        return give_up("the group's all-reduce failed (rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                       "): " + nccl_error(state));
    // Collectives seen finished are progress; the time-out counts from when
    // the oldest unfinished one could start (the work before it done), as
    // seen by this poll: it bounds a wait without progress, not a long queue
    // behind a slow peer that keeps up, nor the work queued between them.
    while (!in_flight_.empty()) {
        const Queued& q = in_flight_.front();
        if (q.after && cudaEventQuery(q.after) != cudaSuccess) break;  // no `after`: it was never queued
        for (cudaEvent_t e : {q.before, q.after})
            if (e) spare_.push_back(e);
        in_flight_.pop_front();
        front_started_ = false;
    }
    if (in_flight_.empty()) return "";
    if (!front_started_) {
        if (cudaEventQuery(in_flight_.front().before) != cudaSuccess) return "";
        front_started_ = true;
        started_at_ = std::chrono::steady_clock::now();
        return "";
    }
    if (since(started_at_) <= timeout_) return "";
    return give_up("the group's all-reduce (rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                   ") waited " + seconds(timeout_) + " s for the other " + std::to_string(size_ - 1) +
                   " process(es); one has died or hangs");
}

void ProcessGroup::drained() {
    pending_ = false;
    recycle_all();
}

void ProcessGroup::leave() noexcept {
    if (cuda_unusable()) {  // nothing can be waited for or freed: the communicator goes with the process
        comm_ = nullptr;
        device_.remove_watch(this);
        return;
    }
    try {
        DeviceScope scope(device_.ordinal);
        device_.wait();  // a late peer is given up on here, within the time-out
        if (comm_) {
            ncclResult_t r = nccl_.comm_finalize(comm_);
            if (r == ncclSuccess || r == ncclInProgress) settle("leaving the group (ncclCommFinalize)");
            nccl_.comm_destroy(comm_);  // settle() throws instead when it aborted
            comm_ = nullptr;
        }
    } catch (...) {  // settle() aborted the communicator: nothing is left to free
    }
    device_.remove_watch(this);
}

}  // namespace pxcuda
