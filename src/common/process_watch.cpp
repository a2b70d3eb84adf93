#include "process_watch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>

namespace mpidsm::detail {

std::uint64_t pid_space() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string boot;
  std::getline(in, boot);
  struct stat ns {};
  const std::uint64_t inode = stat("/proc/self/ns/pid", &ns) == 0 ? ns.st_ino : 0;
  return std::hash<std::string>{}(boot) ^ (inode * 0x9E3779B97F4A7C15ull);
}

bool process_gone(std::int64_t pid) {
  if (kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  char path[32] = "/proc/";  // then the pid's digits and "/stat"
  char digits[20];
  int count = 0;
  for (auto rest = static_cast<unsigned long long>(pid); count == 0 || rest != 0; rest /= 10)
    digits[count++] = static_cast<char>('0' + rest % 10);
  char* at = path + 6;
  while (count > 0) *at++ = digits[--count];
  std::memcpy(at, "/stat", 6);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char text[512];
  const ssize_t length = read(fd, text, sizeof text - 1);
  close(fd);
  if (length <= 0) return true;
  text[length] = '\0';
  // "pid (command) state ...": the command may hold spaces and parentheses.
  const char* end = std::strrchr(text, ')');
  return end && end[1] == ' ' && (end[2] == 'Z' || end[2] == 'X');
}

std::string describe_gone(std::span<const std::size_t> ranks) {
  if (ranks.size() == 1) return "rank " + std::to_string(ranks[0]) + " is gone (its process died)";
  std::string list;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    list += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
  return "ranks " + list + " are gone (their processes died)";
}

}  // namespace mpidsm::detail
