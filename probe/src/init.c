/*
 * Init-time facts (a family of hooks over core.h): nodes, publishers,
 * subscriptions, timers, services and clients as rcl and rclcpp announce
 * them through their init tracepoints. Each takes the probe's mutex, fills
 * the core's endpoint table and maps, and forwards. Rare: a process makes
 * its entities once (lifecycle nodes and rclpy's clients again and again,
 * which the table's slot reuse absorbs).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core.h"
#include "ros2_pulse/segment.h"
#include "ros2_pulse/tracetools_api.h"
#include "segment_writer.h"

EXPORT void ros_trace_rcl_node_init(const void *node_handle, const void *rmw_handle, const char *node_name,
                                    const char *node_namespace)
{
    if (node_handle != NULL) {
        INIT_BEGIN();
        rp_add_node_locked((uintptr_t)node_handle, node_namespace, node_name);
        INIT_END();
    }
    FORWARD(rcl_node_init, (const void *, const void *, const char *, const char *),
            (node_handle, rmw_handle, node_name, node_namespace));
}

EXPORT void ros_trace_rcl_publisher_init(const void *publisher_handle, const void *node_handle,
                                         const void *rmw_publisher_handle, const char *topic_name,
                                         const size_t queue_depth)
{
    if (publisher_handle != NULL) {
        INIT_BEGIN();
        rp_add_endpoint_locked(&g_pubs, rp_impl_of(publisher_handle), RP_KIND_PUBLISHER, topic_name, queue_depth,
                            (uintptr_t)node_handle);
        INIT_END();
    }
    FORWARD(rcl_publisher_init, (const void *, const void *, const void *, const char *, const size_t),
            (publisher_handle, node_handle, rmw_publisher_handle, topic_name, queue_depth));
}

EXPORT void ros_trace_rcl_subscription_init(const void *subscription_handle, const void *node_handle,
                                            const void *rmw_subscription_handle, const char *topic_name,
                                            const size_t queue_depth)
{
    if (subscription_handle != NULL) {
        INIT_BEGIN();
        rp_add_endpoint_locked(&g_subs, rp_impl_of(subscription_handle), RP_KIND_SUBSCRIPTION, topic_name,
                            queue_depth, (uintptr_t)node_handle);
        if (rmw_subscription_handle != NULL) /* the handle rmw_take will name */
            rp_map_put_locked(&g_rmw_subs, (uintptr_t)rmw_subscription_handle, rp_map_get(&g_subs, rp_impl_of(subscription_handle)));
        INIT_END();
    }
    FORWARD(rcl_subscription_init, (const void *, const void *, const void *, const char *, const size_t),
            (subscription_handle, node_handle, rmw_subscription_handle, topic_name, queue_depth));
}

EXPORT void ros_trace_rclcpp_subscription_init(const void *subscription_handle, const void *subscription)
{
    if (subscription_handle != NULL && subscription != NULL) {
        INIT_BEGIN();
        uintptr_t rcl_impl = rp_impl_of(subscription_handle);
        rp_map_put_locked(&g_rclcpp_subs, (uintptr_t)subscription, rcl_impl);
        uint64_t ep = rp_map_get(&g_subs, rcl_impl);
        if (ep != 0)
            atomic_fetch_or_explicit(&g_seg.endpoints[ep - 1].flags, RP_EP_RCLCPP, memory_order_release);
        INIT_END();
    }
    FORWARD(rclcpp_subscription_init, (const void *, const void *), (subscription_handle, subscription));
}

EXPORT void ros_trace_rclcpp_subscription_callback_added(const void *subscription, const void *callback)
{
    if (subscription != NULL && callback != NULL) {
        INIT_BEGIN();
        rp_map_put_locked(&g_callbacks, (uintptr_t)callback, (uint64_t)(uintptr_t)subscription | CB_TAG_SUB);
        INIT_END();
    }
    FORWARD(rclcpp_subscription_callback_added, (const void *, const void *), (subscription, callback));
}

/*
 * A timer takes an endpoint slot only when rclcpp claims it: only rclcpp timers fire a
 * tracepoint (callback_start). rclpy makes an rcl timer per timed wait (spin_once with a
 * timeout), thousands a minute; they fire nothing, so they get no slot, only their period
 * kept here. A new rcl timer at an old timer's address means the old one is gone.
 */
EXPORT void ros_trace_rcl_timer_init(const void *timer_handle, int64_t period)
{
    if (timer_handle != NULL) {
        INIT_BEGIN();
        uintptr_t impl = rp_impl_of(timer_handle);
        uint64_t old = rp_map_get(&g_timers, impl);
        if (old != 0) {
            rp_retire_locked((uint32_t)(old - 1));
            rp_map_put_locked(&g_timers, impl, 0);
        }
        rp_map_put_locked(&g_timer_periods, impl, (period > 0 ? (uint64_t)period : 0) + 1);
        INIT_END();
    }
    FORWARD(rcl_timer_init, (const void *, int64_t), (timer_handle, period));
}

EXPORT void ros_trace_rclcpp_timer_callback_added(const void *timer_handle, const void *callback)
{
    if (timer_handle != NULL && callback != NULL) {
        INIT_BEGIN();
        uintptr_t impl = rp_impl_of(timer_handle);
        if (rp_map_get(&g_timers, impl) == 0) {
            uint64_t period = rp_map_get(&g_timer_periods, impl);
            rp_add_endpoint_locked(&g_timers, impl, RP_KIND_TIMER, "", period != 0 ? period - 1 : 0, 0);
        }
        rp_map_put_locked(&g_callbacks, (uintptr_t)callback, (uint64_t)impl | CB_TAG_TIMER);
        uint64_t ep = rp_map_get(&g_timers, impl);
        if (ep != 0) /* its fires are counted at callback_start, not at rcl_timer_call */
            atomic_fetch_or_explicit(&g_seg.endpoints[ep - 1].flags, RP_EP_RCLCPP, memory_order_release);
        INIT_END();
    }
    FORWARD(rclcpp_timer_callback_added, (const void *, const void *), (timer_handle, callback));
}

EXPORT void ros_trace_rclcpp_timer_link_node(const void *timer_handle, const void *node_handle)
{
    if (timer_handle != NULL && node_handle != NULL) {
        INIT_BEGIN();
        uint64_t ep = rp_map_get(&g_timers, rp_impl_of(timer_handle));
        if (ep != 0)
            rp_link_node_locked((uint32_t)(ep - 1), (uintptr_t)node_handle);
        INIT_END();
    }
    FORWARD(rclcpp_timer_link_node, (const void *, const void *), (timer_handle, node_handle));
}

EXPORT void ros_trace_rcl_service_init(const void *service_handle, const void *node_handle,
                                       const void *rmw_service_handle, const char *service_name)
{
    if (service_handle != NULL) {
        INIT_BEGIN();
        rp_add_endpoint_locked(&g_services, rp_impl_of(service_handle), RP_KIND_SERVICE, service_name, 0,
                            (uintptr_t)node_handle);
        INIT_END();
    }
    FORWARD(rcl_service_init, (const void *, const void *, const void *, const char *),
            (service_handle, node_handle, rmw_service_handle, service_name));
}

EXPORT void ros_trace_rclcpp_service_callback_added(const void *service_handle, const void *callback)
{
    if (service_handle != NULL && callback != NULL) {
        INIT_BEGIN();
        rp_map_put_locked(&g_callbacks, (uintptr_t)callback,
                       (uint64_t)rp_impl_of(service_handle) | CB_TAG_SERVICE);
        /* its callbacks fire callback_start: readers tell it from an rclpy service, whose do not */
        uint64_t ep = rp_map_get(&g_services, rp_impl_of(service_handle));
        if (ep != 0)
            atomic_fetch_or_explicit(&g_seg.endpoints[ep - 1].flags, RP_EP_RCLCPP, memory_order_release);
        INIT_END();
    }
    FORWARD(rclcpp_service_callback_added, (const void *, const void *), (service_handle, callback));
}

/* rclcpp and rclpy clients alike: rcl_client_init fires it on every distro (tracetools-facts §3). */
EXPORT void ros_trace_rcl_client_init(const void *client_handle, const void *node_handle,
                                      const void *rmw_client_handle, const char *service_name)
{
    if (client_handle != NULL) {
        INIT_BEGIN();
        rp_add_endpoint_locked(&g_clients, rp_impl_of(client_handle), RP_KIND_CLIENT, service_name, 0,
                            (uintptr_t)node_handle);
        INIT_END();
    }
    FORWARD(rcl_client_init, (const void *, const void *, const void *, const char *),
            (client_handle, node_handle, rmw_client_handle, service_name));
}
