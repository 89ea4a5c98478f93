/* Like python3: does not link libtracetools, dlopens a plugin that does, RTLD_LOCAL. */
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
    return 0;
}
