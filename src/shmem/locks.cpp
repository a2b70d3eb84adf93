// shmem_set_lock, shmem_test_lock, shmem_clear_lock: a ticket lock in the
// symmetric long itself. Its state lives in one PE's copy, chosen by the
// lock's place in the heap so that a program's locks spread over the PEs:
// the high 32 bits count tickets taken, the low 32 bits the ticket served.
// PEs are served in the order they asked (no starvation).
#include <sched.h>

#include <cstdint>
#include <mutex>
#include <string>

#include "library.hpp"
#include "mpidsm/transport.hpp"

namespace mpidsm::shmem {
namespace {

constexpr std::uint64_t kTicket = std::uint64_t{1} << 32;

struct LockWord {
  global_ptr<std::uint64_t> state;
};

LockWord lock_word(Pgas& p, const long* lock, const char* f) {
  if (!lock)
    throw Error(Errc::invalid_argument, p.rank(), std::string(f) + ": the lock is a null pointer");
  const auto* word = reinterpret_cast<const std::uint64_t*>(lock);
  const detail::GlobalAddress at = p.global(word, 0).address();
  const std::size_t slot = (at.allocation->offset + at.byte) / sizeof(std::uint64_t);
  return {p.global(word, static_cast<int>(slot % static_cast<std::size_t>(p.size())))};
}

std::uint32_t served(std::uint64_t state) {
  return static_cast<std::uint32_t>(state);
}
std::uint32_t taken(std::uint64_t state) {
  return static_cast<std::uint32_t>(state >> 32);
}

void check_not_held(Library& lib, const long* lock, const char* f) {
  std::lock_guard<std::mutex> guard(lib.held_locks_mutex);
  if (lib.held_locks.contains(lock))
    throw Error(Errc::invalid_state, lib.pgas.rank(),
                std::string(f) + ": this PE already holds the lock at " +
                    detail::describe_address(lock) + " (it would wait for itself)");
}

void set_lock(const long* lock, const char* f) {
  Library& lib = library(f);
  Pgas& p = lib.pgas;
  check_not_held(lib, lock, f);
  const LockWord w = lock_word(p, lock, f);
  const std::uint32_t ticket = taken(p.atomic_fetch_add(w.state, kTicket));
  // The word may be this PE's own, whose atomics complete without progress,
  // while the other PEs' atomics on it (the holder's release among them)
  // need this PE's progress: with no progress thread, nothing else serves
  // them (every PE hung in shmem_set_lock).
  Transport& transport = lib.runtime.transport();
  while (served(p.atomic_fetch(w.state)) != ticket) {
    if (transport.progress()) continue;
    transport.check_peers(f);
    if (transport.yield_when_idle()) sched_yield();
  }
  std::lock_guard<std::mutex> guard(lib.held_locks_mutex);
  lib.held_locks.emplace(lock, ticket);
}

int test_lock(const long* lock, const char* f) {
  Library& lib = library(f);
  Pgas& p = lib.pgas;
  check_not_held(lib, lock, f);
  const LockWord w = lock_word(p, lock, f);
  const std::uint64_t state = p.atomic_fetch(w.state);
  if (taken(state) != served(state)) return 1;
  if (p.atomic_compare_swap(w.state, state, state + kTicket) != state) return 1;
  std::lock_guard<std::mutex> guard(lib.held_locks_mutex);
  lib.held_locks.emplace(lock, taken(state));
  return 0;
}

void clear_lock(const long* lock, const char* f) {
  Library& lib = library(f);
  Pgas& p = lib.pgas;
  std::uint32_t ticket = 0;
  {
    std::lock_guard<std::mutex> guard(lib.held_locks_mutex);
    const auto held = lib.held_locks.find(lock);
    if (held == lib.held_locks.end())
      throw Error(
          Errc::invalid_state, p.rank(),
          std::string(f) + ": this PE does not hold the lock at " + detail::describe_address(lock));
    ticket = held->second;
    lib.held_locks.erase(held);
  }
  const LockWord w = lock_word(p, lock, f);
  p.quiet();  // what the holder wrote is complete before the next holder enters
  // Serving the next ticket; from ticket 2^32-1 the carry into the taken
  // count is taken back, so both halves wrap on their own.
  const std::uint64_t next = ticket == UINT32_MAX ? 1 - kTicket : 1;
  p.atomic_fetch_add(w.state, next);
}

}  // namespace
}  // namespace mpidsm::shmem

using namespace mpidsm::shmem;

extern "C" {
void shmem_set_lock(long* lock) {
  guarded("shmem_set_lock", [&] { set_lock(lock, "shmem_set_lock"); });
}
int shmem_test_lock(long* lock) {
  return guarded("shmem_test_lock", [&] { return test_lock(lock, "shmem_test_lock"); });
}
void shmem_clear_lock(long* lock) {
  guarded("shmem_clear_lock", [&] { clear_lock(lock, "shmem_clear_lock"); });
}
}  // extern "C"
