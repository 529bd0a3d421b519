/* How the CPU plugin's OpenMP threads wait (issue 37, item 17).
 *
 * libgomp's threads wait for work at a barrier by spinning GOMP_SPINCOUNT
 * times (300000 by default: some milliseconds) before they sleep. On a
 * machine whose cores other processes also use, a spinning thread takes the
 * core that the thread it waits for needs: LeNet epochs took 8-12 s instead
 * of 0.85 s beside one busy process. OMP_WAIT_POLICY=passive (never spin)
 * restores that but costs a wake-up at every barrier on a quiet machine.
 * So the plugin bounds the spin, as its device queue does (50 us, then
 * sleep): GOMP_SPINCOUNT=PXCPU_SPINCOUNT unless the user chose a policy
 * (OMP_WAIT_POLICY or GOMP_SPINCOUNT set: theirs is kept). Figures:
 * docs/performance.md, "OpenMP threads beside a busy process".
 *
 * libgomp reads its environment once, in its own initializer, so this runs
 * in this small library's initializer instead of the plugin's: the plugin
 * lists it after libgomp among the libraries it needs
 * (plugins/cpu/CMakeLists.txt), and the dynamic loader initializes a
 * library listed later first when neither needs the other. Where libgomp
 * was loaded before the plugin (a program that uses OpenMP itself), its
 * policy is the program's. Plain C: it needs nothing but the C library. */
#include <stdlib.h>

#define PXCPU_SPINCOUNT "1000"

static const char* policy = "not chosen";

__attribute__((constructor)) static void choose_openmp_wait_policy(void) {
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) {
        policy = "the user's (OMP_WAIT_POLICY or GOMP_SPINCOUNT set)";
        return;
    }
    if (setenv("GOMP_SPINCOUNT", PXCPU_SPINCOUNT, 0) == 0) policy = "GOMP_SPINCOUNT=" PXCPU_SPINCOUNT " (the plugin's)";
}

/* What was chosen, for the plugin and for tests. */
__attribute__((visibility("default"))) const char* pxcpu_openmp_wait_policy(void) { return policy; }
