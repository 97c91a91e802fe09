/* tests/kill/fault_shim.c: an LD_PRELOAD library that makes one file-system call of a process
 * fail, or its writes short, for scripts/fault-injection.sh.
 *
 *   FAULT_CALL    write | fsync | rename | open  (the kind of call to fail; unset or "none":
 *                 fail nothing, only count)
 *   FAULT_INDEX   N: the N-th call of that kind fails (from 1), once; later calls pass
 *   FAULT_ERRNO   ENOSPC | EIO | a number (default ENOSPC)
 *   FAULT_SHORT   every | N: write(2) and pwrite(2) on a regular file write only half the bytes
 *                 asked for (at least 1) on every call, or on the N-th such call only (fwrite
 *                 not counted); they return that count, as the kernel may (a signal, a full
 *                 quota): the caller must write the rest. Independent of FAULT_CALL.
 *   FAULT_REPORT  a file to which the shim appends "injected <kind> <N> <errno name> <path>"
 *                 when it fails a call, and "counts write <w> fsync <f> rename <r> open <o>"
 *                 then "plain_writes <p> short <s>" (the write(2) and pwrite(2) calls, and
 *                 those shortened) when the process exits normally
 *
 * Calls counted, in the order the process makes them:
 *   write   write(2), pwrite(2) and fwrite(3) on a regular file (not pipes, terminals: stdout,
 *           stderr); fwrite's own writes happen inside libc, out of the shim's reach, and are
 *           never shortened (stdio loops on short writes itself);
 *   fsync   fsync(2) and fdatasync(2) on a regular file or a directory;
 *   rename  rename(2);
 *   open    open(2), open64, openat(2) with O_WRONLY, O_RDWR or O_CREAT, and fopen(3) with a
 *           mode of "w", "a" or "+".
 * A failed write or fwrite writes nothing; a failed open or fopen creates nothing. <path> is
 * the file the call was on (from /proc/self/fd for a descriptor; rename: the source). Build:
 * cc -shared -fPIC -O2 -o fault_shim.so fault_shim.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

enum kind { K_WRITE, K_FSYNC, K_RENAME, K_OPEN, K_COUNT };
static const char* const kind_names[K_COUNT] = {"write", "fsync", "rename", "open"};

static long counts[K_COUNT];
static int configured;
static int fault_kind = -1;
static long fault_index;
static int fault_errno = ENOSPC;
static const char* report_path;
static int short_every;   /* FAULT_SHORT=every */
static long short_index;  /* FAULT_SHORT=N */
static long plain_writes; /* write(2), pwrite(2) calls on regular files */
static long shortened;    /* calls shortened */

static ssize_t (*real_write)(int, const void*, size_t);
static ssize_t (*real_pwrite)(int, const void*, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void*, size_t, off64_t);
static size_t (*real_fwrite)(const void*, size_t, size_t, FILE*);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_rename)(const char*, const char*);
static int (*real_open)(const char*, int, ...);
static int (*real_open64)(const char*, int, ...);
static int (*real_openat)(int, const char*, int, ...);
static FILE* (*real_fopen)(const char*, const char*);
static FILE* (*real_fopen64)(const char*, const char*);

static void configure(void) {
  if (configured) return;
  configured = 1;
  real_write = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  real_pwrite = (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  real_pwrite64 = (ssize_t(*)(int, const void*, size_t, off64_t))dlsym(RTLD_NEXT, "pwrite64");
  real_fwrite = (size_t(*)(const void*, size_t, size_t, FILE*))dlsym(RTLD_NEXT, "fwrite");
  real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  real_rename = (int (*)(const char*, const char*))dlsym(RTLD_NEXT, "rename");
  real_open = (int (*)(const char*, int, ...))dlsym(RTLD_NEXT, "open");
  real_open64 = (int (*)(const char*, int, ...))dlsym(RTLD_NEXT, "open64");
  real_openat = (int (*)(int, const char*, int, ...))dlsym(RTLD_NEXT, "openat");
  real_fopen = (FILE * (*)(const char*, const char*)) dlsym(RTLD_NEXT, "fopen");
  real_fopen64 = (FILE * (*)(const char*, const char*)) dlsym(RTLD_NEXT, "fopen64");
  const char* call = getenv("FAULT_CALL");
  for (int k = 0; call != NULL && k < K_COUNT; ++k)
    if (strcmp(call, kind_names[k]) == 0) fault_kind = k;
  const char* index = getenv("FAULT_INDEX");
  fault_index = index != NULL ? atol(index) : 0;
  const char* err = getenv("FAULT_ERRNO");
  if (err != NULL && strcmp(err, "EIO") == 0) {
    fault_errno = EIO;
  } else if (err != NULL && strcmp(err, "ENOSPC") != 0 && atoi(err) > 0) {
    fault_errno = atoi(err);
  }
  report_path = getenv("FAULT_REPORT");
  const char* short_mode = getenv("FAULT_SHORT");
  if (short_mode != NULL && strcmp(short_mode, "every") == 0) {
    short_every = 1;
  } else if (short_mode != NULL) {
    short_index = atol(short_mode);
  }
}

static void report(const char* line) {
  if (report_path == NULL) return;
  const int fd = real_open(report_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const size_t n = strlen(line);
  if (real_write(fd, line, n) != (ssize_t)n) { /* nothing to do: a report is best effort */
  }
  close(fd);
}

/* Counts a call of `kind`; returns 1 when this one is to fail (errno is then set). */
static int hit(int kind, const char* path) {
  configure();
  const long n = ++counts[kind];
  if (kind != fault_kind || n != fault_index) return 0;
  char line[4600];
  snprintf(line, sizeof line, "injected %s %ld %s %s\n", kind_names[kind], n,
           fault_errno == EIO      ? "EIO"
           : fault_errno == ENOSPC ? "ENOSPC"
                                   : strerror(fault_errno),
           path != NULL ? path : "?");
  report(line);
  errno = fault_errno;
  return 1;
}

static void fd_path(int fd, char* out, size_t size) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, out, size - 1);
  out[n > 0 ? n : 0] = '\0';
}

/* Whether `fd` is a regular file (or, with `dirs`, a directory). */
static int is_file(int fd, int dirs) {
  struct stat st;
  if (fstat(fd, &st) != 0) return 0;
  return S_ISREG(st.st_mode) || (dirs && S_ISDIR(st.st_mode));
}

static int fd_hit(int kind, int fd, int dirs) {
  configure();
  if (!is_file(fd, dirs)) return 0;
  char path[4096];
  fd_path(fd, path, sizeof path);
  return hit(kind, path);
}

static int opens_for_write(int flags) { return (flags & (O_WRONLY | O_RDWR | O_CREAT)) != 0; }

static int mode_writes(const char* mode) {
  return mode != NULL &&
         (strchr(mode, 'w') != NULL || strchr(mode, 'a') != NULL || strchr(mode, '+') != NULL);
}

/* The byte count a write(2) or pwrite(2) of `n` bytes to a regular file passes on. */
static size_t write_size(size_t n) {
  ++plain_writes;
  if (n < 2 || !(short_every || (short_index > 0 && plain_writes == short_index))) return n;
  ++shortened;
  return n / 2;
}

ssize_t write(int fd, const void* buf, size_t n) {
  if (fd_hit(K_WRITE, fd, 0)) return -1;
  return real_write(fd, buf, is_file(fd, 0) ? write_size(n) : n);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) {
  if (fd_hit(K_WRITE, fd, 0)) return -1;
  return real_pwrite(fd, buf, is_file(fd, 0) ? write_size(n) : n, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t offset) {
  if (fd_hit(K_WRITE, fd, 0)) return -1;
  return real_pwrite64(fd, buf, is_file(fd, 0) ? write_size(n) : n, offset);
}

size_t fwrite(const void* p, size_t size, size_t n, FILE* f) {
  if (fd_hit(K_WRITE, fileno(f), 0)) return 0;
  return real_fwrite(p, size, n, f);
}

int fsync(int fd) {
  if (fd_hit(K_FSYNC, fd, 1)) return -1;
  return real_fsync(fd);
}

int fdatasync(int fd) {
  if (fd_hit(K_FSYNC, fd, 1)) return -1;
  return real_fdatasync(fd);
}

int rename(const char* from, const char* to) {
  if (hit(K_RENAME, from)) return -1;
  return real_rename(from, to);
}

int open(const char* path, int flags, ...) {
  configure();
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (opens_for_write(flags) && hit(K_OPEN, path)) return -1;
  return real_open(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  configure();
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (opens_for_write(flags) && hit(K_OPEN, path)) return -1;
  return real_open64(path, flags, mode);
}

int openat(int dirfd, const char* path, int flags, ...) {
  configure();
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (opens_for_write(flags) && hit(K_OPEN, path)) return -1;
  return real_openat(dirfd, path, flags, mode);
}

FILE* fopen(const char* path, const char* mode) {
  configure();
  if (mode_writes(mode) && hit(K_OPEN, path)) return NULL;
  return real_fopen(path, mode);
}

FILE* fopen64(const char* path, const char* mode) {
  configure();
  if (mode_writes(mode) && hit(K_OPEN, path)) return NULL;
  return real_fopen64(path, mode);
}

__attribute__((destructor)) static void report_counts(void) {
  configure();
  char line[256];
  snprintf(line, sizeof line, "counts write %ld fsync %ld rename %ld open %ld\n", counts[K_WRITE],
           counts[K_FSYNC], counts[K_RENAME], counts[K_OPEN]);
  report(line);
  snprintf(line, sizeof line, "plain_writes %ld short %ld\n", plain_writes, shortened);
  report(line);
}
