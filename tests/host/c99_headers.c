/* The public C headers must compile as strict C99 (see tests/CMakeLists.txt). */
#include "plexus/plexus.h"
#include "plexus/plugin.h"
#include "plexus/op_check.h"
#include "plexus/op_layout.h"
#include "plexus/op_rows.h"
#include "plexus/op_table.h"
#include "plexus/philox.h"
#include "plexus/op_math.h"
#include "plexus/half.h"

int plexus_c99_check(void) {
    px_device d = {PX_DEVICE_CPU, 0};
    px_runtime_options o = {sizeof(px_runtime_options), 0, 0, 0, 0};
    (void)o;
    return d.kind + (int)sizeof(px_plugin_api) + (px_op_name(PX_OP_ADD) != 0) + (int)px_philox4x32_10(1, 2).v[0] +
           px_float_to_float16(1.0f) + (int)px_bfloat16_to_float(0x3F80) + (int)px_gelu(1.0);
}
