/*
 * checksum.c: the "checksum" repository agent
 * (libtritonrepoagent_checksum.so) in plain C11, against tritonrepoagent.h.
 *
 * Before a model loads, the agent checks the digests its parameters list,
 * as Triton's checksum agent does: each parameter's key is
 * "<algorithm>:<file>", the file relative to the model's directory, and
 * its value the file's expected digest in hex. MD5 is the only algorithm
 * (in either case). A file whose digest differs, that cannot be read, or
 * a parameter that cannot be read, fails the load with a message naming
 * it, which the server reports as the model's reason:
 *
 *   model_repository_agents { agents [ { name: "checksum"
 *     parameters { key: "MD5:1/model.bin"
 *                  value: "d41d8cd98f00b204e9800998ecf8427e" } } ] }
 *
 * The file must be inside the model's directory: an absolute path, or one
 * with a ".." component, is refused. It must be a regular file once
 * symbolic links are followed: a named pipe, a device (a link to
 * /dev/zero) or a socket is refused without a byte read, and the agent
 * hashes no more than the size the file had when it was opened, and at
 * most CHECKSUM_MAX_FILE_BYTES, so that no file can make it read for
 * ever. Files are read in blocks, whatever their size. The agent keeps no
 * state, and has nothing to do for any action but LOAD.
 */
#define _POSIX_C_SOURCE 200809L /* strcasecmp */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "md5.h"
#include "triton/core/tritonrepoagent.h"

#define RETURN_IF_ERROR(X)           \
  do {                               \
    TRITONSERVER_Error* err__ = (X); \
    if (err__ != NULL)               \
      return err__;                  \
  } while (0)

/* errorf returns a new error of code with a formatted message. */
__attribute__((format(printf, 2, 3))) static TRITONSERVER_Error*
errorf(TRITONSERVER_Error_Code code, const char* fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return TRITONSERVER_ErrorNew(code, msg);
}

/* inside reports whether path is relative and never climbs out ("..") of
 * the directory it is relative to. */
static bool
inside(const char* path)
{
  if (path[0] == '\0' || path[0] == '/')
    return false;
  for (const char* p = path; *p != '\0';) {
    const char* end = strchr(p, '/');
    size_t n = end == NULL ? strlen(p) : (size_t)(end - p);
    if (n == 2 && p[0] == '.' && p[1] == '.')
      return false;
    p += n;
    while (*p == '/') p++;
  }
  return true;
}

/* CHECKSUM_MAX_FILE_BYTES is the largest file the agent hashes: 256 GiB,
 * more than any model file in use, and some minutes of hashing. */
#define CHECKSUM_MAX_FILE_BYTES ((off_t)256 << 30)

/* file_kind names the type of a file that is not a regular one. */
static const char*
file_kind(mode_t mode)
{
  if (S_ISFIFO(mode))
    return "a named pipe (FIFO)";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISDIR(mode))
    return "a directory";
  return "not a regular file";
}

/* not_regular refuses file, of mode, for not being a regular file. */
static TRITONSERVER_Error*
not_regular(const char* file, mode_t mode)
{
  return errorf(
      TRITONSERVER_ERROR_INVALID_ARG,
      "checksum of %s: it is %s, not a regular file; the agent reads only "
      "regular files",
      file, file_kind(mode));
}

/* md5_file writes the MD5 digest of dir/file, in lowercase hex, into hex.
 * The file must be a regular file (symbolic links followed): its type is
 * checked before it is opened (opening a device may act on it), and again
 * on the descriptor, opened without blocking (a named pipe put in its
 * place meanwhile opens at once rather than waiting for a writer). No more
 * than the size it had then is read: a file that grows as it is read, or
 * one that says it is empty and is not (/proc), cannot make the agent read
 * for ever; one that shrank fails. */
static TRITONSERVER_Error*
md5_file(const char* dir, const char* file, char hex[33])
{
  size_t len = strlen(dir) + 1 + strlen(file) + 1;
  char* path = malloc(len);
  if (path == NULL)
    return errorf(TRITONSERVER_ERROR_INTERNAL, "checksum: out of memory");
  snprintf(path, len, "%s/%s", dir, file);
  struct stat st;
  if (stat(path, &st) != 0) {
    int e = errno;
    free(path);
    return errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "failed to open text file for read %s: %s", file, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    free(path);
    return not_regular(file, st.st_mode);
  }
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  int open_errno = errno;
  free(path);
  if (fd < 0) {
    return errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "failed to open text file for read %s: %s", file, strerror(open_errno));
  }
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return errorf(
        TRITONSERVER_ERROR_INVALID_ARG, "failed to read %s: %s", file,
        strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return not_regular(file, st.st_mode);
  }
  if (st.st_size > CHECKSUM_MAX_FILE_BYTES) {
    close(fd);
    return errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "checksum of %s: it is %jd bytes, more than the %jd the agent hashes",
        file, (intmax_t)st.st_size, (intmax_t)CHECKSUM_MAX_FILE_BYTES);
  }
  struct md5 m;
  md5_init(&m);
  unsigned char buf[1 << 16];
  off_t left = st.st_size;
  while (left > 0) {
    size_t want = left < (off_t)sizeof buf ? (size_t)left : sizeof buf;
    ssize_t n = read(fd, buf, want);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      return errorf(
          TRITONSERVER_ERROR_INVALID_ARG, "failed to read %s: %s", file,
          strerror(e));
    }
    if (n == 0) {
      close(fd);
      return errorf(
          TRITONSERVER_ERROR_INVALID_ARG,
          "failed to read %s: it shrank as it was read", file);
    }
    md5_update(&m, buf, (size_t)n);
    left -= n;
  }
  close(fd);
  unsigned char digest[16];
  md5_final(&m, digest);
  for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
  return NULL;
}

/* check verifies one parameter, "<algorithm>:<file>" = digest, for the
 * model whose files are in dir. */
static TRITONSERVER_Error*
check(const char* dir, const char* key, const char* value)
{
  const char* colon = strchr(key, ':');
  if (colon == NULL)
    return errorf(
        TRITONSERVER_ERROR_INVALID_ARG, "failed to parse key: %s", key);
  size_t alen = (size_t)(colon - key);
  if (alen != 3 || strncasecmp(key, "md5", 3) != 0) {
    return errorf(
        TRITONSERVER_ERROR_UNSUPPORTED, "Unsupported checksum algorithm: %.*s",
        (int)alen, key);
  }
  const char* file = colon + 1;
  if (!inside(file)) {
    return errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "checksum of %s: the file must be a relative path inside the model's "
        "directory",
        file);
  }
  char hex[33];
  RETURN_IF_ERROR(md5_file(dir, file, hex));
  if (strcasecmp(hex, value) != 0) {
    return errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "Mismatched MD5 hash for file %s, expect: %s, got: %s", file, value,
        hex);
  }
  return NULL;
}

TRITONSERVER_Error*
TRITONREPOAGENT_Initialize(TRITONREPOAGENT_Agent* agent)
{
  (void)agent;
  uint32_t major = 0, minor = 0;
  RETURN_IF_ERROR(TRITONREPOAGENT_ApiVersion(&major, &minor));
  if (major != TRITONREPOAGENT_API_VERSION_MAJOR ||
      minor < TRITONREPOAGENT_API_VERSION_MINOR) {
    return errorf(
        TRITONSERVER_ERROR_UNSUPPORTED,
        "triton repository agent API version does not support this agent");
  }
  return NULL;
}

TRITONSERVER_Error*
TRITONREPOAGENT_ModelAction(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const TRITONREPOAGENT_ActionType action_type)
{
  if (action_type != TRITONREPOAGENT_ACTION_LOAD)
    return NULL;
  TRITONREPOAGENT_ArtifactType type;
  const char* location = NULL;
  RETURN_IF_ERROR(
      TRITONREPOAGENT_ModelRepositoryLocation(agent, model, &type, &location));
  if (type != TRITONREPOAGENT_ARTIFACT_FILESYSTEM) {
    return errorf(
        TRITONSERVER_ERROR_UNSUPPORTED, "Unsupported filesystem: %d",
        (int)type);
  }
  uint32_t count = 0;
  RETURN_IF_ERROR(TRITONREPOAGENT_ModelParameterCount(agent, model, &count));
  for (uint32_t i = 0; i < count; i++) {
    const char* key = NULL;
    const char* value = NULL;
    RETURN_IF_ERROR(
        TRITONREPOAGENT_ModelParameter(agent, model, i, &key, &value));
    RETURN_IF_ERROR(check(location, key, value));
  }
  return NULL;
}
