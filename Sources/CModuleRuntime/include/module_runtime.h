#ifndef BIOUNLOCK_MODULE_RUNTIME_H
#define BIOUNLOCK_MODULE_RUNTIME_H
/* Nothing to import from Swift: this target only stands in for a part of the static Swift
 * runtime inside pam_biounlock.so (see argv.c). */
#endif
