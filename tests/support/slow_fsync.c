/* LD_PRELOAD shim for the probe tests: makes fsync and fdatasync sleep
 * SLOW_FSYNC_US microseconds before the real call, standing in for storage
 * that acknowledges a write only after network replication (Ceph RBD). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

static useconds_t delay_us(void) {
    static long cached = -1;
    if (cached < 0) {
        const char *s = getenv("SLOW_FSYNC_US");
        cached = s ? atol(s) : 0;
        if (cached < 0) cached = 0;
    }
    return (useconds_t)cached;
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    useconds_t d = delay_us();
    if (d) usleep(d);
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    useconds_t d = delay_us();
    if (d) usleep(d);
    return real(fd);
}
