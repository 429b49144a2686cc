#ifndef BIOUNLOCK_CSODIUM_SHIM_H
#define BIOUNLOCK_CSODIUM_SHIM_H
#include <sodium.h>
#endif
