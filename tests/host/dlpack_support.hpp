// What the DLPack tests share: a runtime per test, the last error's words,
// tensors from and to host values, and a producer's DLPack tensor over memory
// the test owns that counts its deleter's calls.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "plexus/dlpack.h"
#include "plexus/plexus.h"

namespace dlpack_test {

inline const px_device cpu0{PX_DEVICE_CPU, 0};

// The CPU plugin's libraries (OpenBLAS, OpenMP) allocate when they are loaded
// and hold it until exit. A runtime kept for the whole process keeps them
// loaded, so that LeakSanitizer does not count that as leaked once the tests'
// runtimes are destroyed and the plugin would otherwise be unloaded.
inline void keep_cpu_plugin_loaded() {
    static px_runtime* kept = [] {
        const char* paths[] = {PLEXUS_CPU_PLUGIN_FILE};
        px_runtime_options o{sizeof o, paths, 1, 1, 0};
        px_runtime* r = nullptr;
        REQUIRE(px_runtime_create(&o, &r) == PX_OK);
        return r;
    }();
    (void)kept;
}

struct Rt {
    px_runtime* rt = nullptr;
    explicit Rt(const std::vector<std::string>& plugins = {PLEXUS_CPU_PLUGIN_FILE}) {
        keep_cpu_plugin_loaded();
        std::vector<const char*> paths;
        paths.reserve(plugins.size());
        for (const auto& p : plugins) paths.push_back(p.c_str());
        px_runtime_options o{sizeof o, paths.data(), static_cast<int32_t>(paths.size()), 1, 0};
        REQUIRE(px_runtime_create(&o, &rt) == PX_OK);
    }
    ~Rt() {
        if (rt) px_runtime_destroy(rt);
    }
    Rt(const Rt&) = delete;
    Rt& operator=(const Rt&) = delete;
};

inline bool says(const std::string& needle) {
    const std::string e = px_last_error();
    const bool found = e.find(needle) != std::string::npos;
    if (!found) UNSCOPED_INFO("last error: " << e);
    return found;
}

template <class T>
px_tensor* from_values(px_runtime* rt, px_dtype dtype, const std::vector<T>& v, std::vector<int64_t> shape,
                       px_device dev = cpu0) {
    px_tensor* t = nullptr;
    REQUIRE(px_tensor_from_host(rt, dev, dtype, static_cast<int32_t>(shape.size()), shape.data(), v.data(),
                                v.size() * sizeof(T), &t) == PX_OK);
    return t;
}

template <class T>
std::vector<T> values(px_tensor* t) {
    int64_t n = 0;
    REQUIRE(px_tensor_numel(t, &n) == PX_OK);
    std::vector<T> v(static_cast<size_t>(n));
    REQUIRE(px_tensor_to_host(t, v.data(), v.size() * sizeof(T)) == PX_OK);
    return v;
}

// A producer's DLPack tensor over memory the test owns, counting deleter calls.
struct Produced {
    std::vector<int64_t> shape, strides;
    int deleted = 0;
    DLManagedTensor plain{};
    DLManagedTensorVersioned versioned{};

    Produced(void* data, DLDataType dtype, std::vector<int64_t> shp, std::vector<int64_t> str, uint64_t offset = 0,
             DLDevice device = DLDevice{kDLCPU, 0})
        : shape(std::move(shp)), strides(std::move(str)) {
        DLTensor t{};
        t.data = data;
        t.device = device;
        t.ndim = static_cast<int32_t>(shape.size());
        t.dtype = dtype;
        t.shape = shape.data();
        t.strides = strides.empty() ? nullptr : strides.data();
        t.byte_offset = offset;
        plain.dl_tensor = t;
        plain.manager_ctx = this;
        plain.deleter = [](DLManagedTensor* self) { ++static_cast<Produced*>(self->manager_ctx)->deleted; };
        versioned.version = DLPackVersion{1, 0};
        versioned.dl_tensor = t;
        versioned.manager_ctx = this;
        versioned.deleter = [](DLManagedTensorVersioned* self) { ++static_cast<Produced*>(self->manager_ctx)->deleted; };
    }
};

}  // namespace dlpack_test
