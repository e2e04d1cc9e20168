#ifndef SYNCR_CCRYPTO_SHIM_H
#define SYNCR_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/crypto.h>

/* Initialises libcrypto without its exit-time cleanup: a thread still inside OpenSSL while
   exit() runs the cleanup would find its locks freed (and crash in pthread_rwlock_rdlock). */
static inline int syncr_crypto_init_without_atexit(void) {
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}
#endif
