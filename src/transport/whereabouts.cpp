#include "whereabouts.hpp"

#include <time.h>

#include <atomic>
#include <cstring>
#include <map>
#include <vector>

namespace mpidsm::detail {
namespace {

// A peer may read the place while it changes: each word is written whole
// (atomic_ref), and a torn name only garbles one line of a report.
void store(std::uint64_t& word, std::uint64_t value) noexcept {
  std::atomic_ref<std::uint64_t>(word).store(value, std::memory_order_relaxed);
}

template <std::size_t N>
void copy_name(char (&to)[N], const char* name) noexcept {
  std::strncpy(to, name, N - 1);
  to[N - 1] = '\0';
}

template <std::size_t N>
std::string name_of(const char (&text)[N]) {
  return std::string(text, strnlen(text, N));
}

// "0-2, 5, 7-9".
std::string ranges(const std::vector<std::size_t>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    text += (text.empty() ? "" : ", ") + std::to_string(ranks[i]);
    if (j > i) text += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace

std::uint64_t wall_clock_ns() noexcept {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(now.tv_nsec);
}

void Whereabouts::entered_collective(const char* name) noexcept {
  if (!place_) return;
  copy_name(place_->last_collective, name);
  store(place_->collectives, place_->collectives + 1);
}

void Whereabouts::waiting(const char* call, std::uint64_t since_ns) noexcept {
  if (!place_) return;
  copy_name(place_->waiting_in, call);
  store(place_->waiting_since, since_ns);
}

void Whereabouts::stopped_waiting() noexcept {
  if (place_) store(place_->waiting_since, 0);
}

std::string Whereabouts::describe(std::span<const Place> places, std::span<const char> answered) {
  // Ranks grouped by what their line says, in the order of their first rank.
  std::map<std::string, std::vector<std::size_t>> groups;
  std::vector<std::string> order;
  for (std::size_t r = 0; r < places.size(); ++r) {
    const Place& p = places[r];
    std::string where;
    const std::string last = "(collective #" + std::to_string(p.collectives) +
                             (p.collectives ? ", " + name_of(p.last_collective) : "") + ")";
    if (!answered[r])
      where = "did not answer (its place could not be read)";
    else if (p.waiting_since == 0)
      where = "not waiting in mpidsm " + last;
    else
      where = "waiting in " + name_of(p.waiting_in) + " " + last;
    auto [group, added] = groups.try_emplace(where);
    if (added) order.push_back(where);
    group->second.push_back(r);
  }
  std::string text;
  for (const std::string& where : order) {
    const auto& ranks = groups[where];
    text +=
        "  rank" + std::string(ranks.size() > 1 ? "s " : " ") + ranges(ranks) + ": " + where + "\n";
  }
  return text;
}

}  // namespace mpidsm::detail
