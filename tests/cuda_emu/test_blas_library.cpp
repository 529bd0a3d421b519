// How the CUDA plugin opens cuBLAS (plugins/cuda/blas_library.cpp): the
// library that loads first is used when it has every entry point; otherwise
// the reason names every name tried, or the library's path and the
// function it lacks (it said "lacks a function the plugin needs", naming
// neither), and nothing is left filled in.
#include <catch2/catch.hpp>

#include <string>

#include "blas_library.hpp"

namespace {
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("cuBLAS opened on demand: the emulator's has every entry point the plugin needs", "[emulator][blas]") {
    pxcuda::BlasApi api{};
    CHECK(pxcuda::open_blas_library({"libplexus-no-such-cublas.so", PLEXUS_CUDART_EMU_FILE}, api).empty());
    CHECK(api.cublasCreate != nullptr);
    CHECK(api.cublasDestroy != nullptr);
    CHECK(api.cublasSetStream != nullptr);
    CHECK(api.cublasGemmStridedBatchedEx != nullptr);
}

TEST_CASE("cuBLAS opened on demand: a library that lacks an entry point is named with the function",
          "[emulator][blas]") {
    pxcuda::BlasApi api{};
    const std::string partial = pxcuda::open_blas_library({PLEXUS_PARTIAL_CUBLAS_FILE}, api);
    CHECK(partial == std::string("the cuBLAS library found (") + PLEXUS_PARTIAL_CUBLAS_FILE +
                         ") lacks cublasGemmStridedBatchedEx, which the plugin needs");
    CHECK(api.cublasCreate == nullptr);  // nothing half filled in
    CHECK(api.cublasSetStream == nullptr);

    const std::string zlib = pxcuda::open_blas_library({"libz.so.1"}, api);
    CHECK(has(zlib, "the cuBLAS library found ("));
    CHECK(has(zlib, "libz.so.1) lacks cublasCreate_v2, which the plugin needs"));
    CHECK(api.cublasCreate == nullptr);
}

TEST_CASE("cuBLAS opened on demand: no library that loads names each one tried with the loader's reason",
          "[emulator][blas]") {
    pxcuda::BlasApi api{};
    const std::string none = pxcuda::open_blas_library({"libplexus-no-such-cublas.so", "libplexus-nor-this.so.12"}, api);
    CHECK(has(none, "cuBLAS could not be opened (libplexus-no-such-cublas.so: "));
    CHECK(has(none, "; libplexus-nor-this.so.12: "));
    CHECK(has(none, "cannot open shared object file"));
    CHECK(api.cublasCreate == nullptr);
}
