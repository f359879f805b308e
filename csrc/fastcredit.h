/*
 * fastcredit.h - the C ABI of fastcredit.
 *
 * Credit assignment over sets of actions. Players are 0..m-1; a coalition is a
 * bitmask (bit i set iff player i is in it); a coalition table is an array of
 * 2^m values indexed by mask, and a batch of games is n_games tables stored
 * back to back (row-major, C-contiguous).
 *
 * Every function returns FC_OK (0) on success or a negative FC_E* code when an
 * argument is structurally invalid; it then writes nothing. Functions never
 * allocate on the heap unless documented, keep no global state and are safe to
 * call from several threads at once on disjoint outputs.
 *
 * Each kernel family has its own header, included here; link against the
 * objects compiled from the .c files of csrc/ (plain C99, no Python headers).
 */
#ifndef FASTCREDIT_H
#define FASTCREDIT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FC_OK 0
#define FC_EINVAL (-1)   /* an argument is out of range or inconsistent */
#define FC_ENOMEM (-2)   /* the kernel's workspace could not be allocated */

#define FC_MAX_TABLE_PLAYERS 30

/* The family headers are inside the extern "C" block too: every declaration
 * of the C ABI has C linkage when this header is included from C++. */
#include "rng.h"
#include "tables.h"
#include "interactions.h"
#include "audit.h"
#include "sampling.h"
#include "shaping.h"
#include "trees.h"
#include "auction.h"
#include "synthetic.h"
#include "approximators.h"

#ifdef __cplusplus
}
#endif

#endif
