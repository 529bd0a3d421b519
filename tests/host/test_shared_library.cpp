// The CUDA plugin's way of opening cuBLAS and NCCL when it first needs them
// (plugins/cuda/shared_library.hpp): the first name that opens wins, and a
// failure names every name tried with the loader's reason.
#include <catch2/catch.hpp>

#include <string>

#include "../../plugins/cuda/shared_library.hpp"

TEST_CASE("a library opened on demand: the first name that opens, or every name tried with its reason",
          "[host][cuda-plugin]") {
    std::string tried;
    void* lib = pxcuda::open_first({"libplexus-no-such-library.so.9", "libz.so.1"}, tried);
    REQUIRE(lib != nullptr);
    unsigned long (*crc32)(unsigned long, const unsigned char*, unsigned) = nullptr;
    CHECK(pxcuda::find(lib, "crc32", crc32));
    CHECK(crc32(0, reinterpret_cast<const unsigned char*>("a"), 1) == 0xe8b7be43ul);
    void (*absent)() = nullptr;
    CHECK_FALSE(pxcuda::find(lib, "plexus_no_such_function", absent));
    CHECK(absent == nullptr);

    CHECK(pxcuda::open_first({"libplexus-no-such-library.so.9", "libplexus-nor-this.so"}, tried) == nullptr);
    CHECK(tried.find("libplexus-no-such-library.so.9: ") == 0);
    CHECK(tried.find("; libplexus-nor-this.so: ") != std::string::npos);
    CHECK(tried.find("cannot open shared object file") != std::string::npos);
}
