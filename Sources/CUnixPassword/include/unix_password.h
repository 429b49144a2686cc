#ifndef BIOUNLOCK_UNIX_PASSWORD_H
#define BIOUNLOCK_UNIX_PASSWORD_H
#include <stddef.h>

/* biounlock-check's own check of the Unix password (issue 33, item 4): whether `length` bytes at
 * `password` are the password of `user` in the shadow file, as pam_unix checks it as root --
 * getspnam_r, then crypt_r with the stored hash as setting, compared in constant time.
 *   1   they are;
 *   0   they are not;
 *  -1   cannot tell: no shadow entry, an empty, locked ('!') or disabled ('*') hash, a hash
 *       crypt cannot use, text with a NUL byte or too long, or a resource error.
 * Everything copied is wiped before it is freed. Needs root (the shadow file). Linked into
 * biounlock-check only, never into the module. */
int biounlock_unix_password_matches(const char *user, const unsigned char *password, size_t length);

#endif
