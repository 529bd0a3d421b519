// NCCL for the CUDA emulator: the eleven functions the CUDA plugin looks up
// (collective.cpp), for communicators whose ranks all live in this process
// (ncclCommInitAll's devices, or ranks that join one id from several
// threads). As NCCL's, a collective is queued on each rank's stream (at
// ncclGroupEnd inside a group) and returns at once; a rank's part runs when
// its stream gets to it and finishes once every rank's part has arrived,
// summing in rank order into every rank's receive buffer. Until then that
// stream waits, as a GPU's waits in NCCL's kernel, and a rank that never
// arrives keeps it waiting until its communicator is aborted. Ranks in other
// processes never join: their communicators stay in progress, as NCCL's do
// while a peer is missing. A test can make a part's link fail as it runs
// (PLEXUS_EMU_NCCL_REMOTE_ERROR): it then waits until aborted, and the
// communicators report ncclRemoteError. Device memory is host memory here
// (emu_runtime.cpp).
#include <nccl.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "emu_driver_scope.hpp"
#include "emu_runtime.hpp"
#include "emu_streams.hpp"

namespace {

struct Op {
    const void* send;
    void* recv;
    size_t count;
    ncclDataType_t type;
    cudaStream_t stream;
    bool link_fails = false;  // an injected fault: the part never finishes
};

// One collective: each rank's part, where it was queued, and who has arrived.
struct Collective {
    explicit Collective(size_t ranks) : ops(ranks), at(ranks), arrived(ranks, false) {}
    std::vector<Op> ops;
    std::vector<px_emu::Position> at;  // empty until the rank queues its part
    std::vector<bool> arrived;
    bool done = false;
};

struct Clique {
    int size = 0;
    int joined = 0;
    std::vector<uint64_t> next;                             // per rank: the number of its next collective
    std::map<uint64_t, std::shared_ptr<Collective>> open;  // by number, until done
    std::vector<bool> aborted;                              // per rank
    ncclResult_t error = ncclSuccess;                       // parts that did not match, or a link that failed
};

}  // namespace

struct ncclComm {
    std::shared_ptr<Clique> clique;
    int rank = 0;
    std::vector<Op> in_group;  // queued by this thread's open group
};

namespace {

// Everything here is changed under the emulator's run lock, which the
// queued parts run under.
std::map<std::string, std::weak_ptr<Clique>> by_id;
// A group is per thread, as NCCL's (initial-exec: no dynamic TLS block).
__attribute__((tls_model("initial-exec"))) thread_local int group_depth = 0;
__attribute__((tls_model("initial-exec"))) thread_local std::vector<ncclComm_t> touched;

std::shared_ptr<Clique> make_clique(int size) {
    auto c = std::make_shared<Clique>();
    c->size = size;
    c->next.assign(size_t(size), 0);
    c->aborted.assign(size_t(size), false);
    return c;
}

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

ncclResult_t sum(const std::vector<Op>& ops) {
    for (const Op& op : ops)
        if (op.count != ops[0].count || op.type != ops[0].type) return ncclInvalidUsage;
    switch (ops[0].type) {
    case ncclFloat32: sum_into<float>(ops); return ncclSuccess;
    case ncclFloat64: sum_into<double>(ops); return ncclSuccess;
    case ncclInt32: sum_into<int32_t>(ops); return ncclSuccess;
    case ncclInt64: sum_into<int64_t>(ops); return ncclSuccess;
    default: return ncclInvalidArgument;
    }
}

// Rank r's part of x, run by its stream: true once it may go on. It runs
// the other ranks' streams up to their parts; the last to arrive sums.
bool arrive(Clique& c, Collective& x, size_t r) {
    if (x.done || c.aborted[r]) return true;  // an aborted communicator's kernels return
    if (x.ops[r].link_fails) {  // the peers are never heard from again
        if (c.error == ncclSuccess) c.error = ncclRemoteError;
        return false;
    }
    x.arrived[r] = true;
    for (size_t p = 0; p < x.arrived.size(); ++p)
        if (!x.arrived[p] && (!x.at[p].queue || !px_emu::run_until(x.at[p]))) return false;
    if (!x.done) {
        const ncclResult_t e = sum(x.ops);
        if (e != ncclSuccess && c.error == ncclSuccess) c.error = e;
        x.done = true;
    }
    return true;
}

// An injected fault or a lost device (px_emu::refused) as NCCL says it.
ncclResult_t refused(const char* fn, int device, bool allocates) {
    const cudaError_t e = px_emu::refused(fn, device, allocates);
    if (e == cudaSuccess) return ncclSuccess;
    return e == cudaErrorMemoryAllocation ? ncclSystemError : ncclUnhandledCudaError;
}

// Queues the parts this rank has gathered (the caller holds the run lock).
ncclResult_t flush(ncclComm_t comm) {
    Clique& c = *comm->clique;
    const size_t r = size_t(comm->rank);
    std::vector<std::shared_ptr<px_emu::Queue>> queues;
    for (const Op& op : comm->in_group) {  // every stream checked before any part is queued
        queues.push_back(px_emu::queue_of(op.stream));
        if (!queues.back()) {
            comm->in_group.clear();
            return ncclInvalidArgument;
        }
    }
    for (size_t i = 0; i < comm->in_group.size(); ++i) {
        std::shared_ptr<Collective>& slot = c.open[c.next[r]++];
        if (!slot) slot = std::make_shared<Collective>(size_t(c.size));
        const std::shared_ptr<Collective> x = slot;
        x->ops[r] = comm->in_group[i];
        x->at[r] = px_emu::enqueue(queues[i], [clique = comm->clique, x, r] { return arrive(*clique, *x, r); });
    }
    comm->in_group.clear();
    for (auto it = c.open.begin(); it != c.open.end();) it = it->second->done ? c.open.erase(it) : std::next(it);
    return ncclSuccess;
}

}  // namespace

extern "C" {

const char* ncclGetErrorString(ncclResult_t r) {
    px_emu::DriverScope driver;
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclInvalidArgument: return "invalid argument (NCCL emulator)";
    case ncclInvalidUsage: return "invalid usage (NCCL emulator)";
    case ncclInProgress: return "operation in progress";
    case ncclSystemError: return "unhandled system error (NCCL emulator: out of memory)";
    case ncclUnhandledCudaError: return "unhandled cuda error (NCCL emulator: the device is lost)";
    case ncclRemoteError: return "remote process exited or there was a network error (NCCL emulator)";
    default: return "NCCL emulator error";
    }
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
    px_emu::DriverScope driver;
    if (!id) return ncclInvalidArgument;
    std::random_device random;
    for (char& b : id->internal) b = char(random());
    return ncclSuccess;
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int*) {
    px_emu::DriverScope driver;
    if (!comms || ndev < 1) return ncclInvalidArgument;
    if (const ncclResult_t e = refused("ncclCommInitAll", px_emu::current_device(), true)) return e;
    std::lock_guard<std::recursive_mutex> lock(px_emu::run_lock());
    std::shared_ptr<Clique> clique = make_clique(ndev);
    clique->joined = ndev;
    for (int i = 0; i < ndev; ++i) {
        comms[i] = new ncclComm{clique, i, {}};
        px_emu::note_object(px_emu::Object::nccl_comm, comms[i], +1);
    }
    return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t*) {
    px_emu::DriverScope driver;
    if (!comm || nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
    if (const ncclResult_t e = refused("ncclCommInitRankConfig", px_emu::current_device(), true)) return e;
    std::lock_guard<std::recursive_mutex> lock(px_emu::run_lock());
    const std::string key(id.internal, sizeof id.internal);
    std::shared_ptr<Clique> clique = by_id[key].lock();
    if (!clique) {
        clique = make_clique(nranks);
        by_id[key] = clique;
    }
    if (clique->size != nranks) return ncclInvalidUsage;
    ++clique->joined;
    *comm = new ncclComm{clique, rank, {}};
    px_emu::note_object(px_emu::Object::nccl_comm, *comm, +1);
    return ncclSuccess;
}

// In progress while ranks have yet to join; then the first failed part's error.
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* state) {
    px_emu::DriverScope driver;
    if (!comm || !state) return ncclInvalidArgument;
    std::lock_guard<std::recursive_mutex> lock(px_emu::run_lock());
    const Clique& c = *comm->clique;
    *state = c.joined < c.size ? ncclInProgress : c.error;
    return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
    px_emu::DriverScope driver;
    ++group_depth;
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
    px_emu::DriverScope driver;
    if (group_depth == 0) return ncclInvalidUsage;
    if (--group_depth > 0) return ncclSuccess;
    std::lock_guard<std::recursive_mutex> lock(px_emu::run_lock());
    ncclResult_t r = ncclSuccess;
    for (ncclComm_t comm : touched)
        if (r == ncclSuccess) r = flush(comm);
    touched.clear();
    return r;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
    px_emu::DriverScope driver;
    if (!comm || op != ncclSum) return ncclInvalidArgument;
    if (type != ncclFloat32 && type != ncclFloat64 && type != ncclInt32 && type != ncclInt64) return ncclInvalidArgument;
    bool link_fails = false;
    if (const std::shared_ptr<px_emu::Queue> q = px_emu::queue_of(stream)) {
        if (const ncclResult_t e = refused("ncclAllReduce", px_emu::device_of(*q), false)) return e;
        link_fails = px_emu::link_fails("ncclAllReduce", px_emu::device_of(*q));
    }
    std::lock_guard<std::recursive_mutex> lock(px_emu::run_lock());
    comm->in_group.push_back(Op{send, recv, count, type, stream, link_fails});
    if (group_depth > 0) {
        touched.push_back(comm);
        return ncclSuccess;
    }
    return flush(comm);
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
    px_emu::DriverScope driver;
    return comm ? ncclSuccess : ncclInvalidArgument;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    px_emu::DriverScope driver;
    std::lock_guard<std::recursive_mutex> lock(px_emu::run_lock());
    if (comm) px_emu::note_object(px_emu::Object::nccl_comm, comm, -1);
    delete comm;
    return ncclSuccess;
}

// Its rank's queued parts return without summing, so its stream drains.
ncclResult_t ncclCommAbort(ncclComm_t comm) {
    px_emu::DriverScope driver;
    if (!comm) return ncclInvalidArgument;
    std::lock_guard<std::recursive_mutex> lock(px_emu::run_lock());
    comm->clique->aborted[size_t(comm->rank)] = true;
    px_emu::note_object(px_emu::Object::nccl_comm, comm, -1);
    delete comm;
    return ncclSuccess;
}

}  // extern "C"
