// Linux system calls that Glibc's Swift module does not export.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/tcp.h>

/// accept4(2), declared by glibc only under _GNU_SOURCE.
int csystem_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/// The number of CPUs in this process's affinity mask (sched_getaffinity needs _GNU_SOURCE).
int csystem_available_cpus(void);

#include <spawn.h>
/// posix_spawn_file_actions_addclosefrom_np(3) (glibc 2.34+), declared only under _GNU_SOURCE:
/// a spawned child closes every descriptor from `from` on.
int csystem_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int from);

#include <malloc.h>
/// malloc_trim(3): gives free memory at the heap's top back to the system (glibc only).
static inline int csystem_malloc_trim(size_t pad) { return malloc_trim(pad); }
/// mallinfo2(3) (glibc 2.33+), over every arena: bytes allocated and in use (mmapped blocks
/// included), and bytes the heap holds free.
static inline void csystem_heap_bytes(size_t *in_use, size_t *free_bytes) {
    struct mallinfo2 info = mallinfo2();
    *in_use = info.uordblks + info.hblkhd;
    *free_bytes = info.fordblks;
}
/// mallopt(M_ARENA_MAX, count): at most `count` malloc arenas.
static inline int csystem_limit_malloc_arenas(int count) { return mallopt(M_ARENA_MAX, count); }

#include <stdio.h>
/// Standard output flushed at every line end, even to a file or a pipe (C's default holds a
/// block until exit). Swift cannot name `stdout` safely under strict concurrency.
static inline void csystem_line_buffer_stdout(void) { setvbuf(stdout, NULL, _IOLBF, 0); }

#include <stddef.h>
/// memmem(3), declared by glibc only under _GNU_SOURCE: where `needle` first occurs in `haystack`.
void *csystem_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);
