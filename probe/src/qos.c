/*
 * Init-time facts about publishers and subscriptions: their actual QoS, their
 * message type, their rmw implementation and their domain, for "why is this
 * subscription silent" (issue 25). Nothing here runs per message.
 *
 * rcl_publisher_init and rcl_subscription_init are wrapped (librcl exports
 * them; rclcpp and rclpy call them through the PLT). Their tracepoint fires
 * inside the real call and makes the endpoint; once the call returned
 * RCL_RET_OK the handle is valid on every distro, and the probe asks rcl
 * what the endpoint is: rcl_*_get_actual_qos (the QoS the rmw resolved,
 * system defaults included), rcl_*_get_rmw_handle (whose first field is the
 * rmw implementation's identifier), rcl_node_get_domain_id. The type comes
 * from the type support the caller passed, read without loading anything:
 * a rosidl_typesupport_c/_cpp dispatcher's map names its per-middleware
 * symbols "<ts>__get_message_type_support_handle__<pkg>__<subfolder>__<Type>";
 * an introspection or fastrtps type support's data starts with the
 * message's namespace and name.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <string.h>

#include "core.h"
#include "ros2_pulse/segment.h"
#include "ros2_pulse/tracetools_api.h"

/* Bounded copy of a string from the host's memory; returns false when it did not fit. */
static bool copy_bounded(char *dst, size_t size, const char *src)
{
    size_t n = strnlen(src, size);
    bool fits = n < size;
    if (!fits)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return fits;
}

/* Appends src to dst (used bytes *len), turning "__" and "::" into "/"; false when it did not fit. */
static bool append_path(char *dst, size_t size, size_t *len, const char *src)
{
    for (size_t i = 0; src[i] != '\0'; i++) {
        char c = src[i];
        if ((c == '_' && src[i + 1] == '_') || (c == ':' && src[i + 1] == ':')) {
            c = '/';
            i++;
        }
        if (*len + 1 >= size)
            return false;
        dst[(*len)++] = c;
    }
    dst[*len] = '\0';
    return true;
}

static bool starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* "pkg/msg/Type" from a message type support; "" when its kind is not one this reads. */
static void type_name(const rp_rosidl_message_type_support_t *ts, struct rp_qos *q)
{
    static const char marker[] = "__get_message_type_support_handle__";
    if (ts == NULL || ts->typesupport_identifier == NULL || ts->data == NULL)
        return;
    const char *id = ts->typesupport_identifier;
    size_t len = 0;
    bool fits = true;
    if (strcmp(id, "rosidl_typesupport_c") == 0 || strcmp(id, "rosidl_typesupport_cpp") == 0) {
        const rp_type_support_map_t *map = ts->data;
        if (map->size == 0 || map->symbol_name == NULL || map->symbol_name[0] == NULL)
            return;
        const char *at = strstr(map->symbol_name[0], marker);
        if (at == NULL)
            return;
        fits = append_path(q->type, sizeof q->type, &len, at + sizeof marker - 1);
    } else if (starts_with(id, "rosidl_typesupport_introspection_c") || starts_with(id, "rosidl_typesupport_fastrtps_c")) {
        const rp_message_names_t *names = ts->data; /* *_c and *_cpp alike */
        if (names->message_namespace == NULL || names->message_name == NULL)
            return;
        fits = append_path(q->type, sizeof q->type, &len, names->message_namespace) &&
               append_path(q->type, sizeof q->type, &len, "::") &&
               append_path(q->type, sizeof q->type, &len, names->message_name);
    } else {
        return;
    }
    if (!fits)
        q->flags |= RP_QOS_TYPE_TRUNCATED;
}

/* ns of an rmw duration; RMW_DURATION_INFINITE (2^63 - 1 ns) and DDS's own infinity (2^31 - 1 s) are infinite. */
static uint64_t duration_ns(rp_rmw_time_t t)
{
    if (t.sec >= 0x7fffffffu)
        return RP_DURATION_INFINITE;
    return t.sec * 1000000000u + t.nsec;
}

struct rcl_endpoint_api {
    const char *get_actual_qos, *get_rmw_handle;
    void *_Atomic actual_qos_fn, *_Atomic rmw_handle_fn;
};

static void *_Atomic g_domain_fn = RP_UNRESOLVED;

/* After a successful init: what the endpoint is, into its QoS record, and how big its messages are. */
static void describe(bool publisher, struct rcl_endpoint_api *api, const void *endpoint, const void *node,
                     const void *type_support)
{
    struct rp_qos q;
    memset(&q, 0, sizeof q);
    q.domain_id = RP_NO_DOMAIN;
    rp_rcl_get_actual_qos_fn actual = (rp_rcl_get_actual_qos_fn)rp_real(&api->actual_qos_fn, api->get_actual_qos, "librcl.so");
    const rp_rmw_qos_profile_t *p = actual != NULL ? actual(endpoint) : NULL;
    if (p != NULL) {
        q.history = (uint8_t)p->history;
        q.depth = p->depth > UINT32_MAX ? UINT32_MAX : (uint32_t)p->depth;
        q.reliability = (uint8_t)p->reliability;
        q.durability = (uint8_t)p->durability;
        q.liveliness = (uint8_t)p->liveliness;
        q.deadline_ns = duration_ns(p->deadline);
        q.lifespan_ns = duration_ns(p->lifespan);
        q.lease_ns = duration_ns(p->liveliness_lease_duration);
        q.flags |= RP_QOS_ACTUAL | (p->avoid_ros_namespace_conventions ? RP_QOS_AVOID_ROS_NS : 0u);
    }
    rp_rcl_get_rmw_handle_fn rmw = (rp_rcl_get_rmw_handle_fn)rp_real(&api->rmw_handle_fn, api->get_rmw_handle, "librcl.so");
    void *handle = rmw != NULL ? rmw(endpoint) : NULL;
    const char *identifier = handle != NULL ? *(const char *const *)handle : NULL;
    if (identifier != NULL)
        copy_bounded(q.rmw, sizeof q.rmw, identifier);
    rp_rcl_node_get_domain_id_fn domain =
        (rp_rcl_node_get_domain_id_fn)rp_real(&g_domain_fn, "rcl_node_get_domain_id", "librcl.so");
    size_t id = 0;
    if (node != NULL && domain != NULL && domain(node, &id) == RP_RCL_RET_OK && id < RP_NO_DOMAIN)
        q.domain_id = (uint32_t)id;
    type_name(type_support, &q);
    uint64_t ep = rp_describe_endpoint(publisher, endpoint, &q);
    if (ep != 0)
        rp_bytes_learn(ep, type_support); /* outside the probe's mutex: it may dlopen */
}

static struct rcl_endpoint_api g_pub_api = {"rcl_publisher_get_actual_qos", "rcl_publisher_get_rmw_handle",
                                            RP_UNRESOLVED, RP_UNRESOLVED};
static struct rcl_endpoint_api g_sub_api = {"rcl_subscription_get_actual_qos", "rcl_subscription_get_rmw_handle",
                                            RP_UNRESOLVED, RP_UNRESOLVED};

EXPORT rp_rcl_ret_t rcl_publisher_init(void *publisher, const void *node, const void *type_support,
                                       const char *topic_name, const void *options)
{
    static void *_Atomic real_fn = RP_UNRESOLVED;
    rp_rcl_endpoint_init_fn real = (rp_rcl_endpoint_init_fn)rp_real(&real_fn, "rcl_publisher_init", "librcl.so");
    if (real == NULL)
        return RP_RCL_RET_ERROR; /* no librcl in this process */
    rp_rcl_ret_t ret = real(publisher, node, type_support, topic_name, options);
    if (ret == RP_RCL_RET_OK && publisher != NULL && rp_lanes() != NULL)
        describe(true, &g_pub_api, publisher, node, type_support);
    return ret;
}

EXPORT rp_rcl_ret_t rcl_subscription_init(void *subscription, const void *node, const void *type_support,
                                          const char *topic_name, const void *options)
{
    static void *_Atomic real_fn = RP_UNRESOLVED;
    rp_rcl_endpoint_init_fn real = (rp_rcl_endpoint_init_fn)rp_real(&real_fn, "rcl_subscription_init", "librcl.so");
    if (real == NULL)
        return RP_RCL_RET_ERROR;
    rp_rcl_ret_t ret = real(subscription, node, type_support, topic_name, options);
    if (ret == RP_RCL_RET_OK && subscription != NULL && rp_lanes() != NULL)
        describe(false, &g_sub_api, subscription, node, type_support);
    return ret;
}
