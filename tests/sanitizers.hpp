// Which sanitizer a test is built under, for GCC (__SANITIZE_*__) and clang
// (__has_feature), whose sanitizer builds CI both runs (tools/run-sanitizers.sh).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define PXTEST_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define PXTEST_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PXTEST_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define PXTEST_TSAN 1
#endif
#endif
