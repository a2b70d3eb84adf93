#include "home_moves.hpp"

#include <algorithm>

#include "release_notice.hpp"

namespace mpidsm::detail {
namespace {

// Votes: 0 is kUsual's, and a higher rank is a more permissive mode.
constexpr int permissiveness(HomeMigration mode) {
  return mode == HomeMigration::off ? 0 : mode == HomeMigration::adaptive ? 1 : 2;
}

}  // namespace

HomeMoves::HomeMoves(std::size_t pages, HomeMigration mode)
    : mode_(mode), moved_(pages), last_sole_(pages), writers_(pages) {
  noticed_.reserve(pages);
  moves_.reserve(pages);
}

// Vote v is the mode of permissiveness v, rotated so that kUsual votes 0.
unsigned HomeMoves::vote(bool against) const {
  const HomeMigration mode = against ? HomeMigration::off : mode_;
  return static_cast<unsigned>(permissiveness(mode) - permissiveness(kUsual) + 3) % 3;
}

HomeMigration HomeMoves::mode_of(unsigned vote) {
  switch ((vote + static_cast<unsigned>(permissiveness(kUsual))) % 3) {
    case 0:
      return HomeMigration::off;
    case 1:
      return HomeMigration::adaptive;
    default:
      return HomeMigration::on;
  }
}

HomeMigration HomeMoves::stricter(HomeMigration a, HomeMigration b) {
  return permissiveness(a) <= permissiveness(b) ? a : b;
}

std::span<const HomeMoves::Move> HomeMoves::decide(std::uint64_t barrier, HomeMigration mode,
                                                   std::span<const std::int64_t> incoming,
                                                   std::span<const int> sizes,
                                                   std::span<const int> offsets,
                                                   const std::function<int(std::size_t)>& home_of) {
  moves_.clear();
  if (mode == HomeMigration::off) return {};
  // Each page's writers (a rank lists a page once per barrier).
  for (std::size_t writer = 0; writer < sizes.size(); ++writer) {
    const auto first = incoming.begin() + offsets[writer];
    for (auto it = first; it != first + sizes[writer]; ++it) {
      const std::size_t page = ReleaseNotice::page(*it);
      const bool movable = (*it & ReleaseNotice::writer_holds_copy) != 0 &&
                           (*it & ReleaseNotice::possibly_written) == 0;
      std::uint32_t& seen = writers_[page];
      if (seen == 0) {
        seen = static_cast<std::uint32_t>(writer + 1) | (movable ? kMovable : 0);
        noticed_.push_back(page);
      } else {
        seen = kSeveral;
      }
    }
  }
  for (std::size_t page : noticed_) {
    const std::uint32_t seen = writers_[page];
    writers_[page] = 0;
    if (seen == kSeveral || !(seen & kMovable)) continue;
    const int writer = static_cast<int>(seen & ~kMovable) - 1;
    const int home = home_of(page);
    if (home < 0 || home == writer) continue;
    if (mode == HomeMigration::adaptive) {
      const bool again = last_sole_[page] == sole(barrier - 1, writer);
      last_sole_[page] = sole(barrier, writer);
      if (!again) continue;
    }
    moves_.push_back({page, home, writer});
  }
  noticed_.clear();
  std::sort(moves_.begin(), moves_.end(),
            [](const Move& a, const Move& b) { return a.page < b.page; });
  return moves_;
}

bool HomeMoves::moving(std::size_t page) const {
  auto it = std::lower_bound(moves_.begin(), moves_.end(), page,
                             [](const Move& m, std::size_t p) { return m.page < p; });
  return it != moves_.end() && it->page == page;
}

void HomeMoves::forget(std::size_t first, std::size_t count) {
  moved_.reset(first, count);
  last_sole_.reset(first, count);
}

}  // namespace mpidsm::detail
