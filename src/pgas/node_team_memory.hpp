// Memory that every member of a team maps, when the whole team shares a node:
// team rank 0 creates one memfd of `bytes` per member, the others map it
// through /proc/<pid>/fd/<fd>, and every member checks its own mapping.
// Set-up is collective over the team; teardown is local (an unmap), so a
// team destroyed while a member is gone cannot hang on it.
//
// It exists only when every member can map it: a member on another host, in
// another PID namespace (simulated hosts), or with direct access off makes
// every member go without, together.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>

namespace mpidsm::detail {

class NodeTeamMemory {
 public:
  // Collective over `comm` (this rank is `member` of it). `usable`: this
  // member may use memory mapped from its peers (direct access on). Null
  // unless every member shares this node and mapped the memory.
  static std::unique_ptr<NodeTeamMemory> map(MPI_Comm comm, int member, bool usable,
                                             std::size_t bytes_per_member);
  ~NodeTeamMemory();
  NodeTeamMemory(const NodeTeamMemory&) = delete;
  NodeTeamMemory& operator=(const NodeTeamMemory&) = delete;

  // Member `m`'s part, zeroed at creation.
  std::byte* part(int m) const { return base_ + static_cast<std::size_t>(m) * bytes_per_member_; }

 private:
  NodeTeamMemory(std::byte* base, std::size_t bytes, std::size_t bytes_per_member)
      : base_(base), bytes_(bytes), bytes_per_member_(bytes_per_member) {}

  std::byte* base_;
  std::size_t bytes_;
  std::size_t bytes_per_member_;
};

}  // namespace mpidsm::detail
