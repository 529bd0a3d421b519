// plexus::ProcessGroup (plexus/cpp/group.hpp) on the test plugin's groups of
// one process (PLEXUS_PLUGIN_PATH names libfault-group.so): the C++ side of
// what tests/host/test_groups.cpp checks through the C API, that is typed
// errors, ownership (move, leave, the destructor) and values summed in place.
// Across processes the same class runs under tests/mpi (mpi::World uses it).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "../support.hpp"
#include "plexus/plexus.hpp"

using namespace plexus;

using pxtest::message_of;

TEST_CASE("groups_supported and make_group_id say which plugin can", "[group]") {
    REQUIRE(groups_supported(accel(0)));
    CHECK_FALSE(groups_supported(cpu(0)));
    const GroupId id = make_group_id(accel(0));
    CHECK(std::string(id.plugin) == "fault-group");
    CHECK(std::memcmp(id.bytes, make_group_id(accel(0)).bytes, sizeof id.bytes) != 0);  // a new group each time
    PX_REQUIRE_MENTIONS(message_of<UnsupportedError>([] { make_group_id(cpu(0)); }), "offers no process groups");
    PX_REQUIRE_MENTIONS(message_of<PluginError>([] { groups_supported(gpu(7)); }), "gpu(7)");
}

TEST_CASE("a ProcessGroup of one sums in place and leaves", "[group]") {
    ProcessGroup g(accel(0), make_group_id(accel(0)), 0, 1, 5.0);
    CHECK(g.joined());
    CHECK(g.device().str() == "fault-group(0)");  // accel(0) by its own name
    CHECK(g.rank() == 0);
    CHECK(g.size() == 1);

    Tensor a = array({1.5f, -2, 3}, accel(0));
    Tensor b = array(std::vector<double>{0.25}, {}, accel(0));
    g.all_reduce_sum({a, b});  // one process: each sum is the tensor itself
    CHECK(a.to_vector<float>() == std::vector<float>{1.5f, -2, 3});
    CHECK(b.to_vector<double>() == std::vector<double>{0.25});

    // The host's checks arrive as typed errors, and the group stays usable.
    Tensor on_cpu = array({1.0f});
    PX_REQUIRE_MENTIONS(message_of<DeviceMismatchError>([&] { g.all_reduce_sum({a, on_cpu}); }),
                   "this process's member of the group is fault-group(0)");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { g.all_reduce_sum({}); }), "count is 0");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { g.all_reduce_sum({a, a}); }), "share memory");
    g.all_reduce_sum({a});

    g.leave();
    CHECK_FALSE(g.joined());
    ProcessGroup released(accel(0), make_group_id(accel(0)), 0, 1, 5.0);
    REQUIRE(px_group_release(released.raw()) == PX_OK);  // not the C++ object's to give back: leave() says so
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { released.leave(); }), "not a live group handle");
    g.leave();  // leaving twice does nothing
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { g.all_reduce_sum({a}); }),
                        "not a member any more (it left, or was moved from)");
}

TEST_CASE("a ProcessGroup moves its membership, and the moved-from one holds none", "[group]") {
    ProcessGroup first(accel(0), make_group_id(accel(0)), 0, 1, 5.0);
    ProcessGroup second(std::move(first));
    CHECK_FALSE(first.joined());
    REQUIRE(second.joined());
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { first.all_reduce_sum({array({1.0f}, accel(0))}); }),
                   "not a member any more (it left, or was moved from)");
    Tensor t = array({4.0f}, accel(0));
    second.all_reduce_sum({t});

    // Move-assigning leaves the group the target held; the source's moves over.
    ProcessGroup third(accel(0), make_group_id(accel(0)), 0, 1, 5.0);
    px_group* held = second.raw();
    third = std::move(second);
    CHECK(third.raw() == held);
    CHECK_FALSE(second.joined());
    third.all_reduce_sum({t});
    CHECK(t.to_vector<float>() == std::vector<float>{4.0f});
    third = std::move(third);  // self-move keeps the membership
    CHECK(third.raw() == held);
}

TEST_CASE("joining that fails throws the reason and holds nothing", "[group]") {
    const GroupId id = make_group_id(accel(0));
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { ProcessGroup(accel(0), id, 1, 1, 5.0); }),
                   "rank 1 is outside 0..0");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { ProcessGroup(accel(0), id, 0, 1, 0.0); }),
                        "timeout_seconds is 0");
    GroupId other = id;
    std::snprintf(other.plugin, sizeof other.plugin, "cuda");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { ProcessGroup(accel(0), other, 0, 1, 5.0); }),
                   "the id was made by plugin cuda");
    setenv("GROUP_TEST_JOIN_FAILS_ON", "0", 1);
    const std::string why = message_of<DeviceError>([&] { ProcessGroup(accel(0), id, 0, 1, 5.0); });
    unsetenv("GROUP_TEST_JOIN_FAILS_ON");
    PX_REQUIRE_MENTIONS(why, "simulated: this rank cannot join");
    // A failed join left nothing behind: the same id still joins.
    ProcessGroup g(accel(0), id, 0, 1, 5.0);
    CHECK(g.joined());
}
