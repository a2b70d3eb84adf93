/** \file
 * \ingroup c_api
 * C status codes of mpidsm. Every C entry point returns one of these; the C++
 * API throws mpidsm::Error, whose code maps one-to-one onto this list. */
#ifndef MPIDSM_STATUS_H
#define MPIDSM_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/** \addtogroup c_api
 * @{ */

/** What a C API call returned: MPIDSM_SUCCESS or the error's kind. */
typedef enum mpidsm_status {
  MPIDSM_SUCCESS = 0,                  /**< the call did what it says */
  MPIDSM_ERR_INVALID_ARGUMENT = -1,    /**< a null pointer, zero size, bad tag or operator */
  MPIDSM_ERR_OUT_OF_RANGE = -2,        /**< offset/size outside a region, or size overflow */
  MPIDSM_ERR_INVALID_RANK = -3,        /**< a rank outside the runtime's communicator */
  MPIDSM_ERR_NOT_INITIALIZED = -4,     /**< runtime used before creation or after finalize */
  MPIDSM_ERR_UNREGISTERED = -5,        /**< an address inside no registered region */
  MPIDSM_ERR_COLLECTIVE_MISMATCH = -6, /**< ranks passed different arguments to a collective */
  MPIDSM_ERR_TRUNCATED = -7,           /**< a receive buffer smaller than the message */
  MPIDSM_ERR_CONFIG = -8,              /**< a bad MPIDSM_* environment variable */
  MPIDSM_ERR_TRANSPORT = -9,           /**< UCX reported a failure */
  MPIDSM_ERR_MPI = -10,                /**< an MPI call failed or MPI is not initialised */
  MPIDSM_ERR_NO_MEMORY = -11,          /**< an allocation or registration could not be made */
  MPIDSM_ERR_INVALID_STATE = -12       /* an operation not allowed in the current state */
} mpidsm_status_t;                     /**< What a C API call returned. */

/** A static, human-readable name for a status code. */
const char* mpidsm_status_string(mpidsm_status_t status);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* MPIDSM_STATUS_H */
