/* A "Python extension": linked against libtracetools, loaded RTLD_LOCAL by its host. */
#include <stddef.h>

void ros_trace_rcl_node_init(const void *, const void *, const char *, const char *);
void ros_trace_rcl_publisher_init(const void *, const void *, const void *, const char *, size_t);
void ros_trace_rcl_publish(const void *, const void *);

__attribute__((visibility("default"))) void plugin_publish(int n)
{
    static char node[64], impl[64];
    static void *pub = impl; /* rcl_publisher_t { impl } */
    ros_trace_rcl_node_init(node, NULL, "rtld_local", "/");
    ros_trace_rcl_publisher_init(&pub, node, NULL, "/rtld_local", 10);
    for (int i = 0; i < n; i++)
        ros_trace_rcl_publish(&pub, NULL);
}
