#include "mpidsm/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace mpidsm {
namespace {

TEST(Error, MessageCarriesRankCodeAndText) {
  Error e(Errc::out_of_range, 3, "put to rank 1: offset 10 + size 4 exceeds the region");
  EXPECT_EQ(e.code(), Errc::out_of_range);
  EXPECT_EQ(e.rank(), 3);
  EXPECT_EQ(std::string(e.what()),
            "mpidsm[rank 3] out of range: put to rank 1: offset 10 + size 4 exceeds the region");
  EXPECT_EQ(e.message(), "put to rank 1: offset 10 + size 4 exceeds the region");
}

TEST(Error, WithoutRank) {
  Error e(Errc::config, no_rank, "bad");
  EXPECT_EQ(std::string(e.what()), "mpidsm configuration error: bad");
}

TEST(Error, EveryCodeMapsToADistinctNamedCStatus) {
  const Errc all[] = {Errc::invalid_argument, Errc::out_of_range,
                      Errc::invalid_rank,     Errc::not_initialized,
                      Errc::unregistered,     Errc::collective_mismatch,
                      Errc::truncated,        Errc::config,
                      Errc::transport,        Errc::mpi,
                      Errc::no_memory,        Errc::invalid_state};
  for (Errc a : all) {
    EXPECT_LT(to_status(a), MPIDSM_SUCCESS);
    EXPECT_STRNE(mpidsm_status_string(to_status(a)), "unknown status");
    for (Errc b : all) {
      if (a != b) {
        EXPECT_NE(to_status(a), to_status(b));
      }
    }
  }
  EXPECT_STREQ(mpidsm_status_string(MPIDSM_SUCCESS), "success");
}

}  // namespace
}  // namespace mpidsm

namespace mpidsm {
namespace {

TEST(ArrayBytes, MultipliesOrNamesTheOverflow) {
  EXPECT_EQ(array_bytes(10, 8, 0, "allocate"), 80u);
  EXPECT_EQ(array_bytes(0, 8, 0, "allocate"), 0u);
  try {
    array_bytes(~std::size_t{0} / 2, 4, 3, "Dsm::allocate");
    ADD_FAILURE() << "overflow not detected";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::out_of_range);
    EXPECT_EQ(e.rank(), 3);
    EXPECT_NE(std::string(e.what()).find("Dsm::allocate: 9223372036854775807 elements of 4 bytes"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mpidsm
