/*
 * The stand-in's introspection type supports for sim_msgs (Stamp, Sample),
 * built once per distro and client library as
 * libsim_msgs__rosidl_typesupport_introspection_<c|cpp>.so: the library and
 * getter names a rosidl dispatcher's map gives, and the member layout of
 * the distro (Iron+ inserted is_key_ before is_array_, and
 * has_any_key_member_ before members_). SIM_DISTRO 1 is Humble; SIM_LANG
 * is c or cpp.
 */
#include <stdbool.h>
#include <stddef.h>

#include "ros2_pulse/tracetools_api.h"
#include "sim_msgs.h"

#define EXPORT __attribute__((visibility("default")))
#define STR2(x) #x
#define STR(x) STR2(x)
#define CAT3(a, b, c) a##b##c
#define GETTER(lang, type) CAT3(rosidl_typesupport_introspection_, lang, __get_message_type_support_handle__sim_msgs__msg__##type)

static const char identifier[] = "rosidl_typesupport_introspection_" STR(SIM_LANG);

static size_t string_size(const void *s) { return ((const struct sim_msgs_string *)s)->size; }
static size_t octets_size(const void *s) { return ((const struct sim_msgs_octets *)s)->size; }
static const void *octet_at(const void *s, size_t i) { return ((const struct sim_msgs_octets *)s)->data + i; }

#if SIM_DISTRO >= 2
#define ARRAY(is) .at32 = 0, .at33 = (is) /* is_key_, is_array_ */
#else
#define ARRAY(is) .at32 = (is)
#endif

#define PRIM(n, t, f) {.name = n, .type_id = RP_ROSIDL_TYPE_##t, ARRAY(0), .offset = offsetof(struct sim_msgs_stamp, f)}
static const rp_introspection_member_t stamp_members[] = {
    PRIM("src_real_ns", INT64, src_real_ns), PRIM("seq", UINT64, seq), PRIM("proc", INT32, proc),
    PRIM("pub", INT32, pub), PRIM("intra", INT32, intra), PRIM("ring", UINT32, ring),
    PRIM("origin_real_ns", INT64, origin_real_ns),
};

#if SIM_DISTRO >= 2
#define MEMBERS(list) .at32 = NULL, .at40 = (list) /* has_any_key_member_ false, members_ */
#else
#define MEMBERS(list) .at32 = (list)
#endif

static const rp_introspection_members_t stamp = {"sim_msgs__msg", "Stamp", 7, sizeof(struct sim_msgs_stamp), MEMBERS(stamp_members)};
static const rp_rosidl_message_type_support_t stamp_handle = {identifier, &stamp, NULL};

static const rp_introspection_member_t sample_members[] = {
    {.name = "stamp", .type_id = RP_ROSIDL_TYPE_MESSAGE, .members = &stamp_handle, ARRAY(0),
     .offset = offsetof(struct sim_msgs_sample, stamp)},
    {.name = "frame_id", .type_id = RP_ROSIDL_TYPE_STRING, ARRAY(0), .offset = offsetof(struct sim_msgs_sample, frame_id),
     .size_function = string_size},
    {.name = "data", .type_id = RP_ROSIDL_TYPE_OCTET, ARRAY(1), .offset = offsetof(struct sim_msgs_sample, data),
     .size_function = octets_size, .get_const_function = octet_at},
};
static const rp_introspection_members_t sample = {"sim_msgs__msg", "Sample", 3, sizeof(struct sim_msgs_sample), MEMBERS(sample_members)};
static const rp_rosidl_message_type_support_t sample_handle = {identifier, &sample, NULL};

EXPORT const rp_rosidl_message_type_support_t *GETTER(SIM_LANG, Stamp)(void) { return &stamp_handle; }
EXPORT const rp_rosidl_message_type_support_t *GETTER(SIM_LANG, Sample)(void) { return &sample_handle; }
