#ifndef BIOUNLOCK_HELPER_RUNTIME_H
#define BIOUNLOCK_HELPER_RUNTIME_H
/* Nothing to import from Swift: this target stands in for a part of the static Swift runtime
 * inside biounlock's helper programs (see argv.c). */
#endif
