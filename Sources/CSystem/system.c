#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include "CSystem.h"

int syncr_fallocate(int fd, off_t offset, off_t length) {
    return fallocate(fd, 0, offset, length);
}

int syncr_exchange(const char *a, const char *b) {
    return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}
