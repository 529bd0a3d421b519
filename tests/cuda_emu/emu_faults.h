/* Faults the CUDA emulator injects when a test asks (emu_faults.cpp), so
 * that a test can reach every error path of the CUDA plugin: the runtime,
 * cuBLAS or NCCL call it names fails as a GPU's would, and the test checks
 * what the plugin makes of it. Counting is per thread: only the calls made
 * by the thread that armed the fault count, so a sweep over n = 1, 2, ...
 * repeats call for call whatever other threads do. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

enum {
    /* A call that allocates (device or pinned memory, a stream, an event, a
     * pool, a cuBLAS handle, an NCCL communicator) runs out of memory:
     * cudaErrorMemoryAllocation, CUBLAS_STATUS_ALLOC_FAILED or
     * ncclSystemError. Nothing else changes; the next call may succeed. */
    PLEXUS_EMU_OUT_OF_MEMORY = 1,
    /* A call that uses a device's context finds it lost: it returns
     * cudaErrorLaunchFailure (CUBLAS_STATUS_EXECUTION_FAILED,
     * ncclUnhandledCudaError), and so does every later call on that device,
     * as after an unspecified launch failure on a GPU. */
    PLEXUS_EMU_DEVICE_LOST = 2,
    /* An NCCL collective (ncclAllReduce) is queued, but when its part runs
     * the link to the other ranks fails, as when a peer's network goes: the
     * part never finishes (its stream waits until the communicator is
     * aborted) and ncclCommGetAsyncError says ncclRemoteError. The devices
     * stay usable. */
    PLEXUS_EMU_NCCL_REMOTE_ERROR = 3
};

/* Arms `fault` for the nth (1: the next) call of its kind made by this
 * thread; `only`, when not NULL, counts only the function of that name
 * (e.g. "cudaEventRecord"). Replaces a fault armed before. */
void plexus_emu_inject(int fault, const char* only, long nth);
/* The function the armed fault failed, or NULL while it has not fired. */
const char* plexus_emu_injected(void);
/* The device the fired fault hit (-1: pinned host memory or none). */
int plexus_emu_injected_device(void);
/* Disarms the fault (fired or not). */
void plexus_emu_disarm(void);

/* What the emulator holds now: leak checks after a failure. */
typedef struct plexus_emu_live {
    long device_blocks; /* device allocations, every device */
    long host_blocks;   /* pinned host allocations */
    long streams, events, pools, blas_handles, nccl_comms;
} plexus_emu_live;
void plexus_emu_live_objects(plexus_emu_live* out);

/* Gives lost devices a fresh context, as a new process would see them: their
 * memory is reclaimed, as the driver does when a lost context goes. 0, or
 * -1 (nothing done) while a stream still lives: contexts made before must be
 * gone. */
int plexus_emu_revive(void);

#ifdef __cplusplus
}
#endif
