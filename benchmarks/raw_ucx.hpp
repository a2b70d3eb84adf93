// The one-sided benchmarks' third column (--ucx): the same pattern written
// directly against UCP, in a UCX context of the benchmark's own (the user's
// UCX_* settings apply to it as to mpidsm's), so a row shows how much of a
// gap to MPI is UCX's own and how much is mpidsm's.
//
// Each operation takes the primitive a hand-written UCX program would: a put
// is ucp_put_nbx and a get ucp_get_nbx, except a put of kLandingBytes or more
// to a peer whose puts UCX emulates with active messages (tcp), which is an
// active message sent by rendezvous and received in place, as mpidsm sends it
// (UCX 1.13 emulates a put there as one message and one acknowledgement per
// tcp segment, 8 KiB by default).
#pragma once

#include <mpi.h>
#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mpidsm::bench {

class RawUcx {
 public:
  static constexpr std::size_t kLandingBytes = 131072;

  // Collective over `comm`: a UCP context, worker and endpoints to every
  // rank, and `bytes` of page-aligned memory per rank registered for remote
  // access, all made before any rank measures. `puts_by_messages` is whether
  // puts to the peers travel as active messages (Transport::rma_through_messages).
  RawUcx(MPI_Comm comm, std::size_t bytes, bool puts_by_messages);
  ~RawUcx();
  RawUcx(const RawUcx&) = delete;
  RawUcx& operator=(const RawUcx&) = delete;

  // Starts moving `bytes` from `src` to offset 0 of `peer`'s memory.
  void put_nbi(int peer, const void* src, std::size_t bytes);
  // Starts moving `bytes` from offset 0 of `peer`'s memory to `dst`.
  void get_nbi(void* dst, int peer, std::size_t bytes);
  // Waits until every operation started to `peer` has completed there.
  void complete(int peer);
  // Collective: progresses this rank's worker until every rank has arrived,
  // for a target of emulated puts must progress for them to land.
  void barrier();
  // This rank's registered memory.
  std::byte* memory() const { return memory_; }

 private:
  static ucs_status_t on_landing(void* self, const void* header, std::size_t header_length,
                                 void* data, std::size_t length, const ucp_am_recv_param_t* param);
  void wait(void* request, const char* what);

  MPI_Comm comm_;
  std::size_t bytes_;
  bool puts_by_messages_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::byte* memory_ = nullptr;
  ucp_mem_h registration_ = nullptr;
  std::vector<ucp_ep_h> endpoints_;
  std::vector<ucp_rkey_h> rkeys_;
  std::vector<std::uint64_t> bases_;
  std::vector<void*> in_flight_;  // sends whose completion complete() waits for
};

}  // namespace mpidsm::bench
