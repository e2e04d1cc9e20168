#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <sys/vfs.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include "CSystem.h"

int syncr_fallocate(int fd, off_t offset, off_t length) {
    return fallocate(fd, 0, offset, length);
}

int syncr_exchange(const char *a, const char *b) {
    return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

int syncr_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

int syncr_start_writeback(int fd, off_t offset, off_t length) {
    return sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
}

long syncr_filesystem_type(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    return (long)info.f_type;
}

long syncr_socket_unacknowledged(int fd) {
    int pending = 0;
    if (ioctl(fd, SIOCOUTQ, &pending) != 0) return -1;
    return (long)pending;
}
