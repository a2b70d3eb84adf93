// DSM locks: an MCS queue lock per id on remote atomics, so handing a lock
// over involves only the two ranks concerned and never the CPU of a third
// (the lock's home only holds the queue tail word, reached by remote atomics).
// Each lock's home also keeps the lock's write-notice log (notice_log.hpp).
//
// Memory, collectively allocated by UCX (so same-node peers reach it by
// load/store): per rank, the records of the locks homed here (id % ranks ==
// rank, 1 KiB each) and one queue node per lock id (16 bytes) for this
// rank's own waiting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mpidsm/transport.hpp"
#include "notice_log.hpp"

namespace mpidsm::detail {

class LockTable {
 public:
  // Collective.
  LockTable(Transport& transport, std::size_t locks);
  ~LockTable();  // collective
  // The transport is gone: forget the table without deregistering it.
  void abandon_transport() { memory_ = MemoryRegion(); }
  LockTable(const LockTable&) = delete;
  LockTable& operator=(const LockTable&) = delete;

  std::size_t count() const { return locks_; }
  int home(std::size_t id) const { return static_cast<int>(id % ranks_); }

  // Blocks until this rank holds `id`; FIFO among waiters.
  void acquire(std::size_t id);
  // Hands `id` to the next waiter, or frees it when none waits.
  void release(std::size_t id);

  // The lock's flag word at its home (Dsm::set_flag): set to `value`, or read.
  void set_flag(std::size_t id, std::uint64_t value);
  std::uint64_t flag(std::size_t id);

  // Holder only. Appends notices to the lock's log; remote completion on return.
  void append_notices(std::size_t id, std::uint64_t epoch,
                      const std::vector<std::uint64_t>& notices);
  // Holder only. The notices appended since this rank last read the log in
  // `epoch`, into `out`; false when more were appended than the ring keeps.
  bool read_new_notices(std::size_t id, std::uint64_t epoch, std::vector<std::uint64_t>& out);

 private:
  struct QueueNode {
    std::uint64_t next;     // successor rank + 1, set by the successor
    std::uint64_t granted;  // set to 1 by the predecessor when it hands over
  };
  std::size_t record_offset(std::size_t id) const {
    return (id / ranks_) * LockRecordLayout::bytes;
  }
  std::size_t node_offset(std::size_t id) const { return nodes_base_ + id * sizeof(QueueNode); }
  QueueNode& my_node(std::size_t id) const;
  // Spins on a word of this rank's memory that a peer sets remotely.
  std::uint64_t wait_for_nonzero(const std::uint64_t& word);

  Transport& transport_;
  std::size_t locks_;
  std::size_t ranks_;
  std::uint64_t me_;  // this rank + 1 (0 means "nobody")
  std::size_t nodes_base_;
  MemoryRegion memory_;
  std::vector<std::uint64_t> seen_epoch_;  // per id: epoch of seen_count_
  std::vector<std::uint64_t> seen_count_;  // per id: log entries already read
};

}  // namespace mpidsm::detail
