// How the conformance suite's checks report a plexus error that escapes
// them: its message, as Catch would give it, with its status kept for
// plexus-conformance (pxconf::record().thrown_status), which files a
// PX_ERROR_PLUGIN (a plugin that let an exception escape or returned a
// status the ABI does not define) under R2 and a pair the host refused
// because the device lacks it, used without PX_NEEDS, as skipped. An
// exception the plugin let escape a slot a check called directly
// (opened_plugin.hpp) counts as the host's PX_ERROR_PLUGIN.
#include <catch2/catch.hpp>

#include "conformance.hpp"
#include "opened_plugin.hpp"

CATCH_TRANSLATE_EXCEPTION(const plexus::Error& e) {
    pxconf::record().thrown_status = e.status();
    return e.what();
}

CATCH_TRANSLATE_EXCEPTION(const pxconf::Escaped& e) {
    pxconf::record().thrown_status = PX_ERROR_PLUGIN;
    return e.what();
}
