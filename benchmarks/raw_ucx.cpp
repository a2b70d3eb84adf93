#include "raw_ucx.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace mpidsm::bench {
namespace {

constexpr unsigned kLandingId = 1;

// A failed UCX call ends the job with what failed: a benchmark has no
// caller to hand an error to.
[[noreturn]] void fail(const std::string& what, ucs_status_t status) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "raw UCX reference, rank %d: %s: %s\n", rank, what.c_str(),
               ucs_status_string(status));
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void check(ucs_status_t status, const char* what) {
  if (status != UCS_OK) fail(what, status);
}

// Every rank's `mine`, in rank order.
std::vector<std::vector<char>> all_gather(MPI_Comm comm, const void* mine, std::size_t length) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  const int own = static_cast<int>(length);
  std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(lengths.size());
  MPI_Allgather(&own, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm);
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::vector<char> joined(static_cast<std::size_t>(total));
  MPI_Allgatherv(mine, own, MPI_BYTE, joined.data(), lengths.data(), offsets.data(), MPI_BYTE,
                 comm);
  std::vector<std::vector<char>> out;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out.emplace_back(joined.begin() + offsets[r], joined.begin() + offsets[r] + lengths[r]);
  return out;
}

}  // namespace

RawUcx::RawUcx(MPI_Comm comm, std::size_t bytes, bool puts_by_messages)
    : comm_(comm), bytes_(bytes), puts_by_messages_(puts_by_messages) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  ucp_config_t* config = nullptr;
  check(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read");
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM;
  const ucs_status_t initialised = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  check(initialised, "ucp_init");
  ucp_worker_params_t worker{};
  worker.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker.thread_mode = UCS_THREAD_MODE_SINGLE;
  check(ucp_worker_create(context_, &worker, &worker_), "ucp_worker_create");

  ucp_am_handler_param_t handler{};
  handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                       UCP_AM_HANDLER_PARAM_FIELD_ARG;
  handler.id = kLandingId;
  handler.cb = &RawUcx::on_landing;
  handler.arg = this;
  check(ucp_worker_set_am_recv_handler(worker_, &handler), "ucp_worker_set_am_recv_handler");

  ucp_address_t* address = nullptr;
  std::size_t address_length = 0;
  check(ucp_worker_get_address(worker_, &address, &address_length), "ucp_worker_get_address");
  const auto addresses = all_gather(comm, address, address_length);
  ucp_worker_release_address(worker_, address);
  endpoints_.assign(static_cast<std::size_t>(size), nullptr);
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep.address =
        reinterpret_cast<const ucp_address_t*>(addresses[static_cast<std::size_t>(r)].data());
    check(ucp_ep_create(worker_, &ep, &endpoints_[static_cast<std::size_t>(r)]),
          ("ucp_ep_create to rank " + std::to_string(r)).c_str());
  }

  void* memory = nullptr;
  if (posix_memalign(&memory, 4096, bytes) != 0) fail("posix_memalign", UCS_ERR_NO_MEMORY);
  memory_ = static_cast<std::byte*>(memory);
  std::memset(memory_, 0, bytes);
  ucp_mem_map_params_t map{};
  map.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  map.address = memory_;
  map.length = bytes;
  check(ucp_mem_map(context_, &map, &registration_), "ucp_mem_map");
  void* packed = nullptr;
  std::size_t packed_length = 0;
  check(ucp_rkey_pack(context_, registration_, &packed, &packed_length), "ucp_rkey_pack");
  const auto keys = all_gather(comm, packed, packed_length);
  ucp_rkey_buffer_release(packed);
  const auto base = reinterpret_cast<std::uint64_t>(memory_);
  const auto all_bases = all_gather(comm, &base, sizeof base);
  rkeys_.assign(static_cast<std::size_t>(size), nullptr);
  bases_.assign(static_cast<std::size_t>(size), 0);
  for (int r = 0; r < size; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (r == rank) continue;
    check(ucp_ep_rkey_unpack(endpoints_[i], keys[i].data(), &rkeys_[i]), "ucp_ep_rkey_unpack");
    std::memcpy(&bases_[i], all_bases[i].data(), sizeof base);
  }
  barrier();  // every rank can now be reached
}

RawUcx::~RawUcx() {
  barrier();  // nothing is in flight to any rank
  for (ucp_rkey_h key : rkeys_)
    if (key) ucp_rkey_destroy(key);
  std::vector<void*> closing;
  for (ucp_ep_h ep : endpoints_) {
    if (!ep) continue;
    ucp_request_param_t close{};
    close.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    close.flags = 0;  // flush, then close
    if (void* request = ucp_ep_close_nbx(ep, &close)) closing.push_back(request);
  }
  for (void* request : closing) wait(request, "ucp_ep_close_nbx");
  barrier();  // peers progress until every rank has closed its endpoints
  ucp_mem_unmap(context_, registration_);
  std::free(memory_);
  ucp_worker_destroy(worker_);
  ucp_cleanup(context_);
}

ucs_status_t RawUcx::on_landing(void* self_pointer, const void*, std::size_t, void* data,
                                std::size_t length, const ucp_am_recv_param_t* param) {
  RawUcx& self = *static_cast<RawUcx*>(self_pointer);
  if (length > self.bytes_)
    fail("a message of " + std::to_string(length) + " bytes for " + std::to_string(self.bytes_) +
             " bytes of memory",
         UCS_ERR_MESSAGE_TRUNCATED);
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {  // UCX sent it eagerly after all
    std::memcpy(self.memory_, data, length);
    return UCS_OK;
  }
  ucp_request_param_t receive{};
  receive.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK;
  receive.cb.recv_am = [](void* request, ucs_status_t status, std::size_t, void*) {
    ucp_request_free(request);
    check(status, "receiving a rendezvous message in place");
  };
  ucs_status_ptr_t received =
      ucp_am_recv_data_nbx(self.worker_, data, self.memory_, length, &receive);
  if (UCS_PTR_IS_ERR(received)) fail("ucp_am_recv_data_nbx", UCS_PTR_STATUS(received));
  // The receive was started here, which releases UCX's descriptor.
  return UCS_INPROGRESS;
}

void RawUcx::put_nbi(int peer, const void* src, std::size_t bytes) {
  const auto i = static_cast<std::size_t>(peer);
  ucp_request_param_t params{};
  ucs_status_ptr_t started;
  if (puts_by_messages_ && bytes >= kLandingBytes) {
    params.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    params.flags = UCP_AM_SEND_FLAG_RNDV;
    started = ucp_am_send_nbx(endpoints_[i], kLandingId, nullptr, 0, src, bytes, &params);
  } else {
    started = ucp_put_nbx(endpoints_[i], src, bytes, bases_[i], rkeys_[i], &params);
  }
  if (UCS_PTR_IS_ERR(started))
    fail("a put of " + std::to_string(bytes) + " bytes to rank " + std::to_string(peer),
         UCS_PTR_STATUS(started));
  if (started) in_flight_.push_back(started);
}

void RawUcx::get_nbi(void* dst, int peer, std::size_t bytes) {
  const auto i = static_cast<std::size_t>(peer);
  ucp_request_param_t params{};
  ucs_status_ptr_t started = ucp_get_nbx(endpoints_[i], dst, bytes, bases_[i], rkeys_[i], &params);
  if (UCS_PTR_IS_ERR(started))
    fail("a get of " + std::to_string(bytes) + " bytes from rank " + std::to_string(peer),
         UCS_PTR_STATUS(started));
  if (started) in_flight_.push_back(started);
}

void RawUcx::complete(int peer) {
  for (void* request : in_flight_) wait(request, "an operation");
  in_flight_.clear();
  ucp_request_param_t params{};
  wait(ucp_ep_flush_nbx(endpoints_[static_cast<std::size_t>(peer)], &params), "ucp_ep_flush_nbx");
}

void RawUcx::barrier() {
  MPI_Request arrived;
  MPI_Ibarrier(comm_, &arrived);
  for (int done = 0; !done; MPI_Test(&arrived, &done, MPI_STATUS_IGNORE))
    ucp_worker_progress(worker_);
}

void RawUcx::wait(void* request, const char* what) {
  if (request == nullptr) return;
  if (UCS_PTR_IS_ERR(request)) fail(what, UCS_PTR_STATUS(request));
  ucs_status_t status;
  while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS)
    ucp_worker_progress(worker_);
  ucp_request_free(request);
  check(status, what);
}

}  // namespace mpidsm::bench
