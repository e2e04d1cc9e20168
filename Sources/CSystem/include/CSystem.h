#ifndef SYNCR_CSYSTEM_H
#define SYNCR_CSYSTEM_H
#include <sys/types.h>

/* fallocate(2) is a GNU extension that Swift's Glibc module does not export. Returns 0, or -1
   with errno set (EOPNOTSUPP where the file system cannot preallocate). */
int syncr_fallocate(int fd, off_t offset, off_t length);

/* renameat2(RENAME_EXCHANGE): swaps two paths in one step (a folder replaced by another with
   no moment where neither is there). Returns 0, or -1 with errno (EINVAL, ENOSYS where the
   file system or kernel cannot). */
int syncr_exchange(const char *a, const char *b);

/* renameat2(RENAME_NOREPLACE): renames unless `to` exists (EEXIST), in one step. Returns 0, or
   -1 with errno (EINVAL, ENOSYS where the file system or kernel cannot). */
int syncr_rename_noreplace(const char *from, const char *to);

/* sync_file_range(SYNC_FILE_RANGE_WRITE): starts writing the dirty pages of a file's range to
   the disk, without waiting for them, so that a later fdatasync finds most of them written.
   Returns 0, or -1 with errno (ESPIPE, EINVAL where the file cannot; nothing to undo). */
int syncr_start_writeback(int fd, off_t offset, off_t length);

/* The git commit this binary was built from (SYNCR_COMMIT at build time), or NULL. */
const char *syncr_build_commit(void);

/* The file system type of `path` (statfs(2)'s f_type, e.g. 0x01021994 for tmpfs), or -1
   with errno set. Swift's Glibc module does not export sys/vfs.h. */
long syncr_filesystem_type(const char *path);

/* ioctl(SIOCOUTQ) of a TCP socket: the bytes written to it that the peer has not acknowledged
   yet, sent or not, or -1 with errno set. ioctl(2) is variadic, which Swift cannot call. */
long syncr_socket_unacknowledged(int fd);
#endif
