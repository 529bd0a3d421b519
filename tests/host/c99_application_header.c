/* An application's C header stands alone: plexus.h compiles as strict C99
 * without the plugin ABI (plugin.h and the op-check headers are for plugin
 * authors), and everything the application API names is declared. */
#include "plexus/plexus.h"

#if defined(PLEXUS_PLUGIN_H) || defined(PX_PLUGIN_ABI_MAJOR) || defined(PLEXUS_OP_CHECK_H) || \
    defined(PLEXUS_OP_LAYOUT_H)
#error "plexus.h brings in the plugin ABI; an application should not see it"
#endif

int plexus_c99_application_check(void) {
    px_device_info info = {sizeof(px_device_info), 0, {0}, 0, 0, 0, 0, 0};
    px_group_id id;
    id.struct_size = sizeof id;
    return info.kind + (int)sizeof id.bytes + (px_op_name(PX_OP_ADD) != 0) + (int)px_dtype_size(PX_FLOAT32);
}
