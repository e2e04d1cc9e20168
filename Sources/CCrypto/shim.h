#ifndef SYNCR_CCRYPTO_SHIM_H
#define SYNCR_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/opensslv.h>

/* Initialises libcrypto without its exit-time cleanup: a thread still inside OpenSSL while
   exit() runs the cleanup would find its locks freed (and crash in pthread_rwlock_rdlock). */
static inline int syncr_crypto_init_without_atexit(void) {
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

/* The loaded libcrypto's version: the bare number where OpenSSL has one to give (3.0 and later). */
static inline const char *syncr_openssl_version(void) {
#ifdef OPENSSL_VERSION_STRING
    return OpenSSL_version(OPENSSL_VERSION_STRING);
#else
    return OpenSSL_version(OPENSSL_VERSION);
#endif
}

/* The digest SHA-256 (sha256 != 0) or MD5, to be fetched once and kept for the process. Given the
   built-in EVP_sha256(), OpenSSL 3 looks the algorithm up in its providers again on every
   initialisation (about 3,600 instructions and a lock each, measured); a fetched one it does not
   look up. Before 3.0 there are no providers, and the built-in one is the only one. NULL only
   when the algorithm is missing from every provider. */
static inline const EVP_MD *syncr_fetch_md(int sha256) {
#if OPENSSL_VERSION_MAJOR >= 3
    EVP_MD *md = EVP_MD_fetch(NULL, sha256 ? "SHA256" : "MD5", NULL);
    if (md != NULL) return md;
#endif
    return sha256 ? EVP_sha256() : EVP_md5();
}

/* HMAC-SHA256 of data under key into out (32 bytes), with the one-shot HMAC(), which OpenSSL 3
   did not deprecate (HMAC_CTX it did); md is SHA-256 (syncr_fetch_md). Returns 1 on success. */
static inline int syncr_hmac_sha256(const EVP_MD *md, const void *key, int key_length,
                                    const unsigned char *data, size_t data_length, unsigned char *out) {
    unsigned int length = 0;
    return HMAC(md, key, key_length, data, data_length, out, &length) != NULL && length == 32;
}
#endif
