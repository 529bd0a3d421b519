// All-reduce across this plugin's GPUs with NCCL. NCCL is opened with dlopen
// at the first all-reduce, so the plugin loads (and everything else works)
// where libnccl is missing; then all_reduce says so with PX_ERROR_UNSUPPORTED
// and the host sums through copies instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nccl.h>

namespace pxcuda {

class Device;

class Collectives {
public:
    Collectives() = default;
    ~Collectives();  // destroys the communicators; the devices must still exist
    Collectives(const Collectives&) = delete;
    Collectives& operator=(const Collectives&) = delete;

    // Queues an in-place sum of `count` elements of `dtype` at data[i] on
    // devices[i]'s stream, for every i. The caller holds every device's lock.
    // Throws Unsupported when NCCL cannot be loaded, std::runtime_error
    // naming the NCCL error otherwise.
    void all_reduce_sum(const std::vector<Device*>& devices, const std::vector<void*>& data, size_t count,
                        int32_t dtype);

private:
    struct Api;
    const Api& api();
    std::vector<ncclComm_t>& comms_for(const std::vector<Device*>& devices);

    std::mutex mutex_;
    void* library_ = nullptr;
    const Api* api_ = nullptr;
    std::string load_error_;
    bool tried_ = false;
    std::map<std::vector<int>, std::vector<ncclComm_t>> comms_;  // by device ordinals, in call order
};

}  // namespace pxcuda
