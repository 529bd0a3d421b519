#include "clique.hpp"

#include "cuda_check.hpp"
#include "shutdown.hpp"

namespace pxcuda {

Clique::Clique(const NcclApi& nccl, std::vector<Device*> devices) : nccl_(nccl), devices_(std::move(devices)) {
    std::vector<int> ordinals;
    for (Device* d : devices_) ordinals.push_back(d->ordinal);
    comms_.resize(devices_.size());
    const ncclResult_t r = nccl_.comm_init_all(comms_.data(), int(comms_.size()), ordinals.data());
    if (r != ncclSuccess) throw std::runtime_error(std::string("ncclCommInitAll: ") + nccl_.error_string(r));
    for (size_t i = 0; i < devices_.size(); ++i) {
        watches_.push_back(std::make_unique<Member>(*this, i));
        devices_[i]->add_watch(watches_.back().get());
    }
}

Clique::~Clique() {
    for (size_t i = 0; i < devices_.size(); ++i) devices_[i]->remove_watch(watches_[i].get());
    if (cuda_unusable()) return;  // NCCL's communicators go with the process
    for (ncclComm_t c : comms_)
        if (c) nccl_.comm_destroy(c);
}

std::string Clique::members() const {
    std::string list;
    for (Device* d : devices_) list += (list.empty() ? "" : ", ") + std::string("gpu(") + std::to_string(d->ordinal) + ")";
    return list;
}

bool Clique::broken() {
    std::lock_guard<std::mutex> lock(mutex_);
    return !broken_.empty();
}

void Clique::all_reduce_sum(const std::vector<void*>& data, size_t count, ncclDataType_t type) {
    std::vector<bool> pending_before;
    for (auto& w : watches_) pending_before.push_back(w->pending_);
    // One group, so NCCL launches on every GPU before any of them waits.
    ncclResult_t r = nccl_.group_start();
    for (size_t i = 0; i < devices_.size() && r == ncclSuccess; ++i) {
        DeviceScope scope(devices_[i]->ordinal);
        r = nccl_.all_reduce(data[i], data[i], count, type, ncclSum, comms_[i], devices_[i]->stream());
        watches_[i]->pending_ = true;  // even a part NCCL refused: the group may have queued the others
    }
    const ncclResult_t end = nccl_.group_end();
    if (r == ncclSuccess) r = end;
    if (r != ncclSuccess) {
        const std::string why = std::string("ncclAllReduce: ") + nccl_.error_string(r);
        std::lock_guard<std::mutex> lock(mutex_);
        abort(why);  // parts already queued must not wait for the ones that were not
        // This sum's failure is reported here; an earlier sum the abort cut
        // short is still reported by its member's next wait.
        for (size_t i = 0; i < watches_.size(); ++i) watches_[i]->pending_ = pending_before[i];
        throw std::runtime_error(why);
    }
}

std::string Clique::check(size_t i) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.empty()) return broken_;
    // A member whose context is lost never runs its part. Its stream says
    // so without its lock (CUDA's calls are thread-safe; the stream is fixed).
    for (size_t j = 0; j < devices_.size(); ++j) {
        if (j == i) continue;
        const cudaError_t e = cudaStreamQuery(devices_[j]->stream());
        if (e == cudaSuccess || e == cudaErrorNotReady) continue;
        cudaGetLastError();  // not this device's error
        abort("gpu(" + std::to_string(devices_[j]->ordinal) + ") failed (" + cudaGetErrorName(e) + ")");
        return broken_;
    }
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = nccl_.comm_get_async_error(comms_[i], &state);
    if (r != ncclSuccess) state = r;
    if (state != ncclSuccess && state != ncclInProgress) abort(std::string("NCCL: ") + nccl_.error_string(state));
    return broken_;
}

void Clique::abort(const std::string& why) {
    if (!broken_.empty()) return;
    broken_ = "the all-reduce over " + members() + " was abandoned: " + why;
    for (ncclComm_t& c : comms_) {
        if (c) nccl_.comm_abort(c);  // its kernels return, so its stream drains
        c = nullptr;
    }
}

}  // namespace pxcuda
