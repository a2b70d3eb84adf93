// The engine's side of protocol/lock_grants.hpp: which pages this rank
// wishes for with a lock's grant, and what it does with those that come.
#include <algorithm>
#include <cstring>

#include "engine.hpp"

namespace mpidsm {

using detail::LockGrantWishes;

// invalidate pages never get updates (the policy says so), and
// single_writer pages are written home whole, never refreshed under a lock.
bool Dsm::Engine::grantable(std::size_t id, std::size_t page) const {
  if (!locks_.releases_by_call(id) || home_of_page(page) != locks_.home(id)) return false;
  const Coherence policy = policy_of_page(page);
  return policy != Coherence::invalidate && policy != Coherence::single_writer;
}

void Dsm::Engine::wish_for_lock(std::size_t id, std::size_t page) {
  if (grantable(id, page)) locks_.wish(id, page);
}

// Homes move at barriers, so each wish is checked again. A pinned page is
// left to the acquire's usual path (refresh_in_place keeps transfers' bytes).
// A copy a lock's release kept writable (stays_writable) is wished for as a
// refresh too: take_grants installs it only if nothing wrote it since.
std::size_t Dsm::Engine::grant_wishes(std::size_t id, std::uint64_t* wished) {
  std::size_t count = 0;
  for (const std::uint64_t wish : locks_.wishes(id)) {
    if (wish == 0) break;
    const auto page = static_cast<std::size_t>(wish - 1);
    if (!grantable(id, page) || pinned(page)) continue;
    if (state_[page] == PageState::cached || stays_writable(page, ReleaseKind::lock))
      wished[count++] = wish;
    else if (state_[page] == PageState::invalid)
      wished[count++] = wish | LockGrantWishes::kFetch |
                        (sharing_.holds_copy(page) ? 0 : LockGrantWishes::kCountCopy);
  }
  return count;
}

// A granted page whose state changed meanwhile (another thread of this rank
// fetched or wrote it) is left to the notices' usual path; its home may then
// count this rank's copy twice, which only costs notices (sharing.hpp: a
// count may run high, never low).
std::size_t Dsm::Engine::take_grants(std::span<const std::uint64_t> wished,
                                     std::size_t* installed) {
  std::size_t count = 0;
  for (const std::uint64_t wish : wished) {
    const auto page = static_cast<std::size_t>((wish & LockGrantWishes::kPageMask) - 1);
    const std::byte* bytes = locks_.granted(page);
    if (!bytes) continue;
    if (wish & LockGrantWishes::kCountCopy) sharing_.take_copy(page);  // the home counted it
    if (state_[page] == PageState::cached && !pinned(page)) {
      sync_.record_change(page);  // as refresh_later: a push may be older now
      std::memcpy(master(page), bytes, page_size_);
      watch_updated(page, 1);
    } else if (stays_writable(page, ReleaseKind::lock) &&
               std::memcmp(master(page), twin(page), page_size_) == 0) {
      // Nothing written since its release: the grant becomes both the copy
      // and its twin, so the next release's diff holds only new writes.
      sync_.record_change(page);
      std::memcpy(master(page), bytes, page_size_);
      std::memcpy(twin(page), bytes, page_size_);
    } else if (state_[page] == PageState::invalid && (wish & LockGrantWishes::kFetch)) {
      install_granted_copy(page, bytes);
    } else {
      continue;
    }
    installed[count++] = page;
    ++stats_.lock_grant_pages;
  }
  return count;
}

// As fetch_batches does for a fetched page, the bytes coming from the grant:
// the home counted the copy before it read them.
void Dsm::Engine::install_granted_copy(std::size_t page, const std::byte* bytes) {
  try {
    make_room(1);
  } catch (...) {
    drop_registration(page);
    throw;
  }
  cache_.insert(page);
  std::memcpy(master(page), bytes, page_size_);
  try {
    protect(page, 1, PROT_READ);
  } catch (...) {
    forget_copy(page);
    throw;
  }
  cache_fetched(page, true);
}

}  // namespace mpidsm
