/* The static Swift runtime's command-line arguments, as the module has them: none.
 *
 * libswiftCore.a's CommandLine.cpp.o defines these two functions and, next to them, a global
 * object whose constructor finds the process's argv by reading /proc/self/maps (to locate the
 * stack) at load time -- in every process that loads the module: each sudo, su and login,
 * enrolled or not. A PAM module has no use for its host's arguments (nothing in it reads
 * CommandLine), so the module defines both functions itself: the linker then never takes that
 * object out of the archive, and its constructor is not in the module (LinkageTests checks).
 * One file opened and seven reads of /proc/self/maps fewer per fresh process: 30 to 84 us of
 * wall time (24 to 72 us of CPU) in four interleaved whole-process runs of 400 (`pam-loop
 * spawn`, docs/CONTRIBUTING.md "Measuring one change"). The signatures are the runtime's own
 * (SWIFT_CC(swift), as stdlib/public/stubs/CommandLine.cpp declares them); hidden, as the
 * version script would make them anyway. */
#include "module_runtime.h"
#include <stddef.h>

static char *no_arguments[] = { NULL };

__attribute__((swiftcall, visibility("hidden")))
char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    *outArgLen = 0;
    return no_arguments;
}

__attribute__((swiftcall, visibility("hidden")))
void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc) {
    (void)argv;
    (void)argc;
}
