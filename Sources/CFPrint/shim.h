// libfprint-2 (with GLib/GIO). Function-like macros such as FP_DEVICE_ERROR are not
// importable by Swift; callers use fp_device_error_quark() and friends.
#ifndef BIOUNLOCK_CFPRINT_SHIM_H
#define BIOUNLOCK_CFPRINT_SHIM_H
#include <fprint.h>
#endif
