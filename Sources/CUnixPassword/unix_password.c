#define _GNU_SOURCE
#include "unix_password.h"
#include <crypt.h>
#include <errno.h>
#include <shadow.h>
#include <stdlib.h>
#include <string.h>

enum { longest_password = 4096, largest_entry_buffer = 1 << 20 };

/* Compares two NUL-terminated strings in time that depends on their lengths only. */
static int same_text(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la != lb) return 0;
    unsigned char difference = 0;
    for (size_t i = 0; i < la; i++) difference |= (unsigned char)(a[i] ^ b[i]);
    return difference == 0;
}

int biounlock_unix_password_matches(const char *user, const unsigned char *password, size_t length) {
    if (user == NULL || password == NULL || length > longest_password) return -1;
    if (memchr(password, 0, length) != NULL) return -1;

    size_t size = 4096;
    char *buffer = NULL;
    struct spwd entry, *found = NULL;
    for (;;) {
        /* Not realloc: a buffer too small may already hold part of the entry (the hash), and
           realloc would free it unwiped. Each size gets a new buffer; the old one is wiped. */
        char *grown = malloc(size);
        if (buffer != NULL) { explicit_bzero(buffer, size / 2); free(buffer); }
        if (grown == NULL) return -1;
        buffer = grown;
        int rc = getspnam_r(user, &entry, buffer, size, &found);
        if (rc == ERANGE && size < largest_entry_buffer) { size *= 2; continue; }
        if (rc != 0) found = NULL;
        break;
    }
    int result = -1;
    const char *hash = found ? found->sp_pwdp : NULL;
    if (hash != NULL && hash[0] != 0 && hash[0] != '!' && hash[0] != '*') {
        char *typed = malloc(length + 1);
        struct crypt_data *work = calloc(1, sizeof *work);
        if (typed != NULL && work != NULL) {
            memcpy(typed, password, length);
            typed[length] = 0;
            const char *computed = crypt_r(typed, hash, work);
            /* crypt_r fails with NULL or a string starting with '*' (never a valid hash). */
            if (computed != NULL && computed[0] != '*') result = same_text(computed, hash) ? 1 : 0;
        }
        if (typed != NULL) { explicit_bzero(typed, length + 1); free(typed); }
        if (work != NULL) { explicit_bzero(work, sizeof *work); free(work); }
    }
    explicit_bzero(buffer, size);
    free(buffer);
    return result;
}
