// A parameter or data file that is not a regular file (issue 37, item 8): a
// FIFO blocked the open forever, and a folder given to read_idx was called
// "corrupt compressed data". Each is now refused at once, naming the path and
// what it is.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "../host/hang_guard.hpp"
#include "plexus/data.hpp"
#include "plexus/nn.hpp"
#include "../support.hpp"

using namespace plexus;

namespace {

std::string temp_dir() {
    char name[] = "/tmp/plexus-special-files-XXXXXX";
    REQUIRE(mkdtemp(name) != nullptr);
    return name;
}

}  // namespace

TEST_CASE("a FIFO, folder or device as a parameter file or IDX file is refused at once, saying what it is",
          "[nn][files]") {
    pxtest::HangGuard guard(60, "a FIFO given as a parameter or IDX file");
    const std::string dir = temp_dir(), fifo = dir + "/fifo";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    nn::Sequential net;
    net.add(nn::Dense(2, "", 3));
    net.initialize(cpu());
    const struct {
        std::string path, kind;
    } cases[] = {{fifo, "a FIFO"}, {dir, "a folder"}, {"/dev/null", "a character device"}};
    for (const auto& c : cases) {
        INFO(c.path);
        CHECK(pxtest::message_of<InvalidArgumentError>([&] { net.load_parameters(c.path); }) ==
              c.path + ": not a regular file (" + c.kind + ")");
        CHECK(pxtest::message_of<InvalidArgumentError>([&] { data::read_idx(c.path); }) ==
              c.path + ": not a regular file (" + c.kind + ")");
    }
    std::remove(fifo.c_str());
    rmdir(dir.c_str());
}
