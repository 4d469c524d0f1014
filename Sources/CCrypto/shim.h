#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
/* SHA256_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, whose one-shot
   SHA256() looks the algorithm up on every call: 4x the time for a 64-byte token. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <openssl/crypto.h>
#endif
