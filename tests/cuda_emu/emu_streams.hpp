// Streams in the CUDA emulator: work queued on a stream (a kernel, a copy, a
// set, a product, a free, a collective) runs in the stream's order, but only
// when something makes it: a synchronize or query of the stream or of an
// event recorded after it, a stream that waits for such an event and is made
// to run, a synchronous copy to the host, a cudaFree. This is the latest a
// GPU could run it, so a program that reads, reuses or frees memory before
// it has waited for the work that uses it sees the wrong bytes (or, under
// AddressSanitizer, a use after free) here as it might on a GPU, where a
// synchronous emulator would hide it. PLEXUS_CUDA_EMU_STREAMS=eager runs
// each piece of work as soon as it is queued instead (the earliest), and
// =random:SEED runs random pieces of random streams whenever work is queued,
// interleaving the streams differently for each seed.
//
// The legacy default stream (nullptr) is one per device and is not ordered
// with the non-blocking streams, as CUDA defines it; the emulator makes
// only non-blocking streams.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace px_emu {

// Queued work; it returns false while it cannot finish yet (a collective
// whose peers have not arrived) and is then run again later.
using Work = std::function<bool()>;

struct Queue;

// A point in a queue: everything queued on it up to `seq`.
struct Position {
    std::shared_ptr<Queue> queue;
    uint64_t seq = 0;
};

std::shared_ptr<Queue> make_queue(int device);
int device_of(const Queue& q);

// Held while work runs and while queues change: one piece of work at a time
// in the process. Recursive: work may run other queues' work it waits for.
std::recursive_mutex& run_lock();

// Queues `work` on q. In eager mode, runs what can run of q at once.
Position enqueue(const std::shared_ptr<Queue>& q, Work work);
// The end of everything queued on q so far.
Position end_of(const std::shared_ptr<Queue>& q);
// Whether the work up to p has run.
bool finished(const Position& p);
// Runs q's work up to p in order; false when work that cannot finish yet
// stops it (or q is already running: its front waits for this). Work on a
// lost device is dropped, as a lost context's is.
bool run_until(const Position& p);
// Blocks the calling thread until the work up to p has run, retrying while
// blocked work waits for another thread. The caller must not hold run_lock.
void wait_until(const Position& p);

}  // namespace px_emu
