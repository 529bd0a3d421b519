/* Process groups for the test plugin (plugin ABI 1.3), so that the host's
 * side of them (ids, ranks, checks, a time-out reaching the next wait, and
 * libplexus-mpi's use of them) is tested without GPUs; NCCL's side needs
 * GPUs. Built two ways:
 *   - with GROUP_WITH_MPI (tests/mpi): a group is MPI_COMM_WORLD's
 *     processes, and its all-reduce is MPI_Iallreduce on the host-memory
 *     buffers, polled against the group's time-out;
 *   - without: only groups of one process, whose all-reduce changes nothing.
 * The plugin runs work when it is queued, so a time-out is kept and
 * reported by the next wait, as a device that runs later would report it.
 * Faults for the tests of the paths that handle them, set in the environment:
 *   GROUP_TEST_NO_ID=1            group_make_id says its library is missing;
 *   GROUP_TEST_NULL_GROUP=1       group_join succeeds with a NULL group;
 *   GROUP_TEST_JOIN_FAILS_ON=R    group_join fails on rank R. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef GROUP_WITH_MPI
#include <limits.h>
#include <mpi.h>
#endif

#include "group_slots.h"

#define ID_MAGIC "plexus test group"

struct px_plugin_group {
    int32_t rank, size;
    double timeout;
    int broken; /* a collective timed out: the group cannot be used again */
#ifdef GROUP_WITH_MPI
    MPI_Comm comm;
#endif
};

static px_status group_say(px_plugin_error* err, px_status s, const char* msg) {
    snprintf(err->message, sizeof err->message, "%s", msg);
    return s;
}

px_status fault_group_make_id(px_plugin_context* ctx, int32_t device, px_group_id* id, px_plugin_error* err) {
    static unsigned counter;
    struct timespec now;
    uint64_t nonce;
    (void)ctx, (void)device;
    if (getenv("GROUP_TEST_NO_ID"))
        return group_say(err, PX_ERROR_UNSUPPORTED, "simulated: the collective library is missing");
    clock_gettime(CLOCK_REALTIME, &now);
    nonce = ((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec) ^ ((uint64_t)getpid() << 40) ^ ++counter;
    memset(id->bytes, 0, sizeof id->bytes);
    memcpy(id->bytes, ID_MAGIC, sizeof ID_MAGIC);
    memcpy(id->bytes + 64, &nonce, sizeof nonce);
    return PX_OK;
}

#ifdef GROUP_WITH_MPI
static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Polls `request` until it completes (1) or `timeout` seconds pass (0). */
static int finish(MPI_Request* request, double timeout) {
    const double deadline = seconds() + timeout;
    struct timespec pause = {0, 20000};
    for (;;) {
        int done = 0;
        if (MPI_Test(request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return 0;
        if (done) return 1;
        if (seconds() > deadline) return 0;
        nanosleep(&pause, NULL);
    }
}

/* Every process must join with the same id: compare the byte-wise min and max. */
static px_status same_id_everywhere(const px_group_id* id, double timeout, px_plugin_error* err) {
    unsigned char lo[PX_GROUP_ID_BYTES], hi[PX_GROUP_ID_BYTES];
    MPI_Request r[2];
    MPI_Iallreduce(id->bytes, lo, PX_GROUP_ID_BYTES, MPI_UNSIGNED_CHAR, MPI_MIN, MPI_COMM_WORLD, &r[0]);
    MPI_Iallreduce(id->bytes, hi, PX_GROUP_ID_BYTES, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD, &r[1]);
    if (!finish(&r[0], timeout) || !finish(&r[1], timeout))
        return group_say(err, PX_ERROR_DEVICE, "joining: the other processes did not join within the time-out");
    if (memcmp(lo, hi, sizeof lo) != 0)
        return group_say(err, PX_ERROR_INVALID_ARGUMENT, "joining: the processes were given different group ids");
    return PX_OK;
}

static MPI_Datatype mpi_type(int32_t dtype) {
    switch (dtype) {
    case PX_FLOAT32: return MPI_FLOAT;
    case PX_FLOAT64: return MPI_DOUBLE;
    case PX_INT32: return MPI_INT32_T;
    default: return MPI_INT64_T;
    }
}
#endif

px_status fault_group_join(px_plugin_context* ctx, int32_t device, const px_group_id* id, int32_t rank, int32_t size,
                           double timeout_seconds, px_plugin_group** out, px_plugin_error* err) {
    px_plugin_group* g;
    (void)ctx, (void)device;
    const char* fails_on = getenv("GROUP_TEST_JOIN_FAILS_ON");
    if (memcmp(id->bytes, ID_MAGIC, sizeof ID_MAGIC) != 0)
        return group_say(err, PX_ERROR_INVALID_ARGUMENT, "the id's bytes are not a group id of this plugin");
    if (fails_on && atoi(fails_on) == rank) return group_say(err, PX_ERROR_DEVICE, "simulated: this rank cannot join");
    if (getenv("GROUP_TEST_NULL_GROUP")) {
        *out = NULL;
        return PX_OK;
    }
    g = (px_plugin_group*)calloc(1, sizeof *g);
    if (!g) return group_say(err, PX_ERROR_OUT_OF_MEMORY, "no memory for the group");
    g->rank = rank, g->size = size, g->timeout = timeout_seconds;
    if (size > 1) {
#ifdef GROUP_WITH_MPI
        int initialized = 0, world_rank = -1, world_size = 0;
        px_status s;
        MPI_Request r;
        char msg[160];
        MPI_Initialized(&initialized);
        if (!initialized) {
            free(g);
            return group_say(err, PX_ERROR_UNSUPPORTED, "groups of several processes need MPI, which is not initialized");
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &world_size);
        if (world_rank != rank || world_size != size) {
            free(g);
            snprintf(msg, sizeof msg, "rank %d of %d is not this process's place in MPI_COMM_WORLD (rank %d of %d)",
                     (int)rank, (int)size, world_rank, world_size);
            return group_say(err, PX_ERROR_INVALID_ARGUMENT, msg);
        }
        s = same_id_everywhere(id, timeout_seconds, err);
        if (s == PX_OK) {
            MPI_Comm_idup(MPI_COMM_WORLD, &g->comm, &r);
            if (!finish(&r, timeout_seconds)) s = group_say(err, PX_ERROR_DEVICE, "joining: MPI_Comm_idup timed out");
        }
        if (s != PX_OK) {
            free(g);
            return s;
        }
#else
        free(g);
        return group_say(err, PX_ERROR_UNSUPPORTED, "this test plugin was built without MPI: groups of one process only");
#endif
    }
    *out = g;
    return PX_OK;
}

px_status fault_group_all_reduce(px_plugin_context* ctx, px_plugin_group* g, const px_group_call* call,
                                 px_plugin_error* err) {
    const char* problem = px_group_call_problem(call);
    if (problem) return group_say(err, PX_ERROR_INVALID_ARGUMENT, problem);
    if (g->broken) return group_say(err, PX_ERROR_DEVICE, "the group timed out before and cannot be used again");
    (void)ctx;
#ifdef GROUP_WITH_MPI
    if (g->size > 1) {
        int32_t i, k;
        for (i = 0; i < call->count; ++i) {
            const px_tensor_desc* t = &call->tensors[i];
            int64_t n = 1;
            MPI_Request r;
            for (k = 0; k < t->ndim; ++k) n *= t->shape[k];
            if (n > INT_MAX) return group_say(err, PX_ERROR_UNSUPPORTED, "a tensor has more elements than one MPI call carries");
            MPI_Iallreduce(MPI_IN_PLACE, fault_tensor_data(t), (int)n, mpi_type(t->dtype), MPI_SUM, g->comm, &r);
            if (!finish(&r, g->timeout)) {
                char msg[160];
                g->broken = 1; /* the request stays pending: the job is going down */
                snprintf(msg, sizeof msg, "group all_reduce: waited %g s for the other %d process(es); one has died or hangs",
                         g->timeout, (int)g->size - 1);
                fault_fail_later(ctx, msg);
                return PX_OK;
            }
        }
    }
#endif
    return PX_OK;
}

void fault_group_leave(px_plugin_context* ctx, px_plugin_group* g) {
    (void)ctx;
#ifdef GROUP_WITH_MPI
    if (g->size > 1 && !g->broken) MPI_Comm_free(&g->comm);
#endif
    free(g);
}
