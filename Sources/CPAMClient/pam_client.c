#include "pam_client.h"
#include <security/pam_appl.h>
#include <stdlib.h>
#include <string.h>

struct secret_answer {
    const unsigned char *bytes;
    size_t length;
    int prompts;
};

enum { maximum_hidden_prompts = 4 };

/* Frees what was built so far of a reply array (each answer wiped first). */
static void drop_replies(struct pam_response *replies, int count) {
    if (replies == NULL) return;
    for (int i = 0; i < count; i++) {
        if (replies[i].resp != NULL) {
            explicit_bzero(replies[i].resp, strlen(replies[i].resp));
            free(replies[i].resp);
        }
    }
    free(replies);
}

static int answer(int count, const struct pam_message **messages, struct pam_response **out, void *data) {
    struct secret_answer *secret = data;
    if (count <= 0 || count > PAM_MAX_NUM_MSG || messages == NULL || out == NULL || secret == NULL) return PAM_CONV_ERR;
    struct pam_response *replies = calloc((size_t)count, sizeof *replies);
    if (replies == NULL) return PAM_BUF_ERR;
    for (int i = 0; i < count; i++) {
        const struct pam_message *m = messages[i];
        if (m == NULL) { drop_replies(replies, count); return PAM_CONV_ERR; }
        switch (m->msg_style) {
        case PAM_PROMPT_ECHO_OFF:
            if (++secret->prompts > maximum_hidden_prompts) { drop_replies(replies, count); return PAM_CONV_ERR; }
            replies[i].resp = malloc(secret->length + 1);
            if (replies[i].resp == NULL) { drop_replies(replies, count); return PAM_BUF_ERR; }
            memcpy(replies[i].resp, secret->bytes, secret->length);
            replies[i].resp[secret->length] = '\0';
            break;
        case PAM_TEXT_INFO:
        case PAM_ERROR_MSG:
            break;
        default:
            /* A visible prompt asks for something other than the secret (a user name): no. */
            drop_replies(replies, count);
            return PAM_CONV_ERR;
        }
    }
    *out = replies;
    return PAM_SUCCESS;
}

int biounlock_pam_check(const char *service, const char *user, const char *confdir,
                        const unsigned char *secret, size_t length, struct biounlock_pam_result *result) {
    struct biounlock_pam_result r = { .start = -1, .authenticate = -1, .account = -1, .prompts = 0 };
    if (service == NULL || user == NULL || secret == NULL || memchr(secret, 0, length) != NULL) {
        if (result) *result = r;
        return 1;
    }
    struct secret_answer data = { .bytes = secret, .length = length, .prompts = 0 };
    struct pam_conv conversation = { .conv = answer, .appdata_ptr = &data };
    pam_handle_t *handle = NULL;
    r.start = confdir ? pam_start_confdir(service, user, &conversation, confdir, &handle)
                      : pam_start(service, user, &conversation, &handle);
    if (r.start != PAM_SUCCESS || handle == NULL) {
        if (result) *result = r;
        return 1;
    }
    int status = pam_set_item(handle, PAM_RUSER, user);
    if (status == PAM_SUCCESS) {
        r.authenticate = pam_authenticate(handle, PAM_SILENT | PAM_DISALLOW_NULL_AUTHTOK);
        if (r.authenticate == PAM_SUCCESS) r.account = pam_acct_mgmt(handle, PAM_SILENT);
        status = r.authenticate;
    }
    pam_end(handle, status);
    r.prompts = data.prompts;
    if (result) *result = r;
    return (r.authenticate == PAM_SUCCESS && r.account == PAM_SUCCESS) ? 0 : 1;
}

int biounlock_pam_success(void) { return PAM_SUCCESS; }
