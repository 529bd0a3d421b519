/* The process-group slots (plugin ABI 1.3) of the fault plugin built with
 * FAULT_GROUP (group_slots.c), and what they use of fault_plugin.c. */
#ifndef PLEXUS_TEST_GROUP_SLOTS_H
#define PLEXUS_TEST_GROUP_SLOTS_H

#include "plexus/plugin.h"

/* fault_plugin.c: keeps `message` for the next wait; a tensor's bytes. */
void fault_fail_later(px_plugin_context* ctx, const char* message);
void* fault_tensor_data(const px_tensor_desc* t);

px_status fault_group_make_id(px_plugin_context* ctx, int32_t device, px_group_id* id, px_plugin_error* err);
px_status fault_group_join(px_plugin_context* ctx, int32_t device, const px_group_id* id, int32_t rank, int32_t size,
                           double timeout_seconds, px_plugin_group** out, px_plugin_error* err);
px_status fault_group_all_reduce(px_plugin_context* ctx, px_plugin_group* group, const px_group_call* call,
                                 px_plugin_error* err);
void fault_group_leave(px_plugin_context* ctx, px_plugin_group* group);

#endif
