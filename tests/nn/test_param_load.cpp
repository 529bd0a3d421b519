// Loading parameter files: what a load costs in memory (it streams the file),
// the reason given for an empty or short file, names from a file escaped in
// messages, and a file that shrinks while it is read; and what a save does
// to a read-only file or a symlink at its path.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "../support.hpp"
#include "../sanitizers.hpp"
#include "nn/param_file.hpp"
#include "plexus/nn.hpp"

using namespace plexus;
using pxtest::message_of;
using pxtest::temp_path;
using pxtest::write_bytes;
namespace pf = plexus::nn::param_file;

namespace {


pf::Entry entry(const std::string& name, std::vector<int64_t> shape) {
    pf::Entry e;
    e.name = name, e.dtype = PX_FLOAT32, e.shape = shape;
    size_t n = 1;
    for (auto d : shape) n *= size_t(d);
    e.data.assign(n * 4, 0);
    return e;
}

std::string run(const std::string& command) {
    std::string out;
    std::FILE* p = ::popen(command.c_str(), "r");
    REQUIRE(p);
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    REQUIRE(::pclose(p) == 0);
    return out;
}

bool has_control_bytes(const std::string& s) {
    for (unsigned char c : s)
        if (c < 0x20 || c == 0x7f) return true;
    return false;
}

}  // namespace

TEST_CASE("loading a 64 MiB parameter file grows resident memory by about the file and the new gradients",
          "[nn][params][memory]") {
    // In a child process, so the figure is this load's alone. The new
    // parameters and their gradients are 2x the file's values whatever the
    // loader does; copying file -> entries -> CPU tensors -> replicas made it
    // 4.1-4.5x, and a second CPU copy of each entry 2.25-2.5x.
    const std::string path = temp_path("big.params");
    run(std::string(PLEXUS_PARAM_LOAD_RSS) + " save " + path);
    long growth = 0, file = 0, device = 0;
    REQUIRE(std::sscanf(run(std::string(PLEXUS_PARAM_LOAD_RSS) + " load " + path).c_str(), "%ld %ld %ld", &growth,
                        &file, &device) == 3);
    std::remove(path.c_str());
    INFO("peak growth " << growth << " KiB (cpu(0): " << device << " KiB) for a file of " << file << " KiB");
    REQUIRE(file > 60 * 1024);
#ifndef PXTEST_ASAN  // ASan's quarantine keeps freed memory resident; the device's count below still holds
    CHECK(double(growth) < 2.5 * double(file));
#endif
    // The device's own count is exact: the new values and their gradients,
    // no copy beside them, however the device's queue keeps pace.
    const long values_kib = 8 * (2048 * 1024 + 1024) * 4 / 1024;
    CHECK(device == 2 * values_kib);
}

TEST_CASE("an empty or short parameter file is refused with the right reason", "[nn][params][errors]") {
    nn::Sequential net;
    net.add(nn::Dense(2, "", 3));
    net.initialize(cpu());
    const std::string path = temp_path("short.params");
    auto reason = [&](const std::string& bytes) {
        write_bytes(path, std::vector<unsigned char>(bytes.begin(), bytes.end()));
        return message_of<InvalidArgumentError>([&] { net.load_parameters(path); });
    };
    CHECK(reason("") == path + ": is empty (0 bytes), not a Plexus parameter file");
    CHECK(reason("PXPA") == path + ": truncated: 4 bytes is shorter than the header (20 bytes)");
    CHECK(reason(std::string("PXPARAMS\1\0", 10)) == path + ": truncated: 10 bytes is shorter than the header (20 bytes)");
    CHECK(reason("GIF8") == path + ": not a Plexus parameter file (its 4 bytes do not begin \"PXPARAMS\")");
    CHECK(reason("GIF89a, not params") ==
          path + ": not a Plexus parameter file (the first 8 bytes are not \"PXPARAMS\")");
    std::remove(path.c_str());
}

TEST_CASE("names from a parameter file reach messages with control bytes escaped", "[nn][params][errors]") {
    nn::Sequential net;
    net.add(nn::Dense(2, "", 3));
    net.initialize(cpu());
    const std::string path = temp_path("names.params");
    const std::string hostile = "x\x1b[2J\r\nfake: ok\\\xff";
    const std::string shown = "x\\x1b[2J\\x0d\\x0afake: ok\\\\\\xff";
    REQUIRE(pf::printable(hostile) == shown);
    net.save_parameters(path);
    std::ifstream in(path, std::ios::binary);
    std::vector<unsigned char> good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto es = pf::decode(good.data(), good.size(), path);
    // An entry the network lacks (the load's check).
    es.push_back(entry(hostile, {1}));
    write_bytes(path, pf::encode(es));
    std::string msg = message_of<InvalidArgumentError>([&] { net.load_parameters(path); });
    CHECK(msg == path + ": parameter '" + shown + "' is not in the network");
    CHECK(!has_control_bytes(msg));
    // A name twice (the decoder's check, whose messages label each entry).
    es.push_back(entry(hostile, {1}));
    write_bytes(path, pf::encode(es));
    msg = message_of<InvalidArgumentError>([&] { net.load_parameters(path); });
    CHECK(msg == path + ": entry 3 '" + shown + "' appears twice");
    CHECK(!has_control_bytes(msg));
    std::remove(path.c_str());
}

TEST_CASE("a parameter file that shrinks while it is read is refused, naming what was cut", "[nn][params][errors]") {
    const std::string path = temp_path("shrinks.params");
    write_bytes(path, pf::encode({entry("a", {1}), entry("b", {100000})}));  // b's 400 kB past the read buffer
    std::vector<std::string> taken;
    std::string msg = message_of<InvalidArgumentError>([&] {
        pf::read_entries(path, [&](pf::Entry& e) {
            taken.push_back(e.name);
            REQUIRE(::truncate(path.c_str(), 1000) == 0);
        });
    });
    CHECK(taken == std::vector<std::string>{"a"});
    CHECK(msg == path + ": the file ended while reading entry 1 'b''s data (did it change while it was read?)");
    std::remove(path.c_str());
}

TEST_CASE("save_parameters replaces a read-only file and a symlink itself, never the link's target",
          "[nn][params]") {
    // As documented in docs/parameter-file.md: the save renames a new file
    // over the path, which needs write permission on the folder only.
    nn::Sequential net;
    net.add(nn::Dense(2, "", 3));
    net.initialize(cpu());
    const std::string path = temp_path("ro.params"), target = temp_path("target.params");
    write_bytes(path, {'o', 'l', 'd'});
    REQUIRE(::chmod(path.c_str(), 0444) == 0);
    net.save_parameters(path);
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 0200) != 0);  // a new file (0644 less the umask): the read-only mode is not kept
    CHECK(st.st_size > 20);
    std::remove(path.c_str());

    write_bytes(target, {'o', 'l', 'd'});
    REQUIRE(::symlink(target.c_str(), path.c_str()) == 0);
    net.save_parameters(path);
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));  // the link is gone, a regular file in its place
    REQUIRE(::stat(target.c_str(), &st) == 0);
    CHECK(st.st_size == 3);  // the target is untouched
    net.load_parameters(path);
    std::remove(path.c_str());
    std::remove(target.c_str());
}
