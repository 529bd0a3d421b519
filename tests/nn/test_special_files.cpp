// A parameter or data file that is not a regular file (issue 37, item 8): a
// FIFO blocked the open forever, and a folder given to read_idx was called
// "corrupt compressed data". Each is now refused at once, naming the path and
// what it is.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

TEST_CASE("a FIFO, socket, folder or device as a parameter file or data file is refused at once, saying what it is",
          "[nn][files]") {
    pxtest::HangGuard guard(60, "a FIFO or socket given as a parameter or data file");
    const std::string dir = temp_dir(), fifo = dir + "/fifo", sock = dir + "/socket";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(listener >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", sock.c_str());
    REQUIRE(::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    nn::Sequential net;
    net.add(nn::Dense(2, "", 3));
    net.initialize(cpu());
    const struct {
        std::string path, kind;
    } cases[] = {{fifo, "a FIFO"}, {sock, "a socket"}, {dir, "a folder"}, {"/dev/null", "a character device"}};
    for (const auto& c : cases) {
        INFO(c.path);
        const std::string said = c.path + ": not a regular file (" + c.kind + ")";
        CHECK(pxtest::message_of<InvalidArgumentError>([&] { net.load_parameters(c.path); }) == said);
        CHECK(pxtest::message_of<InvalidArgumentError>([&] { data::read_idx(c.path); }) == said);
        CHECK(pxtest::message_of<InvalidArgumentError>([&] { data::read_npy(c.path); }) == said);
        CHECK(pxtest::message_of<InvalidArgumentError>([&] { data::read_npz(c.path); }) == said);
        CHECK(pxtest::message_of<InvalidArgumentError>([&] { data::read_csv(c.path); }) == said);
    }
    ::close(listener);
    std::remove(sock.c_str());
    std::remove(fifo.c_str());
    rmdir(dir.c_str());
}
