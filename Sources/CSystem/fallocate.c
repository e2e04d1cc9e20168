#define _GNU_SOURCE
#include <fcntl.h>
#include "CSystem.h"

int syncr_fallocate(int fd, off_t offset, off_t length) {
    return fallocate(fd, 0, offset, length);
}
