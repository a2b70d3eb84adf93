#include <gtest/gtest.h>

#include <map>
#include <string>

#include "mpidsm/config.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm {
namespace {

Config parse(const std::map<std::string, std::string>& env) {
  return Config::parse([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::string config_error(const std::map<std::string, std::string>& env) {
  try {
    parse(env);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::config);
    return e.what();
  }
  return "no error";
}

TEST(Config, DefaultsWhenNothingIsSet) {
  Config config = parse({});
  EXPECT_EQ(config.progress_thread, ProgressMode::automatic);
  EXPECT_EQ(config.rndv_threshold, 0u);
}

TEST(Config, ProgressThreadValues) {
  EXPECT_EQ(parse({{"MPIDSM_PROGRESS_THREAD", "on"}}).progress_thread, ProgressMode::on);
  EXPECT_EQ(parse({{"MPIDSM_PROGRESS_THREAD", "off"}}).progress_thread, ProgressMode::off);
  EXPECT_EQ(parse({{"MPIDSM_PROGRESS_THREAD", "auto"}}).progress_thread, ProgressMode::automatic);
  EXPECT_EQ(parse({{"MPIDSM_PROGRESS_THREAD", "1"}}).progress_thread, ProgressMode::on);
}

TEST(Config, BadValueNamesVariableValueAndWhatIsAllowed) {
  std::string what = config_error({{"MPIDSM_PROGRESS_THREAD", "maybe"}});
  EXPECT_NE(what.find("MPIDSM_PROGRESS_THREAD='maybe' is invalid"), std::string::npos) << what;
  EXPECT_NE(what.find("auto, on, off"), std::string::npos) << what;
}

TEST(Config, RendezvousThresholdSizes) {
  EXPECT_EQ(parse({{"MPIDSM_RNDV_THRESH", "auto"}}).rndv_threshold, 0u);
  EXPECT_EQ(parse({{"MPIDSM_RNDV_THRESH", "8192"}}).rndv_threshold, 8192u);
  EXPECT_EQ(parse({{"MPIDSM_RNDV_THRESH", "64K"}}).rndv_threshold, 65536u);
  EXPECT_EQ(parse({{"MPIDSM_RNDV_THRESH", "2M"}}).rndv_threshold, 2u << 20);
  EXPECT_NE(config_error({{"MPIDSM_RNDV_THRESH", "0"}}).find("above 0"), std::string::npos);
  EXPECT_NE(config_error({{"MPIDSM_RNDV_THRESH", "-4"}}).find("MPIDSM_RNDV_THRESH='-4'"),
            std::string::npos);
  EXPECT_NE(config_error({{"MPIDSM_RNDV_THRESH", "12Q"}}).find("optional K, M, G or T suffix"),
            std::string::npos);
  EXPECT_NE(config_error({{"MPIDSM_RNDV_THRESH", "99999999999999999999"}}).find("invalid"),
            std::string::npos);
  EXPECT_NE(config_error({{"MPIDSM_RNDV_THRESH", "17179869184G"}}).find("fits in 64 bits"),
            std::string::npos);
}

TEST(Config, HeapSizeAndDirectAccess) {
  EXPECT_EQ(parse({}).heap_size, std::size_t{128} << 20);
  EXPECT_EQ(parse({{"MPIDSM_HEAP_SIZE", "1G"}}).heap_size, std::size_t{1} << 30);
  EXPECT_EQ(parse({{"MPIDSM_DSM_SIZE", "16T"}}).dsm_size, std::size_t{16} << 40);
  EXPECT_NE(config_error({{"MPIDSM_HEAP_SIZE", "100"}}).find("at least 4K"), std::string::npos);
  EXPECT_TRUE(parse({}).direct_access);
  EXPECT_FALSE(parse({{"MPIDSM_DIRECT_ACCESS", "off"}}).direct_access);
  EXPECT_NE(config_error({{"MPIDSM_DIRECT_ACCESS", "never"}}).find("MPIDSM_DIRECT_ACCESS='never'"),
            std::string::npos);
}

TEST(Config, DsmCachePrefetchLocksAndStats) {
  const Config defaults = parse({});
  EXPECT_EQ(defaults.cache_pages, 16384u);
  EXPECT_EQ(defaults.prefetch_pages, 16u);
  EXPECT_EQ(defaults.max_checking_pages, 32u);
  EXPECT_EQ(defaults.dsm_locks, 16384u);
  EXPECT_FALSE(defaults.dsm_stats);
  EXPECT_TRUE(defaults.barrier_refetch);
  EXPECT_TRUE(defaults.adaptive_updates);
  EXPECT_TRUE(defaults.fetch_by_call);
  EXPECT_TRUE(defaults.put_by_call);
  EXPECT_FALSE(defaults.eager_connect);
  const Config set = parse({{"MPIDSM_CACHE_PAGES", "3"},
                            {"MPIDSM_PREFETCH_PAGES", "0"},
                            {"MPIDSM_MAX_CHECKING_PAGES", "64"},
                            {"MPIDSM_LOCKS", "100000"},
                            {"MPIDSM_STATS", "1"},
                            {"MPIDSM_BARRIER_REFETCH", "0"},
                            {"MPIDSM_ADAPTIVE_UPDATES", "0"},
                            {"MPIDSM_FETCH_BY_CALL", "0"},
                            {"MPIDSM_PUT_BY_CALL", "0"},
                            {"MPIDSM_EAGER_CONNECT", "1"}});
  EXPECT_EQ(set.cache_pages, 3u);
  EXPECT_EQ(set.prefetch_pages, 0u);
  EXPECT_EQ(set.max_checking_pages, 64u);
  EXPECT_EQ(set.dsm_locks, 100000u);
  EXPECT_TRUE(set.dsm_stats);
  EXPECT_FALSE(set.barrier_refetch);
  EXPECT_FALSE(set.adaptive_updates);
  EXPECT_FALSE(set.fetch_by_call);
  EXPECT_FALSE(set.put_by_call);
  EXPECT_TRUE(set.eager_connect);
  EXPECT_NE(config_error({{"MPIDSM_CACHE_PAGES", "0"}}).find("at least 1"), std::string::npos);
  EXPECT_NE(config_error({{"MPIDSM_PREFETCH_PAGES", "8K"}}).find("MPIDSM_PREFETCH_PAGES='8K'"),
            std::string::npos);
  EXPECT_NE(config_error({{"MPIDSM_LOCKS", "-1"}}).find("non-negative integer"), std::string::npos);
  // Beyond the cap: the cap is the reason given, not the form of the number.
  EXPECT_NE(config_error({{"MPIDSM_CACHE_PAGES", "2199023255552"}}).find("at most 2^40"),
            std::string::npos);
  EXPECT_NE(config_error({{"MPIDSM_STATS", "maybe"}}).find("0 or 1"), std::string::npos);
}

TEST(Config, DescribeListsEveryVariableWithItsEffectiveValue) {
  Config config = parse({{"MPIDSM_PROGRESS_THREAD", "off"}, {"MPIDSM_RNDV_THRESH", "4K"}});
  auto described = config.describe();
  ASSERT_EQ(described.size(), Config::variables().size());
  for (std::size_t i = 0; i < described.size(); ++i)
    EXPECT_EQ(described[i].first, Config::variables()[i].name);
  auto value_of = [&](const std::string& name) {
    for (const auto& [variable, value] : described)
      if (variable == name) return value;
    return std::string("(not described)");
  };
  EXPECT_EQ(value_of("MPIDSM_PROGRESS_THREAD"), "off");
  EXPECT_EQ(value_of("MPIDSM_RNDV_THRESH"), "4096");
  EXPECT_EQ(value_of("MPIDSM_YIELD_WHEN_IDLE"), "auto");
  EXPECT_EQ(value_of("MPIDSM_PROGRESS_SPIN_US"), "200");
  EXPECT_EQ(value_of("MPIDSM_PROGRESS_SLICE_US"), "100");
}

TEST(Config, YieldWhenIdleAndProgressSpin) {
  EXPECT_EQ(parse({}).yield_when_idle, YieldMode::automatic);
  EXPECT_EQ(parse({{"MPIDSM_YIELD_WHEN_IDLE", "on"}}).yield_when_idle, YieldMode::on);
  EXPECT_EQ(parse({{"MPIDSM_YIELD_WHEN_IDLE", "0"}}).yield_when_idle, YieldMode::off);
  std::string what = config_error({{"MPIDSM_YIELD_WHEN_IDLE", "sometimes"}});
  EXPECT_NE(what.find("MPIDSM_YIELD_WHEN_IDLE='sometimes' is invalid"), std::string::npos) << what;
  EXPECT_EQ(parse({{"MPIDSM_PROGRESS_SPIN_US", "0"}}).progress_spin_us, 0u);
  EXPECT_EQ(parse({{"MPIDSM_PROGRESS_SPIN_US", "50"}}).progress_spin_us, 50u);
  EXPECT_TRUE(parse({}).progress_in_mpi);
  EXPECT_FALSE(parse({{"MPIDSM_PROGRESS_IN_MPI", "0"}}).progress_in_mpi);
  EXPECT_NE(config_error({{"MPIDSM_PROGRESS_IN_MPI", "maybe"}}).find("MPIDSM_PROGRESS_IN_MPI"),
            std::string::npos);
  what = config_error({{"MPIDSM_PROGRESS_SPIN_US", "2000000"}});
  EXPECT_NE(what.find("MPIDSM_PROGRESS_SPIN_US='2000000' is invalid"), std::string::npos) << what;
  EXPECT_NE(config_error({{"MPIDSM_PROGRESS_SPIN_US", "-1"}}).find("MPIDSM_PROGRESS_SPIN_US"),
            std::string::npos);
}

TEST(Config, ProgressSlice) {
  EXPECT_EQ(parse({}).progress_slice_us, 100u);
  EXPECT_EQ(parse({{"MPIDSM_PROGRESS_SLICE_US", "0"}}).progress_slice_us, 0u);
  EXPECT_EQ(parse({{"MPIDSM_PROGRESS_SLICE_US", "100"}}).progress_slice_us, 100u);
  EXPECT_EQ(parse({{"MPIDSM_PROGRESS_SLICE_US", "100000"}}).progress_slice_us, 100000u);
  // Outside the kernel's range, which would clamp it silently.
  for (const char* bad : {"99", "100001", "-5", "fast"}) {
    const std::string what = config_error({{"MPIDSM_PROGRESS_SLICE_US", bad}});
    EXPECT_NE(what.find(std::string("MPIDSM_PROGRESS_SLICE_US='") + bad + "' is invalid"),
              std::string::npos)
        << what;
  }
}

TEST(Config, UnknownVariablesAreFound) {
  char known[] = "MPIDSM_PROGRESS_THREAD=on";
  char typo[] = "MPIDSM_PROGRES_THREAD=on";
  char other[] = "PATH=/bin";
  char* env[] = {known, typo, other, nullptr};
  auto unknown = Config::unknown_variables(env);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0], "MPIDSM_PROGRES_THREAD");
}

TEST(Config, HomeMigration) {
  EXPECT_EQ(parse({}).home_migration, HomeMigration::adaptive);
  EXPECT_EQ(parse({{"MPIDSM_HOME_MIGRATION", "off"}}).home_migration, HomeMigration::off);
  EXPECT_EQ(parse({{"MPIDSM_HOME_MIGRATION", "0"}}).home_migration, HomeMigration::off);
  EXPECT_EQ(parse({{"MPIDSM_HOME_MIGRATION", "on"}}).home_migration, HomeMigration::on);
  EXPECT_EQ(parse({{"MPIDSM_HOME_MIGRATION", "adaptive"}}).home_migration, HomeMigration::adaptive);
  EXPECT_NE(
      config_error({{"MPIDSM_HOME_MIGRATION", "always"}})
          .find("MPIDSM_HOME_MIGRATION='always' is invalid: expected one of off, adaptive, on"),
      std::string::npos);
  EXPECT_STREQ(to_string(HomeMigration::adaptive), "adaptive");
}

TEST(Config, Coherence) {
  EXPECT_EQ(parse({}).coherence, Coherence::adaptive);
  for (Coherence policy : {Coherence::adaptive, Coherence::invalidate, Coherence::update,
                           Coherence::read_mostly, Coherence::single_writer})
    EXPECT_EQ(parse({{"MPIDSM_COHERENCE", to_string(policy)}}).coherence, policy);
  EXPECT_STREQ(to_string(Coherence::single_writer), "single_writer");
  EXPECT_NE(config_error({{"MPIDSM_COHERENCE", "eager"}})
                .find("MPIDSM_COHERENCE='eager' is invalid: expected one of adaptive, invalidate, "
                      "update, read_mostly, single_writer"),
            std::string::npos);
}

TEST(Config, DiffKernel) {
  EXPECT_EQ(parse({}).diff_kernel, DiffKernel::automatic);
  for (DiffKernel kernel : {DiffKernel::automatic, DiffKernel::avx512, DiffKernel::avx2,
                            DiffKernel::neon, DiffKernel::words})
    EXPECT_EQ(parse({{"MPIDSM_DIFF_KERNEL", to_string(kernel)}}).diff_kernel, kernel);
  EXPECT_STREQ(to_string(DiffKernel::automatic), "auto");
  EXPECT_NE(config_error({{"MPIDSM_DIFF_KERNEL", "sse2"}})
                .find("MPIDSM_DIFF_KERNEL='sse2' is invalid: expected one of auto, avx512, avx2, "
                      "neon, words"),
            std::string::npos);
}

}  // namespace
}  // namespace mpidsm
