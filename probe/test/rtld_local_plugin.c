/* A "Python extension": linked against libtracetools and librcl, loaded RTLD_LOCAL by its host. */
#include <stddef.h>
#include <stdint.h>

void ros_trace_rcl_node_init(const void *, const void *, const char *, const char *);
void ros_trace_rcl_publisher_init(const void *, const void *, const void *, const char *, size_t);
void ros_trace_rcl_publish(const void *, const void *);
int32_t rcl_publish_loaned_message(const void *, void *, void *);

__attribute__((visibility("default"))) void plugin_publish(int n)
{
    static char node[64], impl[64];
    static void *pub = impl; /* rcl_publisher_t { impl } */
    ros_trace_rcl_node_init(node, NULL, "rtld_local", "/");
    ros_trace_rcl_publisher_init(&pub, node, NULL, "/rtld_local", 10);
    for (int i = 0; i < n; i++)
        ros_trace_rcl_publish(&pub, NULL);
}

/* Humble's librcl fires no tracepoint here: the probe's wrapper must find the
 * real function through the RTLD_NOLOAD fallback and count each call. */
__attribute__((visibility("default"))) int plugin_publish_loaned(int n)
{
    static char node[64], impl[64], msg[8];
    static void *pub = impl;
    ros_trace_rcl_node_init(node, NULL, "rtld_loaned", "/");
    ros_trace_rcl_publisher_init(&pub, node, NULL, "/rtld_loaned", 10);
    int failed = 0;
    for (int i = 0; i < n; i++)
        failed += rcl_publish_loaned_message(&pub, msg, NULL) != 0;
    return failed;
}
