// Plugin files that would kill or hang the process that loads them (issue 37,
// item 8): a file cut short made dlopen() fault (SIGBUS), and a FIFO on the
// plugin path blocked the open forever. Each is now listed as skipped with
// the reason, and the other plugins load.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "hang_guard.hpp"
#include "plugin_runtime.hpp"

namespace {

bool contains(const char* hay, const std::string& needle) { return std::string(hay).find(needle) != std::string::npos; }

std::string temp_dir() {
    char name[] = "/tmp/plexus-plugin-files-XXXXXX";
    REQUIRE(mkdtemp(name) != nullptr);
    return name;
}

std::vector<char> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("a plugin file cut short is skipped with the reason, and the runtime comes up", "[host][loader][files]") {
    pxtest::HangGuard guard(60, "loading truncated plugin files");
    const std::vector<char> whole = read_all(pxtest::cpu_plugin);
    REQUIRE(whole.size() > 100000);
    const std::string dir = temp_dir();
    // Inside the ELF header, the program headers, the loaded segments, the
    // sections after them, and the section header table at the end.
    const size_t cuts[] = {0, 10, 63, 64, 200, 4096, whole.size() / 4, whole.size() / 2, whole.size() * 3 / 4,
                           whole.size() - 4096, whole.size() - 1};
    std::vector<std::string> paths;
    for (size_t n : cuts) {
        paths.push_back(dir + "/cut-" + std::to_string(n) + ".so");
        std::ofstream(paths.back(), std::ios::binary).write(whole.data(), std::streamsize(n));
    }
    paths.push_back(pxtest::cpu_plugin);
    pxtest::Runtime r(paths);
    auto p = r.by_file();
    for (size_t n : cuts) {
        const std::string file = "cut-" + std::to_string(n) + ".so";
        INFO(file << ": " << p.at(file).message);
        CHECK(!p.at(file).loaded);
        CHECK(contains(p.at(file).file, dir + "/" + file));
        CHECK(contains(p.at(file).message, "the file may be truncated"));
        CHECK(contains(p.at(file).message, n < 64 ? std::to_string(n) + " bytes, shorter than an ELF header (64 bytes)"
                                                  : "past the end of the file (" + std::to_string(n) + " bytes)"));
    }
    CHECK(p.at("libplexus-cpu.so").loaded);
    int32_t cpus = 0;
    REQUIRE(px_runtime_device_count(r.rt, PX_DEVICE_CPU, &cpus) == PX_OK);
    CHECK(cpus >= 1);
    for (auto& path : paths)
        if (path != pxtest::cpu_plugin) std::remove(path.c_str());
    rmdir(dir.c_str());
}

TEST_CASE("a FIFO, socket, device or folder on the plugin path is skipped with what it is, without blocking",
          "[host][loader][files]") {
    pxtest::HangGuard guard(60, "a FIFO, socket or device on the plugin path");
    const std::string dir = temp_dir(), fifo = dir + "/fifo.so", sock = dir + "/socket.so", folder = dir + "/folder.so";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    REQUIRE(mkdir(folder.c_str(), 0700) == 0);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(s >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
    REQUIRE(bind(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    {
        // Named one by one (a folder named so is searched, not loaded) ...
        pxtest::Runtime r({fifo, sock, "/dev/zero", pxtest::cpu_plugin});
        auto p = r.by_file();
        CHECK(p.at("fifo.so").message == std::string("not a regular file (a FIFO)"));
        CHECK(p.at("socket.so").message == std::string("not a regular file (a socket)"));
        CHECK(p.at("zero").message == std::string("not a regular file (a character device)"));
        CHECK(p.at("libplexus-cpu.so").loaded);
    }
    {
        // ... and found in a folder.
        pxtest::Runtime r({dir, pxtest::cpu_plugin});
        auto p = r.by_file();
        CHECK(p.at("fifo.so").message == std::string("not a regular file (a FIFO)"));
        CHECK(p.at("socket.so").message == std::string("not a regular file (a socket)"));
        CHECK(p.count("folder.so") == 0);
        CHECK(p.at("libplexus-cpu.so").loaded);
    }
    close(s);
    for (auto& path : {fifo, sock}) std::remove(path.c_str());
    rmdir(folder.c_str());
    rmdir(dir.c_str());
}
