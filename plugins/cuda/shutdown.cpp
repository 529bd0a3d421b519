#include "shutdown.hpp"

#include <atomic>
#include <cstdlib>

namespace pxcuda {
namespace {

// Trivially destructible: readable at any point of the exit.
std::atomic<bool> g_shut_down{false};
std::atomic<bool> g_watching{false};

void on_exit() { g_shut_down.store(true); }

}  // namespace

void watch_for_exit() noexcept {
    if (g_watching.exchange(true)) return;
    // In a shared library, atexit registers with the library's handle: the
    // handler also runs if the plugin is unloaded first, which is harmless.
    if (std::atexit(on_exit) != 0) g_watching.store(false);
}

bool cuda_shut_down() noexcept { return g_shut_down.load(); }

bool shut_down_by(cudaError_t e) noexcept {
    if (e != cudaErrorCudartUnloading) return false;
    g_shut_down.store(true);
    return true;
}

}  // namespace pxcuda
