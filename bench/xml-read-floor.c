/* The syscall floor of reading a corpus of many files (bench/xml-extract.sh):
 * list a directory tree and open, read and close every file in it, parsing
 * nothing, as cheaply as C allows (directory fds, one read per file into
 * one buffer, a second only if the first filled it). Prints the CPU time
 * of the walk (user + system, getrusage) per file and as MB per
 * CPU-second: no extractor that reads each file through the kernel can go
 * faster on this machine.
 *
 *   cc -O2 -o xml-read-floor bench/xml-read-floor.c && ./xml-read-floor DIR
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

static char buf[1 << 20];
static long files, bytes;

static double cpu_seconds(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

static void walk(int dir_fd) {
  DIR *dir = fdopendir(dir_fd);
  if (!dir) return;
  struct dirent *e;
  while ((e = readdir(dir))) {
    if (e->d_name[0] == '.') continue;
    if (e->d_type == DT_DIR) {
      int sub = openat(dir_fd, e->d_name, O_RDONLY | O_DIRECTORY);
      if (sub >= 0) walk(sub);
      continue;
    }
    int fd = openat(dir_fd, e->d_name, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) continue;
    ssize_t n = read(fd, buf, sizeof buf);
    while (n > 0) {
      bytes += n;
      n = n == (ssize_t)sizeof buf ? read(fd, buf, sizeof buf) : 0;
    }
    close(fd);
    files++;
  }
  closedir(dir);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  int fd = open(argv[1], O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  double start = cpu_seconds();
  walk(fd);
  double cpu = cpu_seconds() - start;
  printf("%ld files, %ld bytes, %.3f CPU-s, %.2f us per file, %.1f MB per CPU-second\n", files, bytes, cpu,
         cpu / (files ? files : 1) * 1e6, bytes / 1e6 / (cpu > 0 ? cpu : 1e-9));
  return 0;
}
