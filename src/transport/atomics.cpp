// 32- and 64-bit remote atomics through ucp_atomic_op_nbx.
#include <ucp/api/ucp.h>

#include <cstring>

#include "transport_impl.hpp"

namespace mpidsm {
namespace {

ucp_atomic_op_t to_ucp(AtomicOp op) {
  switch (op) {
    case AtomicOp::add:
      return UCP_ATOMIC_OP_ADD;
    case AtomicOp::swap:
      return UCP_ATOMIC_OP_SWAP;
    case AtomicOp::compare_swap:
      return UCP_ATOMIC_OP_CSWAP;
    case AtomicOp::bit_and:
      return UCP_ATOMIC_OP_AND;
    case AtomicOp::bit_or:
      return UCP_ATOMIC_OP_OR;
    case AtomicOp::bit_xor:
      return UCP_ATOMIC_OP_XOR;
  }
  return UCP_ATOMIC_OP_LAST;
}

// A word of `width` bytes holding the low bytes of `value` (host byte order).
union Word {
  std::uint32_t u32;
  std::uint64_t u64;
};

Word make_word(std::size_t width, std::uint64_t value) {
  Word word{};
  if (width == 4)
    word.u32 = static_cast<std::uint32_t>(value);
  else
    word.u64 = value;
  return word;
}

std::uint64_t read_word(std::size_t width, const Word& word) {
  return width == 4 ? word.u32 : word.u64;
}

}  // namespace

const char* to_string(AtomicOp op) {
  switch (op) {
    case AtomicOp::add:
      return "add";
    case AtomicOp::swap:
      return "swap";
    case AtomicOp::compare_swap:
      return "compare_swap";
    case AtomicOp::bit_and:
      return "and";
    case AtomicOp::bit_or:
      return "or";
    case AtomicOp::bit_xor:
      return "xor";
  }
  return "?";
}

const detail::RemoteKey& Transport::Impl::atomic_target(const MemoryRegion& region, int peer,
                                                        std::size_t offset, std::size_t width,
                                                        const char* operation) {
  const auto& key = remote(region, peer, offset, width, operation);
  if ((key.base + offset) % width != 0)
    throw Error(Errc::invalid_argument, rank,
                std::string(operation) + " to rank " + std::to_string(peer) + ": offset " +
                    std::to_string(offset) + " is not aligned to the " + std::to_string(width) +
                    "-byte word");
  return key;
}

std::uint64_t Transport::Impl::native_fetch(AtomicOp op, int peer, const detail::RemoteKey& key,
                                            std::size_t offset, std::size_t width,
                                            std::uint64_t operand, std::uint64_t compare) {
  // compare_swap: UCX takes the comparand as the operand buffer and the new
  // value in the reply buffer, which then receives the old value.
  bool cswap = op == AtomicOp::compare_swap;
  Word buffer = make_word(width, cswap ? compare : operand);
  Word reply = make_word(width, cswap ? operand : 0);
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
  param.datatype = ucp_dt_make_contig(width);
  param.reply_buffer = &reply;
  traffic.note(width);
  wait(ucp_atomic_op_nbx(endpoints.get(peer), to_ucp(op), &buffer, 1, key.base + offset,
                         static_cast<ucp_rkey_h>(key.rkey), &param),
       to_string(op), peer);
  return read_word(width, reply);
}

std::uint64_t Transport::atomic_fetch_raw(AtomicOp op, int peer, const MemoryRegion& region,
                                          std::size_t offset, std::size_t width,
                                          std::uint64_t operand, std::uint64_t compare) {
  auto in_use = impl_->use_worker("atomic fetch");
  const auto& key = impl_->atomic_target(region, peer, offset, width, "atomic fetch");
  if (op != AtomicOp::bit_and && op != AtomicOp::bit_or && op != AtomicOp::bit_xor)
    return impl_->native_fetch(op, peer, key, offset, width, operand, compare);
  // UCX 1.13's fetching and/or/xor combine the old value with itself instead
  // of with the operand (seen on self, posix, sysv and tcp; the non-fetching
  // forms are right). A compare-and-swap loop gives the same exact semantics.
  const std::uint64_t mask = width == 4 ? 0xffffffffu : ~std::uint64_t{0};
  std::uint64_t expected = impl_->native_fetch(AtomicOp::add, peer, key, offset, width, 0, 0);
  for (;;) {
    std::uint64_t desired = op == AtomicOp::bit_and  ? expected & operand
                            : op == AtomicOp::bit_or ? expected | operand
                                                     : expected ^ operand;
    std::uint64_t seen = impl_->native_fetch(AtomicOp::compare_swap, peer, key, offset, width,
                                             desired & mask, expected);
    if (seen == expected) return expected;
    expected = seen;
  }
}

void Transport::atomic_post_raw(AtomicOp op, int peer, const MemoryRegion& region,
                                std::size_t offset, std::size_t width, std::uint64_t operand) {
  auto in_use = impl_->use_worker("atomic post");
  if (op == AtomicOp::swap || op == AtomicOp::compare_swap)
    throw Error(Errc::invalid_argument, rank_,
                std::string("atomic_post: ") + to_string(op) + " only exists as a fetching atomic");
  const auto& key = impl_->atomic_target(region, peer, offset, width, "atomic post");
  Word buffer = make_word(width, operand);
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
  param.datatype = ucp_dt_make_contig(width);
  impl_->traffic.note(width);
  // UCX may read the operand until the request completes, and the operand
  // lives on this stack: wait for local completion (immediate on shared
  // memory); remote completion is left to the next flush.
  impl_->wait(ucp_atomic_op_nbx(impl_->endpoints.get(peer), to_ucp(op), &buffer, 1,
                                key.base + offset, static_cast<ucp_rkey_h>(key.rkey), &param),
              to_string(op), peer);
  impl_->note_rma(peer);
}

}  // namespace mpidsm
