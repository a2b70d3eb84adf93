// Typed tagged messaging: the channel for traffic that needs the receiver's
// CPU (requests, replies, control). One-sided data belongs in the PGAS face;
// a message here is matched by (source, tag) in UCX's tag matching, which RDMA
// NICs can offload, and large messages go zero-copy by rendezvous
// (MPIDSM_RNDV_THRESH). Messages from one source with one tag arrive in order.
#pragma once

#include "mpidsm/language.hpp"

#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "mpidsm/runtime.hpp"
#include "mpidsm/transport.hpp"

namespace mpidsm {

/// \addtogroup messaging
/// @{

/// A received message: source, tag and number of elements.
struct Received {
  /// The sender.
  int source = any_source;
  /// The message's tag.
  int tag = any_tag;
  /// Elements received.
  std::size_t count = 0;
};

/// Typed tagged send and receive between the ranks of a Runtime.
class Messaging {
 public:
  /// Messaging over `runtime` (not collective; the runtime must outlive it).
  explicit Messaging(Runtime& runtime) : transport_(runtime.transport()) {}

  /// Blocking: returns when `data` may be reused. Tags are 0..max_tag.
  template <class T>
  void send(int peer, int tag, std::span<const T> data) {
    static_assert(std::is_trivially_copyable_v<T>);
    transport_.send(peer, tag, data.data(), data.size_bytes());
  }
  /// The data must stay untouched until the request completes.
  template <class T>
  Request isend(int peer, int tag, std::span<const T> data) {
    static_assert(std::is_trivially_copyable_v<T>);
    return transport_.isend(peer, tag, data.data(), data.size_bytes());
  }
  /// source may be any_source, tag any_tag. A message longer than the buffer is
  /// an Errc::truncated error; one that is not a whole number of T an
  /// Errc::invalid_argument error.
  template <class T>
  Received recv(int source, int tag, std::span<T> buffer) {
    static_assert(std::is_trivially_copyable_v<T>);
    return count<T>(transport_.recv(source, tag, buffer.data(), buffer.size_bytes()));
  }
  /// Complete with wait(); then count<T>(request.message()) describes it.
  template <class T>
  Request irecv(int source, int tag, std::span<T> buffer) {
    static_assert(std::is_trivially_copyable_v<T>);
    return transport_.irecv(source, tag, buffer.data(), buffer.size_bytes());
  }
  /// Non-blocking: a matching message that has arrived, without receiving it.
  std::optional<MessageInfo> probe(int source, int tag) { return transport_.probe(source, tag); }

  /// Describes a message in elements of T.
  template <class T>
  Received count(const MessageInfo& info) const {
    if (info.size % sizeof(T) != 0)
      throw Error(Errc::invalid_argument, transport_.rank(),
                  "recv: message of " + std::to_string(info.size) + " bytes from rank " +
                      std::to_string(info.source) + " is not a whole number of " +
                      std::to_string(sizeof(T)) + "-byte elements");
    return {info.source, info.tag, info.size / sizeof(T)};
  }

 private:
  Transport& transport_;
};

/// @}

}  // namespace mpidsm
