"""A device a plugin names, from Python: CTest loads the misbehave test plugin (the CPU plugin under the
name misbehave, its devices accelerators) beside the CPU plugin. Device('misbehave', 0), Device.parse and
Device('accel', 0) are one device, which its tensors report by the plugin's name."""
import pytest

import plexus


@pytest.fixture(scope="module", autouse=True)
def misbehave_loaded():
    try:
        plexus.Device.parse("misbehave")
    except plexus.Error:
        pytest.skip("the misbehave test plugin is not loaded: run by CTest (PLEXUS_PLUGIN_PATH)")


def test_one_device_under_its_names():
    own = plexus.Device("misbehave", 0)
    assert str(own) == "misbehave(0)" and own.device_type == "misbehave" and own.device_id == 0
    assert plexus.Device.parse("misbehave:0") == own and plexus.Device.parse("misbehave(0)") == own
    assert plexus.Device("accel", 0) == own  # accel(i) comes back by its own name
    x = plexus.array([1, 2, 3], ctx=plexus.Device("accel", 0))
    assert x.device == own and str(x * 2) == "[2. 4. 6.]\n<Tensor 3 @misbehave(0)>"
    assert (x.copyto(plexus.cpu()) + 1).asnumpy().tolist() == [2, 3, 4]


def test_a_device_it_does_not_have():
    with pytest.raises(plexus.PluginError) as e:
        plexus.ones(2, ctx=plexus.Device("misbehave", 3))
    # CTest gives the CPU plugin, and so misbehave, two devices (PLEXUS_CPU_DEVICES=2).
    assert "misbehave(3) does not exist: there are 2 misbehave devices (misbehave(0)..misbehave(1))" in str(e.value)
