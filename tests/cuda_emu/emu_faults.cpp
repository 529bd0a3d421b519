// The CUDA emulator's failures: devices lost (by a kernel fault or an
// injected fault) and the faults a test injects (emu_faults.h), with the
// count of what the emulator holds, for a test's leak checks.
#include "emu_faults.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include "emu_runtime.hpp"

namespace {

constexpr int kMaxDevices = 8;  // PLEXUS_CUDA_EMU_DEVICES' bound

// Per device: the sticky error that lost its context, or cudaSuccess.
std::atomic<int> lost_code[kMaxDevices] = {};

std::atomic<long> held[int(px_emu::Object::count)] = {};

struct Armed {
    int fault = 0;  // 0: none
    std::string only;
    long nth = 0, seen = 0;
    std::thread::id thread;
    std::string fired;  // the function failed, once it is
    int device = -1;
};

std::atomic<bool> armed_any{false};  // the common case pays one load
std::mutex armed_mutex;
Armed armed;

}  // namespace

namespace px_emu {

void lose_device(int device, cudaError_t e) {
    if (device < 0 || device >= kMaxDevices) return;
    int none = cudaSuccess;
    lost_code[device].compare_exchange_strong(none, int(e));  // the first loss is the one reported
}

cudaError_t lost_error(int device) {
    if (device < 0 || device >= kMaxDevices) return cudaSuccess;
    return cudaError_t(lost_code[device].load());
}

namespace {

// Whether this call of `fn` on `device`, one that `fault` applies to, is the
// armed fault's nth (then it has fired).
bool fires(int fault, const char* fn, int device) {
    if (!armed_any.load(std::memory_order_acquire)) return false;
    std::lock_guard<std::mutex> lock(armed_mutex);
    Armed& a = armed;
    const bool counts = a.fault == fault && a.fired.empty() && a.thread == std::this_thread::get_id() &&
                        (a.only.empty() || a.only == fn);
    if (!counts || ++a.seen != a.nth) return false;
    a.fired = fn;
    a.device = device;
    return true;
}

}  // namespace

cudaError_t refused(const char* fn, int device, bool allocates) {
    if (allocates && fires(PLEXUS_EMU_OUT_OF_MEMORY, fn, device)) return cudaErrorMemoryAllocation;
    if (fires(PLEXUS_EMU_DEVICE_LOST, fn, device)) lose_device(device, cudaErrorLaunchFailure);
    return lost_error(device);
}

bool link_fails(const char* fn, int device) { return fires(PLEXUS_EMU_NCCL_REMOTE_ERROR, fn, device); }

bool reclaim_at_exit() {
    static const bool reclaim = [] {
        const char* v = std::getenv("PLEXUS_CUDA_EMU_EXIT");
        return v && std::string(v) == "reclaim";
    }();
    return reclaim;
}

void note_object(Object o, const void* handle, int delta) {
    held[int(o)] += delta;
    if (!reclaim_at_exit()) return;
    static auto* live = new std::pair<std::mutex, std::unordered_set<const void*>>;  // never destroyed
    std::lock_guard<std::mutex> lock(live->first);
    if (delta > 0) live->second.insert(handle);
    else live->second.erase(handle);
}

}  // namespace px_emu

extern "C" {

void plexus_emu_inject(int fault, const char* only, long nth) {
    std::lock_guard<std::mutex> lock(armed_mutex);
    armed = Armed{};
    armed.fault = fault;
    armed.only = only ? only : "";
    armed.nth = nth;
    armed.thread = std::this_thread::get_id();
    armed_any = fault != 0;
}

const char* plexus_emu_injected(void) {
    std::lock_guard<std::mutex> lock(armed_mutex);
    return armed.fired.empty() ? nullptr : armed.fired.c_str();
}

int plexus_emu_injected_device(void) {
    std::lock_guard<std::mutex> lock(armed_mutex);
    return armed.fired.empty() ? -1 : armed.device;
}

void plexus_emu_disarm(void) {
    std::lock_guard<std::mutex> lock(armed_mutex);
    armed.fault = 0;
    armed_any = false;
}

void plexus_emu_live_objects(plexus_emu_live* out) {
    if (!out) return;
    *out = plexus_emu_live{};
    px_emu::count_memory(out->device_blocks, out->host_blocks, out->streams);
    out->events = held[int(px_emu::Object::event)];
    out->pools = held[int(px_emu::Object::pool)];
    out->blas_handles = held[int(px_emu::Object::blas_handle)];
    out->nccl_comms = held[int(px_emu::Object::nccl_comm)];
}

int plexus_emu_revive(void) {
    if (!px_emu::reclaim_lost_memory()) return -1;
    for (std::atomic<int>& code : lost_code) code = cudaSuccess;
    return 0;
}

}  // extern "C"
