#ifndef SYNCR_CCRYPTO_SHIM_H
#define SYNCR_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#endif
