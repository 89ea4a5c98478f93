/*
 * The stand-in librosidl_runtime_c: what a process of the distro has loaded
 * (librcl needs it). The probe tells Iron+'s introspection layout by
 * rosidl_get_zero_initialized_type_hash, which Iron added.
 */
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT const void *get_message_typesupport_handle(const void *handle, const char *identifier)
{
    (void)identifier;
    return handle;
}

#if SIM_DISTRO >= 2
typedef struct {
    uint8_t version;
    uint8_t value[32];
} sim_type_hash_t;

EXPORT sim_type_hash_t rosidl_get_zero_initialized_type_hash(void)
{
    sim_type_hash_t h = {0, {0}};
    return h;
}
#endif
