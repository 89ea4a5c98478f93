/* Like python3: links neither libtracetools nor librcl, dlopens a plugin that does, RTLD_LOCAL. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    void (*publish)(int) = (void (*)(int))dlsym(h, "plugin_publish");
    if (publish == NULL)
        return 1;
    publish(1000);
    int (*publish_loaned)(int) = (int (*)(int))dlsym(h, "plugin_publish_loaned");
    if (publish_loaned == NULL || publish_loaned(500) != 0)
        return 1;
    return 0;
}
