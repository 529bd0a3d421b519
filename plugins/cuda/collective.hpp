// All-reduce across this plugin's GPUs with NCCL. NCCL is opened with dlopen
// at the first all-reduce, so the plugin loads (and everything else works)
// where libnccl is missing; then all_reduce says so with PX_ERROR_UNSUPPORTED
// and the host sums through copies instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nccl.h>

namespace pxcuda {

class Device;
class Clique;

// The NCCL functions the plugin calls, looked up by name.
struct NcclApi {
    decltype(&ncclCommInitAll) comm_init_all = nullptr;
    decltype(&ncclCommDestroy) comm_destroy = nullptr;
    decltype(&ncclAllReduce) all_reduce = nullptr;
    decltype(&ncclGroupStart) group_start = nullptr;
    decltype(&ncclGroupEnd) group_end = nullptr;
    decltype(&ncclGetErrorString) error_string = nullptr;
    // For process groups (process_group.hpp).
    decltype(&ncclGetUniqueId) get_unique_id = nullptr;
    decltype(&ncclCommInitRankConfig) comm_init_rank_config = nullptr;
    decltype(&ncclCommGetAsyncError) comm_get_async_error = nullptr;
    decltype(&ncclCommFinalize) comm_finalize = nullptr;
    decltype(&ncclCommAbort) comm_abort = nullptr;
};

// NCCL's type for a px_dtype it can sum; throws Unsupported for the others.
ncclDataType_t nccl_type(int32_t dtype);

class Collectives {
public:
    Collectives();
    ~Collectives();  // destroys the communicators; the devices must still exist
    Collectives(const Collectives&) = delete;
    Collectives& operator=(const Collectives&) = delete;

    // Queues an in-place sum of `count` elements of `dtype` at data[i] on
    // devices[i]'s stream, for every i. The caller holds every device's lock.
    // Throws Unsupported when NCCL cannot be loaded, std::runtime_error
    // naming the NCCL error otherwise.
    void all_reduce_sum(const std::vector<Device*>& devices, const std::vector<void*>& data, size_t count,
                        int32_t dtype);

    // NCCL, loaded at the first call; throws Unsupported naming why it cannot be.
    const NcclApi& api();

private:
    Clique& clique_for(const std::vector<Device*>& devices);

    std::mutex mutex_;
    void* library_ = nullptr;
    NcclApi loaded_;
    const NcclApi* api_ = nullptr;  // &loaded_ once every function was found
    std::string load_error_;
    std::once_flag load_once_;
    std::map<std::vector<int>, std::unique_ptr<Clique>> cliques_;  // by device ordinals, in call order
};

}  // namespace pxcuda
