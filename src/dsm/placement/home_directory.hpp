// Homes of first-touch pages: the first rank to touch a page becomes its
// home. Each page has a directory word at rank page % ranks holding home + 1
// (0 while nobody touched it); the toucher claims it with one compare-and-
// swap, so exactly one rank wins and every other learns the winner from the
// same operation. Homes learned are remembered locally (a lazy array), so a
// page costs one remote atomic per rank at most.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "dsm/memory/lazy_array.hpp"
#include "dsm/memory/shared_words.hpp"

namespace mpidsm::detail {

class HomeDirectory {
 public:
  static constexpr int undecided = -2;

  // Collective.
  HomeDirectory(MPI_Comm comm, Transport& transport, std::size_t pages,
                const MappablePeers& mappable);

  // The home this rank knows for `page`, or `undecided`.
  int known(std::size_t page) const {
    return known_[page] == 0 ? undecided : static_cast<int>(known_[page]) - 1;
  }
  // Claims `page` for this rank unless someone did first; returns its home.
  int claim(std::size_t page);
  // The home recorded in the directory (a remote read), or `undecided`.
  int look_up(std::size_t page);
  // Collective context (free): the pages are untouched again.
  void forget(std::size_t first, std::size_t count);
  void abandon_transport() { words_.abandon_transport(); }
  // Every rank's words are mapped here: no access reaches UCX.
  bool direct() const { return words_.direct(); }

 private:
  std::size_t owner(std::size_t page) const { return page % ranks_; }
  std::size_t offset(std::size_t page) const { return page / ranks_ * 4; }

  std::size_t ranks_;
  int rank_;
  SharedWords words_;
  LazyArray<std::uint32_t> known_;  // per page: home + 1, 0 when unknown
};

}  // namespace mpidsm::detail
