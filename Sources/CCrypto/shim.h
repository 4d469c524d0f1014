#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
#include <openssl/sha.h>
#include <openssl/crypto.h>
#endif
