// Parameter files: round trips, atomic saves, and every kind of damaged or
// mismatched file rejected with its own message while the network keeps its values.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <thread>

#include "../support.hpp"
#include "save_loop_net.hpp"
#include "nn/param_file.hpp"
#include "plexus/nn.hpp"

using namespace plexus;
using pxtest::message_of;
using pxtest::temp_path;
using pxtest::write_bytes;
using pxtest::values;
namespace pf = plexus::nn::param_file;

namespace {


std::vector<unsigned char> read_bytes(const std::string& path) { return pf::read_file(path); }

// The temporary files a save of `path` left beside it ("path.tmp-PID-N"),
// those of process `pid` only when it is given.
std::vector<std::filesystem::path> leftovers(const std::string& path, long pid = -1) {
    namespace fs = std::filesystem;
    const fs::path p = fs::absolute(path);
    const std::string prefix = p.filename().string() + ".tmp-" + (pid >= 0 ? std::to_string(pid) + "-" : "");
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(p.parent_path()))
        if (e.path().filename().string().rfind(prefix, 0) == 0) found.push_back(e.path());
    return found;
}

struct Net {
    nn::Sequential net;
    Net() {
        net.add(nn::Dense(3, "relu", 2), nn::Dense(2, "", 3));
        net.initialize(cpu());
    }
};

pf::Entry entry(const std::string& name, std::vector<int64_t> shape, int32_t dtype = PX_FLOAT32) {
    pf::Entry e;
    e.name = name, e.dtype = dtype, e.shape = shape;
    size_t n = 1;
    for (auto d : shape) n *= size_t(d);
    e.data.assign(n * px_dtype_size(dtype), 0);
    return e;
}

// Fixes the trailing checksum after an edit, so the edit itself is what gets rejected.
void reseal(std::vector<unsigned char>& b) {
    b.resize(b.size() - 4);
    uint32_t c = uint32_t(crc32(0L, b.data(), uInt(b.size())));
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<unsigned char>(c >> (8 * i)));
}

}  // namespace

TEST_CASE("parameters round-trip through a file, onto another device", "[nn][params]") {
    Net a, b;
    std::string path = temp_path("roundtrip.params");
    a.net.save_parameters(path);
    b.net.load_parameters(path, cpu(1));
    auto pa = a.net.collect_params().items(), pb = b.net.collect_params().items();
    for (size_t i = 0; i < pa.size(); ++i) {
        REQUIRE(pb[i].second->data().device() == cpu(1));
        REQUIRE(values(pb[i].second->data()) == values(pa[i].second->data()));
    }
    // A network whose input sizes are not known yet takes them from the file.
    nn::Sequential lazy;
    lazy.add(nn::Dense(3, "relu"), nn::Dense(2));
    lazy.load_parameters(path);
    REQUIRE(values(lazy[1].weight().data()) == values(a.net[1].weight().data()));
    REQUIRE(lazy(zeros({5, 2})).shape() == Shape{5, 2});
    std::remove(path.c_str());
}

TEST_CASE("an entry with no elements keeps the checksum of the entries after it", "[nn][params]") {
    // zlib's crc32 answers a null buffer with its initial value: an empty
    // entry's data once reset the running sum, so a valid file was refused.
    namespace pf = nn::param_file;
    std::vector<pf::Entry> entries(2);
    entries[0].name = "empty", entries[0].dtype = PX_FLOAT32, entries[0].shape = {0, 5};
    entries[1].name = "after", entries[1].dtype = PX_INT32, entries[1].shape = {2};
    entries[1].data = {1, 0, 0, 0, 2, 0, 0, 0};
    const auto bytes = pf::encode(entries);
    std::string path = temp_path("empty-entry.params");
    pf::write_atomically(path, bytes);
    std::vector<pf::Entry> back;
    pf::read_entries(path, [&](pf::Entry& e) { back.push_back(e); });
    REQUIRE(back.size() == 2);
    CHECK(back[0].shape == std::vector<int64_t>{0, 5});
    CHECK(back[1].data == entries[1].data);
    CHECK(pf::encode(pf::decode(bytes.data(), bytes.size(), "in memory")) == bytes);
    std::remove(path.c_str());
}

TEST_CASE("a failed save leaves the previous file whole", "[nn][params]") {
    Net a;
    std::string path = temp_path("atomic.params");
    a.net.save_parameters(path);
    auto before = read_bytes(path);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { a.net.save_parameters("/nonexistent-dir/x.params"); }),
                        "cannot create");
    a.net[0].weight().set_data(ones({3, 2}));
    a.net.save_parameters(path);  // replaced whole
    REQUIRE(read_bytes(path) != before);
    REQUIRE(pf::decode(read_bytes(path).data(), read_bytes(path).size(), path).size() == 4);
    std::remove(path.c_str());
}

TEST_CASE("a save the disk refuses midway, or that cannot replace the path, keeps the previous file", "[nn][params][errors]") {
    Net a, b;
    b.net[0].weight().set_data(ones({3, 2}));
    std::string path = temp_path("refused.params");
    a.net.save_parameters(path);
    const auto before = read_bytes(path);
    REQUIRE(before.size() > 100);
    SECTION("the file size limit stops the write (EFBIG, as a full disk would)") {
        struct rlimit old {};
        REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
        struct rlimit small = old;
        small.rlim_cur = 64;  // bytes: the header fits, the values do not
        // SIGXFSZ keeps its default action (end the process): the save
        // must report EFBIG without being killed (issue 37, item 10).
        REQUIRE(std::signal(SIGXFSZ, SIG_DFL) != SIG_ERR);
        REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
        std::string msg = message_of<InvalidArgumentError>([&] { b.net.save_parameters(path); });
        REQUIRE(setrlimit(RLIMIT_FSIZE, &old) == 0);
        PX_REQUIRE_MENTIONS(msg, "writing");
        PX_REQUIRE_MENTIONS(msg, "failed: File too large");
        sigset_t pending;
        REQUIRE(sigpending(&pending) == 0);
        CHECK(sigismember(&pending, SIGXFSZ) == 0);  // nothing left to kill the process later
    }
    SECTION("the path is now a folder: the rename fails") {
        std::string dir = temp_path("refused-dir.params");
        std::filesystem::create_directory(dir);
        std::ofstream(dir + "/keep") << "x";  // not empty, so rename() cannot replace it
        std::string msg = message_of<InvalidArgumentError>([&] { b.net.save_parameters(dir); });
        PX_REQUIRE_MENTIONS(msg, "replacing the file failed");
        REQUIRE(std::filesystem::is_directory(dir));
        REQUIRE(leftovers(dir).empty());
        std::filesystem::remove_all(dir);
    }
    REQUIRE(read_bytes(path) == before);  // the old file, whole
    REQUIRE(leftovers(path).empty());     // the failed save removed its temporary file
    std::remove(path.c_str());
}

TEST_CASE("threads saving different networks to one path each publish a whole file", "[nn][params]") {
    // Each thread owns its network (docs/thread-safety.md); the path is shared.
    std::string path = temp_path("threads.params");
    constexpr int threads = 4, saves = 25;
    std::vector<std::unique_ptr<Net>> nets;
    std::vector<std::vector<double>> weights;
    for (int t = 0; t < threads; ++t) {
        nets.push_back(std::make_unique<Net>());
        nets[t]->net[0].weight().set_data(full({3, 2}, double(t + 1)));
        weights.push_back(values(nets[t]->net[0].weight().data()));
    }
    std::vector<std::thread> pool;
    std::vector<std::string> errors(threads);
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            try {
                for (int i = 0; i < saves; ++i) nets[t]->net.save_parameters(path);
            } catch (const std::exception& e) {
                errors[t] = e.what();
            }
        });
    for (auto& th : pool) th.join();
    for (const auto& e : errors) REQUIRE(e.empty());
    Net loaded;
    loaded.net.load_parameters(path);  // whole: a mix of two saves fails the checksum
    auto w = values(loaded.net[0].weight().data());
    REQUIRE(std::find(weights.begin(), weights.end(), w) != weights.end());
    REQUIRE(leftovers(path).empty());
    std::remove(path.c_str());
}

TEST_CASE("damaged and mismatched parameter files are rejected and load nothing", "[nn][params][errors]") {
    Net target;
    auto original = values(target.net[0].weight().data());
    Net source;
    std::string good = temp_path("good.params");
    source.net.save_parameters(good);
    const auto bytes = read_bytes(good);
    std::string path = temp_path("bad.params");
    auto rejects = [&](const std::vector<unsigned char>& b, const std::string& why) {
        write_bytes(path, b);
        std::string msg;
        try {
            target.net.load_parameters(path);
        } catch (const Error& e) {
            msg = e.what();
        }
        INFO("expected: " << why);
        REQUIRE(!msg.empty());
        PX_REQUIRE_MENTIONS(msg, why);
        REQUIRE(values(target.net[0].weight().data()) == original);  // nothing was loaded
    };
    SECTION("missing") {
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { target.net.load_parameters(temp_path("none")); }),
                            "cannot open");
    }
    SECTION("not a regular file") {
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { target.net.load_parameters("/tmp"); }),
                            "not a regular file");
    }
    SECTION("every truncation") {
        for (size_t n = 0; n < bytes.size(); ++n) {
            write_bytes(path, std::vector<unsigned char>(bytes.begin(), bytes.begin() + long(n)));
            REQUIRE_THROWS_AS(target.net.load_parameters(path), InvalidArgumentError);
        }
        REQUIRE(values(target.net[0].weight().data()) == original);
    }
    SECTION("bad magic") {
        auto b = bytes;
        b[0] = 'Q';
        rejects(b, "not a Plexus parameter file");
    }
    SECTION("future version") {
        auto b = bytes;
        b[8] = 2;
        rejects(b, "format version 2 is not supported");
    }
    SECTION("checksum") {
        auto b = bytes;
        b[b.size() - 10] ^= 0xFF;
        rejects(b, "checksum mismatch");
    }
    SECTION("trailing bytes inside the checksum") {
        auto b = bytes;
        b.insert(b.end() - 4, 3, 0);
        reseal(b);
        rejects(b, "3 unexpected bytes after the last entry");
    }
    SECTION("crafted entries") {
        auto enc = [](std::vector<pf::Entry> es) { return pf::encode(es); };
        rejects(enc({entry("0.weight", {3, 2}), entry("0.weight", {3, 2})}), "appears twice");
        rejects(enc({entry("", {1})}), "name of 0 bytes");
        rejects(enc({entry(std::string(2000, 'a'), {1})}), "name of 2000 bytes");
        auto e = entry("x", {2});
        e.dtype = 99;
        rejects(enc({e}),
                "unknown dtype 99 (a newer Plexus may have written it; this one reads 1 float32, 2 float64, 3 int32, "
                "4 int64, 5 uint8, 6 float16, 7 bfloat16)");
        e = entry("x", {2});
        e.shape = {int64_t(1) << 30, int64_t(1) << 30};
        rejects(enc({e}), "declares 8 bytes");
        e.shape = {int64_t(1) << 62, int64_t(1) << 62};
        rejects(enc({e}), "overflow 64 bits");
        e.shape = {-1};
        rejects(enc({e}), "negative dimension");
        e.shape = {1, 1, 1, 1, 1, 1, 1, 1, 1};
        rejects(enc({e}), "rank 9");
        e = entry("x", {2});
        e.data.resize(4);  // fewer bytes than the shape needs
        rejects(enc({e}), "declares 4 bytes");
        auto cut = enc({entry("x", {2})});
        cut.erase(cut.end() - 8, cut.end() - 4);  // half the data gone, the checksum made to match
        reseal(cut);
        rejects(cut, "truncated: entry 0 'x''s data needs 8 bytes");
    }
    SECTION("names and shapes that do not fit the network") {
        auto es = pf::decode(bytes.data(), bytes.size(), good);
        auto renamed = es;
        renamed[0].name = "9.weight";
        rejects(pf::encode(renamed), "has no parameter '0.weight'");
        auto extra = es;
        extra.push_back(entry("2.weight", {1}));
        rejects(pf::encode(extra), "'2.weight' is not in the network");
        auto reshaped = es;
        reshaped[0] = entry("0.weight", {2, 3});
        rejects(pf::encode(reshaped), "has shape (2,3) in the file, the network needs (3,2)");
        auto ints = es;
        ints[0] = entry("0.weight", {3, 2}, PX_INT32);
        write_bytes(path, pf::encode(ints));
        PX_REQUIRE_MENTIONS(message_of<DTypeError>([&] { target.net.load_parameters(path); }), "not a floating dtype");
    }
    std::remove(path.c_str());
    std::remove(good.c_str());
}

TEST_CASE("SIGKILL at random moments of saving never leaves a damaged file: 100 kills", "[nn][params][faults]") {
    const std::string path = "plexus-kill-test.params";
    nn::Sequential a, b, loaded;
    pxtest::make_save_loop_net(a, 1);
    pxtest::make_save_loop_net(b, 2);
    pxtest::make_save_loop_net(loaded, 3);
    const auto wa = values(a[0].weight().data()), wb = values(b[0].weight().data());
    REQUIRE(wa != wb);
    a.save_parameters(path);  // a good file before the first kill
    std::mt19937 rng(12345);
    int saw_a = 0, saw_b = 0;
    for (int kill = 0; kill < 100; ++kill) {
        int ready[2];
        REQUIRE(pipe(ready) == 0);
        pid_t child = fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            dup2(ready[1], STDOUT_FILENO);
            close(ready[0]);
            close(ready[1]);
            execl(PLEXUS_SAVE_LOOP, PLEXUS_SAVE_LOOP, path.c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
        close(ready[1]);
        // "ready <microseconds one save took>": start-up is over, the saves go on.
        std::string line;
        for (char c = 0; line.size() < 64 && read(ready[0], &c, 1) == 1 && c != '\n';) line += c;
        close(ready[0]);
        REQUIRE(line.rfind("ready ", 0) == 0);
        const uint64_t per_save_us = std::stoull(line.substr(6));
        // A random point among the next four saves (each writes and flushes
        // about 1 MiB: milliseconds to tens of milliseconds).
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % std::max<uint64_t>(4 * per_save_us, 1000)));
        REQUIRE(::kill(child, SIGKILL) == 0);
        int status = 0;
        REQUIRE(waitpid(child, &status, 0) == child);
        INFO("kill " << kill);
        REQUIRE(WIFSIGNALED(status));  // it was still saving, not dead of something else
        loaded.load_parameters(path);  // must be whole: throws on any damage
        auto w = values(loaded[0].weight().data());
        REQUIRE((w == wa || w == wb));
        (w == wa ? saw_a : saw_b)++;
        // The killed save's temporary file is the only debris; remove it.
        auto debris = leftovers(path, child);
        REQUIRE(debris.size() <= 1);
        for (const auto& f : debris) std::filesystem::remove(f);
    }
    INFO("file held set A " << saw_a << " times, set B " << saw_b << " times");
    CHECK(saw_a > 0);
    CHECK(saw_b > 0);  // kills landed at different points of the loop
    std::remove(path.c_str());
}

TEST_CASE("save_tensors and load_tensors keep names and dtypes and values in order", "[nn][param_file]") {
    const std::string path = "test_tensors.params";
    const Tensor a = array({1.5f, -2.0f}, {2, 1}), b = array(std::vector<int32_t>{7, 8, 9}, {3});
    nn::save_tensors(path, {{"x", a}, {"counts", b}});
    const auto got = nn::load_tensors(path, cpu(0));
    REQUIRE(got.size() == 2);
    REQUIRE(got[0].first == "x");
    REQUIRE(got[0].second.shape() == Shape{2, 1});
    REQUIRE(values(got[0].second) == std::vector<double>{1.5, -2.0});
    REQUIRE(got[1].second.dtype() == DType::int32);
    REQUIRE(values(got[1].second) == std::vector<double>{7, 8, 9});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { nn::save_tensors(path, {{"x", a}, {"x", b}}); }),
                        "the name 'x' is given twice");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { nn::save_tensors(path, {{"", a}}); }),
                        "a name has 0 bytes");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { nn::save_tensors(path, {{"x", a}, {"bias\n", Tensor()}}); }),
                        "save_tensors: the tensor named 'bias\\x0a' is empty");
    REQUIRE(nn::load_tensors(path).size() == 2);  // the refused saves left the file as it was
    std::remove(path.c_str());
}
