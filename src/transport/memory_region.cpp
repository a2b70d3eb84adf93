// Collective memory registration: map (or let UCX allocate) memory, pack its
// rkey, exchange base, size and rkey over MPI, unpack every peer's rkey and
// find out which peers' memory can be reached by plain loads and stores.
#include <ucp/api/ucp.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "common/mpi_exchange.hpp"
#include "transport_impl.hpp"

namespace mpidsm {
namespace {

// What each rank publishes about its part of a region.
struct RegionHeader {
  std::uint64_t base;
  std::uint64_t size;
};

// Why a handle that is not valid() cannot be used.
const char* unusable(const detail::RegionState* state) {
  return state ? "memory region used after deregistration"
               : "memory region handle is empty (never registered)";
}

std::string describe_range(std::size_t offset, std::size_t length) {
  return "offset " + std::to_string(offset) + " + size " + std::to_string(length);
}

}  // namespace

const detail::RegionState& MemoryRegion::checked() const {
  if (!valid())
    throw Error(Errc::unregistered, state_ ? state_->owner_rank : no_rank, unusable(state_));
  return *state_;
}

std::size_t MemoryRegion::size(int peer) const {
  const auto& state = checked();
  if (peer < 0 || peer >= static_cast<int>(state.peers.size()))
    throw Error(Errc::invalid_rank, state.owner_rank,
                "region size: rank " + std::to_string(peer) +
                    " is outside the communicator of size " + std::to_string(state.peers.size()));
  return state.peers[peer].size;
}

void* MemoryRegion::mapped(int peer) const {
  size(peer);  // validates handle and rank
  return state_->peers[peer].mapped;
}

bool MemoryRegion::all_mapped() const {
  for (const auto& key : checked().peers)
    if (!key.mapped) return false;
  return true;
}

const detail::RemoteKey& Transport::Impl::remote(const MemoryRegion& region, int peer,
                                                 std::size_t offset, std::size_t length,
                                                 const char* operation) {
  if (!region.valid())
    throw Error(Errc::unregistered, rank, std::string(operation) + ": " + unusable(region.state_));
  check_peer(peer, operation);
  if (length == 0)
    throw Error(Errc::invalid_argument, rank,
                std::string(operation) + " to rank " + std::to_string(peer) + ": size is 0");
  detail::RemoteKey& key = region.state_->peers[peer];
  if (offset > key.size || length > key.size - offset)
    throw Error(Errc::out_of_range, rank,
                std::string(operation) + " to rank " + std::to_string(peer) + ": " +
                    describe_range(offset, length) + " exceeds the region of " +
                    std::to_string(key.size) + " bytes there");
  unpack_on_first_use(key, peer);
  return key;
}

void Transport::Impl::unpack_on_use(detail::RemoteKey& key, int peer) {
  ucp_ep_h ep = endpoints.get(peer);
  std::lock_guard<std::mutex> guard(unpacking);
  std::atomic_ref<void*> unpacked(key.rkey);
  if (unpacked.load(std::memory_order_relaxed)) return;
  ucp_rkey_h rkey = nullptr;
  detail::check_ucx(rank, "ucp_ep_rkey_unpack", peer,
                    ucp_ep_rkey_unpack(ep, key.packed.data(), &rkey));
  std::vector<std::byte>().swap(key.packed);
  unpacked.store(rkey, std::memory_order_release);
}

MemoryRegion Transport::register_memory(void* base, std::size_t size) {
  auto in_use = impl_->use_worker_in_collective("register_memory");
  return impl_->map_region(base, size, false, false);
}

MemoryRegion Transport::allocate(std::size_t size, bool zeroed) {
  auto in_use = impl_->use_worker_in_collective("allocate");
  return impl_->map_region(nullptr, size, true, zeroed);
}

MemoryRegion Transport::Impl::map_region(void* base, std::size_t length, bool allocate, bool zeroed,
                                         bool peers_need_progress) {
  // Local part: validate, map, pack. Failures are agreed on before any exchange.
  std::optional<Error> failure;
  ucp_mem_h memh = nullptr;
  void* rkey_buffer = nullptr;
  std::size_t rkey_length = 0;
  RegionHeader header{};
  const std::string operation = allocate ? "allocate" : "register_memory";
  if (length == 0) {
    failure.emplace(Errc::invalid_argument, rank, operation + ": size is 0");
  } else if (!allocate && base == nullptr) {
    failure.emplace(Errc::invalid_argument, rank, operation + ": base address is null");
  } else {
    ucp_mem_map_params_t params{};
    params.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                        UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    params.address = base;
    params.length = length;
    params.flags = allocate ? UCP_MEM_MAP_ALLOCATE : 0;
    ucs_status_t status = ucp_mem_map(context, &params, &memh);
    if (status == UCS_OK) {
      ucp_mem_attr_t attr{};
      attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
      status = ucp_mem_query(memh, &attr);
      header = {reinterpret_cast<std::uint64_t>(attr.address), length};
      // Before the rkey leaves this rank, so no peer can read what was there.
      if (status == UCS_OK && zeroed) std::memset(attr.address, 0, length);
      if (status == UCS_OK) status = ucp_rkey_pack(context, memh, &rkey_buffer, &rkey_length);
    }
    if (status != UCS_OK) {
      failure.emplace(Errc::no_memory, rank,
                      operation + " of " + std::to_string(length) +
                          " bytes failed: " + ucs_status_string(status));
    }
  }
  try {
    detail::throw_if_any_failed(comm, rank, failure, operation);
  } catch (const Error&) {
    if (rkey_buffer) ucp_rkey_buffer_release(rkey_buffer);
    if (memh) ucp_mem_unmap(context, memh);
    throw;
  }

  std::vector<std::byte> mine(sizeof(RegionHeader) + rkey_length);
  std::memcpy(mine.data(), &header, sizeof header);
  std::memcpy(mine.data() + sizeof header, rkey_buffer, rkey_length);
  ucp_rkey_buffer_release(rkey_buffer);
  auto blobs = detail::allgather_blobs(comm, mine);

  detail::RegionState* state = nullptr;
  for (auto& slot : regions)
    if (slot.generation == 0) state = &slot;
  if (!state) state = &regions.emplace_back();
  state->owner_rank = rank;
  state->base = reinterpret_cast<void*>(header.base);
  state->size = length;
  state->memh = memh;
  state->peers.assign(size, {});
  bool every_peer_mapped = true;
  for (int peer = 0; peer < size; ++peer) {
    RegionHeader theirs;
    std::memcpy(&theirs, blobs[peer].data(), sizeof theirs);
    detail::RemoteKey& key = state->peers[peer];
    key.base = theirs.base;
    key.size = theirs.size;
    const std::byte* packed = blobs[peer].data() + sizeof theirs;
    if (!endpoints.connected(peer)) {  // unpacked on first use, with the endpoint
      key.packed.assign(packed, packed + (blobs[peer].size() - sizeof theirs));
      every_peer_mapped = false;
      continue;
    }
    ucp_rkey_h rkey = nullptr;
    detail::check_ucx(rank, "ucp_ep_rkey_unpack", peer,
                      ucp_ep_rkey_unpack(endpoints.get(peer), packed, &rkey));
    key.rkey = rkey;
    if (peer == rank) {
      key.mapped = state->base;
    } else if (ucp_rkey_ptr(rkey, theirs.base, &key.mapped) != UCS_OK) {
      key.mapped = nullptr;
      every_peer_mapped = false;
    }
  }
  state->generation = next_generation++;
  if (!every_peer_mapped && peers_need_progress) announce_unmappable_peer();
  return MemoryRegion(state, state->generation);
}

void Transport::deregister(MemoryRegion& region, std::function<void()> free_memory) {
  auto in_use = impl_->use_worker_in_collective("deregister");
  Impl& s = *impl_;
  int finalized = 0;
  MPI_Finalized(&finalized);
  // After MPI_Finalize, or once a peer's process is gone, nobody can be
  // waited for: release what is ours, the memory once no peer reaches it.
  bool agreed = false;
  if (!finalized && s.liveness.dead_peer() < 0) {
    try {
      // Agree first: a stale handle on one rank must not leave the others blocked.
      std::optional<Error> failure;
      if (!region.valid())
        failure.emplace(Errc::unregistered, rank_, "deregister: memory region is not registered");
      detail::throw_if_any_failed(s.comm, rank_, failure, "deregister");
      flush_all();
      s.barrier();  // every peer has completed its operations on the region
      agreed = true;
    } catch (const Error&) {
      // A peer died meanwhile: nobody is known to be done with the memory.
      // (Ranks that disagreed keep their region, as before the call.)
      if (s.lost.load(std::memory_order_relaxed)) {
        if (region.valid()) s.release_region(*region.state_, false, std::move(free_memory));
        region = MemoryRegion();
      }
      throw;
    }
  } else if (!finalized) {
    s.lose();  // the runtime is lost: nothing in flight writes here later
  }
  if (region.valid())
    s.release_region(*region.state_, agreed, std::move(free_memory));
  else if (free_memory)  // not registered here: no agreement was reached either
    s.free_after_workers.push_back(std::move(free_memory));
  region = MemoryRegion();
}

std::pair<MemoryRegion, std::size_t> Transport::locate(const void* address) const {
  auto at = reinterpret_cast<std::uintptr_t>(address);
  for (auto& state : impl_->regions) {
    if (state.generation == 0) continue;
    auto begin = reinterpret_cast<std::uintptr_t>(state.base);
    if (at >= begin && at - begin < state.size)
      return {MemoryRegion(const_cast<detail::RegionState*>(&state), state.generation), at - begin};
  }
  throw Error(Errc::unregistered, rank_,
              "address " + detail::describe_address(address) +
                  " is not inside any registered memory region");
}

}  // namespace mpidsm
