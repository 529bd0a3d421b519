// The plugin keeps libgomp and OpenBLAS loaded (pinned_libraries.hpp); the
// leak it stops is host.a runtime without GPUs ... keeps no memory's.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "pinned_libraries.hpp"

namespace {
int a_function_of_the_program() { return 1; }
}  // namespace

TEST_CASE("the CPU plugin keeps libgomp and OpenBLAS loaded, and says why when it cannot", "[cpu][pinned]") {
    std::string why;
    CHECK(pxcpu::pin_runtime_libraries(why));
    CHECK(why.empty());

    const auto heap = std::make_unique<int>(7);
    CHECK_FALSE(pxcpu::pin_library_holding(heap.get(), "a heap block", why));
    CHECK(why == "the dynamic loader cannot say which file holds a heap block");

    // The program itself is no library that can be opened again.
    CHECK_FALSE(pxcpu::pin_library_holding(reinterpret_cast<const void*>(&a_function_of_the_program), "the program", why));
    CHECK(why.rfind("cannot keep the program (", 0) == 0);
    CHECK(why.find(") loaded: ") != std::string::npos);
}
