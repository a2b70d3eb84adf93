// What the tests of a peer's death check in an error's text.
#pragma once

#include <string>

// Whether `message` names `rank` among those gone: "rank 2 is gone" or
// "ranks 0 and 2 are gone" (a survivor that left early may be listed too).
inline bool names_gone(const std::string& message, int rank) {
  const std::string number = std::to_string(rank);
  const std::size_t single = message.find("rank " + number + " is gone");
  if (single != std::string::npos) return true;
  const std::size_t list = message.find("ranks ");
  const std::size_t verb = message.find(" are gone", list);
  if (list == std::string::npos || verb == std::string::npos) return false;
  // Appended rather than " " + substr + ",": GCC 12 at -O3 flags that
  // expression with a false -Wrestrict.
  std::string ranks = " ";
  ranks.append(message, list + 6, verb - list - 6).append(",");
  return ranks.find(" " + number + ",") != std::string::npos ||
         ranks.find(" " + number + " ") != std::string::npos;
}
