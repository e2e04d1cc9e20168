#ifndef SYNCR_CCRYPTO_SHIM_H
#define SYNCR_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/crypto.h>

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
#endif
