/*
 * md5.h: the MD5 message digest (RFC 1321), incrementally, for the checksum
 * agent. MD5 is no protection against a deliberate forgery; the agent
 * checks files against accidental damage, as Triton's does.
 */
#ifndef TRITONHOST_REPOAGENTS_C_CHECKSUM_MD5_H
#define TRITONHOST_REPOAGENTS_C_CHECKSUM_MD5_H

#include <stddef.h>
#include <stdint.h>

struct md5 {
  uint32_t state[4];
  uint64_t length; /* bytes hashed so far */
  unsigned char block[64];
  size_t used; /* bytes waiting in block */
};

void md5_init(struct md5* m);
void md5_update(struct md5* m, const void* data, size_t len);
/* Writes the 16-byte digest into out. */
void md5_final(struct md5* m, unsigned char out[16]);

#endif /* TRITONHOST_REPOAGENTS_C_CHECKSUM_MD5_H */
