// The catalogue of bad inputs: one test per case, each with the error code
// and the key words its message must carry, and the runtime usable after it
// (every case ends with a put, a DSM barrier and a check). Cases marked
// collective are called by every rank alike.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/dsm.hpp"
#include "mpidsm/messaging.hpp"
#include "mpidsm/pgas.hpp"

namespace mpidsm {
namespace {

struct World {
  Runtime& runtime;
  Pgas& pgas;
  Dsm& dsm;
  SymmetricArray<std::uint64_t>& array;  // 16 words on every rank
  long* shared;                          // 1024 longs in the DSM, block placement
  int me, n, next;
};

struct Case {
  const char* name;
  std::function<void(World&)> call;
  Errc code;
  std::vector<std::string> words;  // each must appear in the message
  int min_ranks = 1;
};

const std::uint64_t kValues[16] = {};
std::uint64_t sink[16];

// A word of an allocation freed just now (collective, as every case is
// called by every rank): nothing will ever change it.
std::uint64_t* word_of_a_freed_allocation(World& w) {
  auto freed = w.pgas.allocate<std::uint64_t>(4);
  std::uint64_t* word = freed.local();
  w.pgas.free(freed);
  return word;
}

std::vector<Case> catalogue() {
  using U = std::uint64_t;
  const std::size_t wraps = (std::size_t{1} << 61) + 1;  // times 8 wraps to 8
  return {
      // --- PGAS: addresses, sizes, strides ----------------------------------
      {"PutPastTheEnd",
       [](World& w) { w.pgas.put(w.array.at(w.next, 16), kValues, 1); },
       Errc::out_of_range,
       {"bytes [128, 136)", "outside the 128-byte allocation"}},
      {"GetAcrossTheEnd",
       [](World& w) { w.pgas.get(sink, w.array.at(w.next, 10), 7); },
       Errc::out_of_range,
       {"outside"}},
      {"PutBeforeTheStart",
       [](World& w) { w.pgas.put(w.array.at(w.next) - 1, kValues, 1); },
       Errc::out_of_range,
       {"outside"}},
      {"PutToARankOutsideTheCommunicator",
       [](World& w) { w.pgas.put(w.array.at(w.n), kValues, 1); },
       Errc::invalid_rank,
       {"outside the communicator"}},
      {"PutThroughANullGlobalPointer",
       [](World& w) { w.pgas.put(global_ptr<U>(), kValues, 1); },
       Errc::invalid_argument,
       {"put", "global pointer is null"}},
      {"PutCountWrapsTheByteCount",
       [wraps](World& w) { w.pgas.put(w.array.at(w.next), kValues, wraps); },
       Errc::out_of_range,
       {"put", "overflow the address space"}},
      {"GetNbiCountWrapsTheByteCount",
       [wraps](World& w) { w.pgas.get_nbi(sink, w.array.at(w.next), wraps); },
       Errc::out_of_range,
       {"get_nbi", "overflow"}},
      {"IputRemoteStrideWraps",
       [](World& w) { w.pgas.iput(w.array.at(w.next), kValues, std::ptrdiff_t{1} << 61, 1, 1, 2); },
       Errc::out_of_range,
       {"iput", "remote stride"}},
      {"IgetLocalStrideWraps",
       [](World& w) { w.pgas.iget(sink, w.array.at(w.next), std::ptrdiff_t{1} << 61, 1, 1, 2); },
       Errc::out_of_range,
       {"iget", "local stride"}},
      {"IputStrideShorterThanTheBlock",
       [](World& w) { w.pgas.iput(w.array.at(w.next), kValues, 1, 1, 2, 2); },
       Errc::invalid_argument,
       {"must be at least the block length 2"}},
      {"PutFromANullSource",
       [](World& w) { w.pgas.put(w.array.at(w.next), static_cast<const U*>(nullptr), 1); },
       Errc::invalid_argument,
       {"put", "source buffer is null"}},
      {"GetIntoANullDestination",
       [](World& w) { w.pgas.get(static_cast<U*>(nullptr), w.array.at(w.next), 1); },
       Errc::invalid_argument,
       {"get", "destination buffer is null"}},
      {"MisalignedAtomic",
       [](World& w) {
         w.pgas.atomic_fetch_add((w.array.at(w.next).as<std::uint8_t>() + 4).as<U>(), U{1});
       },
       Errc::invalid_argument,
       {"byte 4 of the allocation is not aligned"}},
      {"WaitOnAWordOutsideTheHeap",
       [](World& w) {
         U on_stack = 0;
         w.pgas.wait_until(&on_stack, Compare::eq, U{0});
       },
       Errc::unregistered,
       {"wait_until", "symmetric heap"}},
      {"WaitOnAWordOfAFreedAllocation",
       [](World& w) { w.pgas.wait_until(word_of_a_freed_allocation(w), Compare::eq, U{0}); },
       Errc::unregistered,
       {"wait_until", "in no live allocation"}},
      {"TestOnAWordOfAFreedAllocation",
       [](World& w) { w.pgas.test(word_of_a_freed_allocation(w), Compare::eq, U{0}); },
       Errc::unregistered,
       {"test", "in no live allocation"}},
      {"WaitWithAnUnknownComparison",
       [](World& w) { w.pgas.wait_until(w.array.local(), static_cast<Compare>(99), U{0}); },
       Errc::invalid_argument,
       {"wait_until", "comparison 99"}},
      {"SignalWithAnUnknownOperation",
       [](World& w) {
         w.pgas.put_signal(w.array.at(w.next), kValues, 1, w.array.at(w.next, 15), U{1},
                           static_cast<SignalOp>(7));
       },
       Errc::invalid_argument,
       {"put_signal", "signal operation 7"}},
      {"SignalOnAnotherRankThanTheData",
       [](World& w) {
         w.pgas.put_signal(w.array.at(w.next), kValues, 1, w.array.at(w.me, 15), U{1},
                           SignalOp::set);
       },
       Errc::invalid_argument,
       {"signal word is on rank"},
       2},
      {"NullSignalWord",
       [](World& w) {
         w.pgas.put_signal(w.array.at(w.next), kValues, 1, global_ptr<U>(), U{1}, SignalOp::set);
       },
       Errc::invalid_argument,
       {"put_signal", "global pointer is null"}},
      // --- PGAS: collective allocation ---------------------------------------
      {"CollectiveAllocateZero",
       [](World& w) { w.pgas.allocate<U>(0); },
       Errc::invalid_argument,
       {"size is 0"}},
      {"CollectiveAllocateMoreThanTheHeap",
       [](World& w) { w.pgas.allocate<char>(w.pgas.heap_capacity() + 1); },
       Errc::no_memory,
       {"MPIDSM_HEAP_SIZE="}},
      {"CollectiveAllocateDifferentSizes",
       [](World& w) { w.pgas.allocate<char>(100 + static_cast<std::size_t>(w.me)); },
       Errc::collective_mismatch,
       {"ranks asked for different sizes"},
       2},
      {"CollectiveFreeOfAnEmptyArray",
       [](World& w) {
         SymmetricArray<U> never;
         w.pgas.free(never);
       },
       Errc::unregistered,
       {"never allocated"}},
      // --- DSM ----------------------------------------------------------------
      {"LockIdAtTheLimit",
       [](World& w) { w.dsm.lock(w.dsm.lock_count()); },
       Errc::out_of_range,
       {"is not below MPIDSM_LOCKS="}},
      {"UnlockOfALockNotHeld",
       [](World& w) { w.dsm.unlock(4); },
       Errc::invalid_state,
       {"lock 4 is not held by this rank"}},
      {"RecursiveLock",
       [](World& w) {
         w.dsm.lock(6);
         try {
           w.dsm.lock(6);
         } catch (...) {
           w.dsm.unlock(6);
           throw;
         }
       },
       Errc::invalid_state,
       {"already held by this thread", "not recursive"}},
      {"PrefetchOutsideTheRegion",
       [](World& w) { w.dsm.prefetch(static_cast<char*>(w.dsm.base()) + w.dsm.size(), 8); },
       Errc::out_of_range,
       {"Dsm::prefetch", "not inside the DSM region"}},
      {"PrefetchOfUnallocatedMemory",
       [](World& w) {
         char* end = static_cast<char*>(w.dsm.base()) + w.dsm.size() - 64;
         w.dsm.prefetch(end, 64);
       },
       Errc::unregistered,
       {"Dsm::prefetch", "reach unallocated DSM memory at"}},
      {"PrefetchPastTheEndOfAnAllocation",
       [](World& w) {
         auto* end = static_cast<char*>(w.dsm.base()) + w.dsm.size();
         w.dsm.prefetch(w.shared,
                        static_cast<std::size_t>(end - reinterpret_cast<char*>(w.shared)));
       },
       Errc::unregistered,
       {"Dsm::prefetch", "reach unallocated DSM memory at"}},
      {"MakeAccessibleOutsideTheRegion",
       [](World& w) { (void)w.dsm.make_accessible(sink, sizeof sink, Access::read); },
       Errc::out_of_range,
       {"Dsm::make_accessible", "not inside the DSM region"}},
      {"MakeAccessibleOfUnallocatedMemory",
       [](World& w) {
         char* end = static_cast<char*>(w.dsm.base()) + w.dsm.size() - 64;
         (void)w.dsm.make_accessible(end, 64, Access::read_write);
       },
       Errc::unregistered,
       {"unallocated DSM memory"}},
      {"HomeOfAnAddressOutsideTheRegion",
       [](World& w) { w.dsm.home_of(sink); },
       Errc::unregistered,
       {"outside the DSM region"}},
      {"HomeOfUnallocatedMemory",
       [](World& w) { w.dsm.home_of(static_cast<char*>(w.dsm.base()) + w.dsm.size() - 1); },
       Errc::unregistered,
       {"in no DSM allocation"}},
      {"CollectiveDsmFreeOfAnInteriorAddress",
       [](World& w) { w.dsm.free(w.shared + 1); },
       Errc::unregistered,
       {"is not the start of a DSM allocation"}},
      {"CollectiveDsmAllocateZero",
       [](World& w) { w.dsm.allocate<long>(0); },
       Errc::invalid_argument,
       {"size is 0"}},
      {"CollectiveDsmAllocateMoreThanTheRegion",
       [](World& w) { w.dsm.allocate<char>(w.dsm.size() + 4096); },
       Errc::no_memory,
       {"MPIDSM_DSM_SIZE="}},
      {"CollectiveDsmAllocateOnARankOutsideTheCommunicator",
       [](World& w) { w.dsm.allocate<long>(8, Placement::on(w.n)); },
       Errc::invalid_rank,
       {"home rank", "outside the communicator"}},
      {"CollectiveDsmCyclicBlocksOfZeroPages",
       [](World& w) { w.dsm.allocate<long>(8, Placement::cyclic(0)); },
       Errc::invalid_argument,
       {"cyclic block of 0 pages"}},
      {"DsmAllocateCountWraps",
       [wraps](World& w) { w.dsm.allocate<std::uint64_t>(wraps); },
       Errc::out_of_range,
       {"Dsm::allocate", "overflow the address space"}},
      // --- tagged messages ----------------------------------------------------
      {"SendWithATagAboveTheMaximum",
       [](World& w) { w.runtime.transport().send(w.next, max_tag + 1, kValues, 8); },
       Errc::invalid_argument,
       {"send", "is outside 0.."}},
      {"SendToARankOutsideTheCommunicator",
       [](World& w) { w.runtime.transport().send(w.n, 1, kValues, 8); },
       Errc::invalid_rank,
       {"send"}},
      {"ReceiveIntoANullBuffer",
       [](World& w) { w.runtime.transport().recv(w.next, 1, nullptr, 8); },
       Errc::invalid_argument,
       {"recv", "buffer is null but size is 8"}},
  };
}

class BadInput : public testing::WorldRuntimeTest<::testing::TestWithParam<std::size_t>> {
 protected:
  static void SetUpTestSuite() {
    WorldRuntimeTest::SetUpTestSuite();
    pgas_ = std::make_unique<Pgas>(*runtime_);
    dsm_ = std::make_unique<Dsm>(*runtime_);
    array_ = pgas_->allocate<std::uint64_t>(16);
    shared_ = dsm_->allocate<long>(1024);
  }
  static void TearDownTestSuite() {
    dsm_->free(shared_);
    pgas_->free(array_);
    dsm_.reset();
    pgas_.reset();
    WorldRuntimeTest::TearDownTestSuite();
  }
  static inline std::unique_ptr<Pgas> pgas_;
  static inline std::unique_ptr<Dsm> dsm_;
  static inline SymmetricArray<std::uint64_t> array_;
  static inline long* shared_ = nullptr;
};

TEST_P(BadInput, IsATypedErrorNamingWhatWasWrongAndLeavesTheRuntimeUsable) {
  const Case c = catalogue()[GetParam()];
  const int me = runtime_->rank(), n = runtime_->size();
  World w{*runtime_, *pgas_, *dsm_, array_, shared_, me, n, (me + 1) % n};
  if (n < c.min_ranks) GTEST_SKIP() << "needs " << c.min_ranks << " ranks";
  try {
    c.call(w);
    ADD_FAILURE() << c.name << ": expected mpidsm::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), c.code) << e.what();
    for (const std::string& word : c.words)
      EXPECT_NE(e.message().find(word), std::string::npos) << "'" << word << "' in " << e.what();
  }
  // Still usable: a put, a DSM write and a barrier.
  const std::uint64_t value = 1000 + static_cast<std::uint64_t>(me);
  pgas_->put(array_.at(w.next, 0), &value, 1);
  shared_[me] = me + 7;
  pgas_->barrier();
  dsm_->barrier();
  EXPECT_EQ(array_[0], 1000u + static_cast<std::uint64_t>((me + n - 1) % n));
  for (int r = 0; r < n; ++r) EXPECT_EQ(shared_[r], r + 7);
  dsm_->barrier();
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInput, ::testing::Range<std::size_t>(0, catalogue().size()),
                         [](const auto& info) {
                           return std::string(catalogue()[info.param].name);
                         });

}  // namespace
}  // namespace mpidsm
