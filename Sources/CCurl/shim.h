#ifndef SYNCR_CCURL_SHIM_H
#define SYNCR_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which
   Swift cannot call: one typed wrapper per argument type. */

typedef size_t (*syncr_data_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*syncr_xferinfo_callback)(void *clientp, curl_off_t dltotal, curl_off_t dlnow,
                                       curl_off_t ultotal, curl_off_t ulnow);
typedef int (*syncr_seek_callback)(void *userp, curl_off_t offset, int origin);
typedef int (*syncr_sockopt_callback)(void *clientp, int socket, int purpose);

static inline CURLcode syncr_easy_setopt_long(CURL *h, CURLoption o, long v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode syncr_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode syncr_easy_setopt_string(CURL *h, CURLoption o, const char *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode syncr_easy_setopt_pointer(CURL *h, CURLoption o, void *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode syncr_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode syncr_easy_setopt_mime(CURL *h, CURLoption o, curl_mime *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode syncr_easy_setopt_data_callback(CURL *h, CURLoption o, syncr_data_callback v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode syncr_easy_setopt_xferinfo_callback(CURL *h, syncr_xferinfo_callback v) {
    return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, v);
}
static inline CURLcode syncr_easy_setopt_seek_callback(CURL *h, syncr_seek_callback v) {
    return curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, v);
}

static inline CURLcode syncr_easy_getinfo_long(CURL *h, CURLINFO i, long *v) {
    return curl_easy_getinfo(h, i, v);
}
/* CURLOPT_SOCKOPTFUNCTION: told of every socket curl makes for the transfer, before it
   connects (return CURL_SOCKOPT_OK). */
static inline CURLcode syncr_easy_setopt_sockopt_callback(CURL *h, syncr_sockopt_callback v) {
    return curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, (curl_sockopt_callback)v);
}

static inline CURLcode syncr_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode syncr_easy_getinfo_string(CURL *h, CURLINFO i, char **v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode syncr_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v) {
    return curl_easy_getinfo(h, i, v);
}

static inline CURLMcode syncr_multi_setopt_long(CURLM *m, CURLMoption o, long v) {
    return curl_multi_setopt(m, o, v);
}

/* A PEM bundle for CURLOPT_CAINFO_BLOB, copied by curl (the caller may free it at once). */
static inline CURLcode syncr_easy_setopt_cainfo_blob(CURL *h, const void *data, size_t length) {
    struct curl_blob blob;
    blob.data = (void *)data;
    blob.len = length;
    blob.flags = CURL_BLOB_COPY;
    return curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
}

/* curl_url flags, which Swift does not import as macros with shifts. */
static inline unsigned int syncr_curlu_default_port(void) { return CURLU_DEFAULT_PORT; }
static inline unsigned int syncr_curlu_non_support_scheme(void) { return CURLU_NON_SUPPORT_SCHEME; }

/* CURLOPT_NETRC's "use ~/.netrc when the URL has no credentials". */
static inline long syncr_netrc_optional(void) { return CURL_NETRC_OPTIONAL; }

/* The loaded libcurl's version ("7.88.1"): CURLVERSION_NOW is a macro naming another constant,
   which Swift does not import. */
static inline const char *syncr_curl_version_number(void) {
    return curl_version_info(CURLVERSION_NOW)->version;
}

/* CURL_ZERO_TERMINATED is ((size_t) -1), which Swift does not import. */
static inline size_t syncr_zero_terminated(void) { return CURL_ZERO_TERMINATED; }

/* Return value of a write callback that aborts. */
static inline size_t syncr_writefunc_error(void) { return CURL_WRITEFUNC_ERROR; }

/* Return value of a write callback that pauses receiving: curl keeps the bytes it offered and
   offers them again after curl_easy_pause(handle, CURLPAUSE_CONT). */
static inline size_t syncr_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }

/* Resumes a paused transfer (a macro built of others, which Swift does not import). */
static inline CURLcode syncr_easy_unpause(CURL *handle) { return curl_easy_pause(handle, CURLPAUSE_CONT); }

/* Return value of a read callback that aborts the transfer (CURLE_ABORTED_BY_CALLBACK). */
static inline size_t syncr_readfunc_abort(void) { return CURL_READFUNC_ABORT; }

/* Return value of a read callback that has no bytes yet: curl pauses sending until
   curl_easy_pause(handle, CURLPAUSE_CONT), then asks again. */
static inline size_t syncr_readfunc_pause(void) { return CURL_READFUNC_PAUSE; }

/* Return values of a seek callback. */
static inline int syncr_seekfunc_ok(void) { return CURL_SEEKFUNC_OK; }
static inline int syncr_seekfunc_cantseek(void) { return CURL_SEEKFUNC_CANTSEEK; }
#endif
