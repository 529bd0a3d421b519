// NCCL for the CUDA emulator: the eleven functions the CUDA plugin looks up
// (collective.cpp), for communicators whose ranks all live in this process
// (ncclCommInitAll's devices, or ranks that join one id from several
// threads). Operations between ncclGroupStart and ncclGroupEnd are queued per
// rank; a collective runs once every rank of its communicator has queued it,
// summing in rank order into every rank's receive buffer. Device memory is
// host memory here (emu_runtime.cpp). Ranks in other processes never join:
// their communicators stay in progress, as NCCL's do while a peer is missing.
#include <nccl.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace {

struct Op {
    const void* send;
    void* recv;
    size_t count;
    ncclDataType_t type;
};

struct Clique {
    int size = 0;
    int joined = 0;
    std::vector<std::deque<Op>> queued;  // per rank
};

}  // namespace

struct ncclComm {
    std::shared_ptr<Clique> clique;
    int rank = 0;
    std::vector<Op> in_group;  // queued by this thread's open group
};

namespace {

std::mutex mutex;
std::map<std::string, std::weak_ptr<Clique>> by_id;
// A group is per thread, as NCCL's (initial-exec: no dynamic TLS block).
__attribute__((tls_model("initial-exec"))) thread_local int group_depth = 0;
__attribute__((tls_model("initial-exec"))) thread_local std::vector<ncclComm_t> touched;

template <class T>
void sum_into(const std::vector<Op>& ops) {
    const size_t n = ops[0].count;
    std::vector<T> total(n, T(0));
    for (const Op& op : ops) {
        const T* in = static_cast<const T*>(op.send);
        for (size_t i = 0; i < n; ++i) total[i] += in[i];
    }
    for (const Op& op : ops) std::memcpy(op.recv, total.data(), n * sizeof(T));
}

// Runs every collective that all ranks have queued (the caller holds the lock).
ncclResult_t run_ready(Clique& c) {
    for (;;) {
        for (const auto& q : c.queued)
            if (q.empty()) return ncclSuccess;
        std::vector<Op> ops;
        for (auto& q : c.queued) {
            ops.push_back(q.front());
            q.pop_front();
        }
        for (const Op& op : ops)
            if (op.count != ops[0].count || op.type != ops[0].type) return ncclInvalidUsage;
        switch (ops[0].type) {
        case ncclFloat32: sum_into<float>(ops); break;
        case ncclFloat64: sum_into<double>(ops); break;
        case ncclInt32: sum_into<int32_t>(ops); break;
        case ncclInt64: sum_into<int64_t>(ops); break;
        default: return ncclInvalidArgument;
        }
    }
}

ncclResult_t flush(ncclComm_t comm) {
    for (const Op& op : comm->in_group) comm->clique->queued[size_t(comm->rank)].push_back(op);
    comm->in_group.clear();
    return run_ready(*comm->clique);
}

}  // namespace

extern "C" {

const char* ncclGetErrorString(ncclResult_t r) {
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclInvalidArgument: return "invalid argument (NCCL emulator)";
    case ncclInvalidUsage: return "invalid usage (NCCL emulator)";
    case ncclInProgress: return "operation in progress";
    default: return "NCCL emulator error";
    }
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
    if (!id) return ncclInvalidArgument;
    std::random_device random;
    for (char& b : id->internal) b = char(random());
    return ncclSuccess;
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int*) {
    if (!comms || ndev < 1) return ncclInvalidArgument;
    auto clique = std::make_shared<Clique>();
    clique->size = clique->joined = ndev;
    clique->queued.resize(size_t(ndev));
    for (int i = 0; i < ndev; ++i) comms[i] = new ncclComm{clique, i, {}};
    return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t*) {
    if (!comm || nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
    std::lock_guard<std::mutex> lock(mutex);
    const std::string key(id.internal, sizeof id.internal);
    std::shared_ptr<Clique> clique = by_id[key].lock();
    if (!clique) {
        clique = std::make_shared<Clique>();
        clique->size = nranks;
        clique->queued.resize(size_t(nranks));
        by_id[key] = clique;
    }
    if (clique->size != nranks) return ncclInvalidUsage;
    ++clique->joined;
    *comm = new ncclComm{clique, rank, {}};
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* state) {
    if (!comm || !state) return ncclInvalidArgument;
    std::lock_guard<std::mutex> lock(mutex);
    const Clique& c = *comm->clique;
    bool waiting = c.joined < c.size;
    for (const auto& q : c.queued) waiting = waiting || !q.empty();
    *state = waiting ? ncclInProgress : ncclSuccess;
    return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
    ++group_depth;
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
    if (group_depth == 0) return ncclInvalidUsage;
    if (--group_depth > 0) return ncclSuccess;
    std::lock_guard<std::mutex> lock(mutex);
    ncclResult_t r = ncclSuccess;
    for (ncclComm_t comm : touched)
        if (r == ncclSuccess) r = flush(comm);
    touched.clear();
    return r;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t) {
    if (!comm || op != ncclSum) return ncclInvalidArgument;
    std::lock_guard<std::mutex> lock(mutex);
    comm->in_group.push_back(Op{send, recv, count, type});
    if (group_depth > 0) {
        touched.push_back(comm);
        return ncclSuccess;
    }
    return flush(comm);
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) { return comm ? ncclSuccess : ncclInvalidArgument; }

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    std::lock_guard<std::mutex> lock(mutex);
    delete comm;
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) { return ncclCommDestroy(comm); }

}  // extern "C"
