#include "collective.hpp"

#include "clique.hpp"
#include "cuda_check.hpp"
#include "device.hpp"
#include "shared_library.hpp"

// Where NCCL is looked for; the CUDA emulator's build names its own
// (tests/cuda_emu/emu_nccl.cpp).
#ifndef PXCUDA_NCCL_LIBRARIES
#define PXCUDA_NCCL_LIBRARIES "libnccl.so.2", "libnccl.so"
#endif

namespace pxcuda {

ncclDataType_t nccl_type(int32_t dtype) {
    switch (dtype) {
    case PX_FLOAT32: return ncclFloat32;
    case PX_FLOAT64: return ncclFloat64;
    case PX_INT32: return ncclInt32;
    case PX_INT64: return ncclInt64;
    default: {
        const char* name = px_dtype_name(dtype);
        throw Unsupported(std::string("all_reduce on ") + (name ? name : "an unknown dtype") + " is not implemented");
    }
    }
}

const NcclApi& Collectives::api() {
    // Once per context, whichever thread (an all-reduce, a group) comes first.
    std::call_once(load_once_, [this] {
        NcclApi& loaded = loaded_;
        std::string tried;
        library_ = open_first({PXCUDA_NCCL_LIBRARIES}, tried);
        if (!library_) {
            load_error_ = "NCCL is not available (" + tried + ")";
        } else if (!find(library_, "ncclCommInitAll", loaded.comm_init_all) ||
                   !find(library_, "ncclCommDestroy", loaded.comm_destroy) ||
                   !find(library_, "ncclAllReduce", loaded.all_reduce) ||
                   !find(library_, "ncclGroupStart", loaded.group_start) ||
                   !find(library_, "ncclGroupEnd", loaded.group_end) ||
                   !find(library_, "ncclGetErrorString", loaded.error_string) ||
                   !find(library_, "ncclGetUniqueId", loaded.get_unique_id) ||
                   !find(library_, "ncclCommInitRankConfig", loaded.comm_init_rank_config) ||
                   !find(library_, "ncclCommGetAsyncError", loaded.comm_get_async_error) ||
                   !find(library_, "ncclCommFinalize", loaded.comm_finalize) ||
                   !find(library_, "ncclCommAbort", loaded.comm_abort)) {
            load_error_ = "the NCCL library found lacks a function the plugin needs";
        } else {
            api_ = &loaded;
        }
    });
    if (!api_) throw Unsupported(load_error_);
    return *api_;
}

Clique& Collectives::clique_for(const std::vector<Device*>& devices) {
    std::vector<int> ordinals;
    ordinals.reserve(devices.size());
    for (Device* d : devices) ordinals.push_back(d->ordinal);
    std::unique_ptr<Clique>& slot = cliques_[ordinals];
    if (slot && slot->broken()) slot.reset();  // aborted: new communicators for the devices still working
    if (!slot) slot = std::make_unique<Clique>(api(), devices);
    return *slot;
}

void Collectives::all_reduce_sum(const std::vector<Device*>& devices, const std::vector<void*>& data, size_t count,
                                 int32_t dtype) {
    std::lock_guard<std::mutex> lock(mutex_);
    api();  // a missing NCCL is reported before a dtype it would not sum
    const ncclDataType_t type = nccl_type(dtype);
    clique_for(devices).all_reduce_sum(data, count, type);
}

Collectives::Collectives() = default;  // here, where Clique is complete

Collectives::~Collectives() {
    cliques_.clear();  // before the library's functions could go
    // The library stays loaded: NCCL keeps threads that may outlive this.
}

}  // namespace pxcuda
