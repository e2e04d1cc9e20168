#ifndef SYNCR_CCRYPTO_SHIM_H
#define SYNCR_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/crypto.h>

/* The loaded libcrypto's version: the bare number where OpenSSL has one to give (3.0 and later). */
static inline const char *syncr_openssl_version(void) {
#ifdef OPENSSL_VERSION_STRING
    return OpenSSL_version(OPENSSL_VERSION_STRING);
#else
    return OpenSSL_version(OPENSSL_VERSION);
#endif
}
#endif
