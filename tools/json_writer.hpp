// The tools' JSON writer lives in common/ now, shared with libplexus's trace.
#pragma once

#include "../common/json_writer.hpp"
