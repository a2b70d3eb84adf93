// mpidsm/mpidsm.hpp alone gives every face: the README's snippets include
// only it.
#include "mpidsm/mpidsm.hpp"

#include <gtest/gtest.h>

#include <type_traits>

namespace {

TEST(UmbrellaHeader, DeclaresEveryFace) {
  static_assert(std::is_class_v<mpidsm::Runtime>);
  static_assert(std::is_class_v<mpidsm::Pgas>);
  static_assert(std::is_class_v<mpidsm::Dsm>);
  static_assert(std::is_class_v<mpidsm::DsmMutex>);
  static_assert(std::is_class_v<mpidsm::Messaging>);
  static_assert(std::is_class_v<mpidsm::Transport>);
  const mpidsm::Placement placement = mpidsm::Placement::cyclic(2, 1);
  EXPECT_EQ(placement.pages_per_block, 2u);
  EXPECT_EQ(mpidsm::DsmStats{}.read_faults, 0u);
  EXPECT_STRNE(mpidsm::build::version, "");
}

}  // namespace
