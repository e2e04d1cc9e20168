#ifndef SYNCR_CCRYPTO_SHIM_H
#define SYNCR_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/hmac.h>

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

/* HMAC-SHA256 of data under key into out (32 bytes), with the one-shot HMAC(), which OpenSSL 3
   did not deprecate (HMAC_CTX it did). Returns 1 on success. */
static inline int syncr_hmac_sha256(const void *key, int key_length, const unsigned char *data,
                                    size_t data_length, unsigned char *out) {
    unsigned int length = 0;
    return HMAC(EVP_sha256(), key, key_length, data, data_length, out, &length) != NULL && length == 32;
}
#endif
